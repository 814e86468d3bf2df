// Vertical layout of the timeline: the order of the tracks (reorderable),
// which are collapsed (a collapsed track shows its top row only), and the
// y position of every row, in content coordinates (0 = top of the first
// track, below the ruler).
#pragma once

#include <cstdint>
#include <vector>

#include "ui/timeline/index.h"

namespace attnscope::ui {

struct RowSlot {
  uint32_t track = 0;
  uint32_t row = 0;
  int y = 0;
  int h = 0;
};

class TimelineLayout {
 public:
  static constexpr int kRowHeight = 18;
  static constexpr int kTitleHeight = 0;  // names are drawn in the header column, beside the rows
  static constexpr int kTrackGap = 4;

  void reset(const TimelineIndex& index);  // default order, nothing collapsed
  void relayout(const TimelineIndex& index);

  const std::vector<uint32_t>& order() const { return order_; }
  void moveTrack(uint32_t track, int toPosition);  // position in order()
  // So that the first GPU stream's lane ends within `height` px: collapses the tracks above it other
  // than the first CPU thread's (Python stacks, instants, other threads, annotations), then, when
  // that is not enough, moves the stream up under the first thread. False when nothing changed.
  bool fitFirstGpu(const TimelineIndex& index, int height);
  int positionOf(uint32_t track) const;
  bool collapsed(uint32_t track) const { return collapsed_[track]; }
  void setCollapsed(uint32_t track, bool on) { collapsed_[track] = on; }

  const std::vector<RowSlot>& rowSlots() const { return slots_; }  // by y
  int trackTop(uint32_t track) const { return top_[track]; }
  int trackHeight(uint32_t track) const { return height_[track]; }
  int totalHeight() const { return total_; }
  // y of a row's box (the top row when the track is collapsed); -1 if none.
  int rowY(uint32_t track, uint32_t row) const;
  // The slot at content y, or nullptr; the track whose title or rows hold y.
  const RowSlot* slotAt(int y) const;
  int trackAt(int y) const;  // -1 when none
  // Changes whenever the layout does (geometry cache key).
  uint64_t version() const { return version_; }

 private:
  std::vector<uint32_t> order_;
  std::vector<bool> collapsed_;
  std::vector<RowSlot> slots_;
  std::vector<int> top_, height_, firstSlot_, rowCount_;
  int total_ = 0;
  uint64_t version_ = 0;
};

}  // namespace attnscope::ui
