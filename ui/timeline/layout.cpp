#include "ui/timeline/layout.h"

#include <algorithm>

namespace attnscope::ui {

void TimelineLayout::reset(const TimelineIndex& index) {
  const auto n = static_cast<uint32_t>(index.tracks().size());
  order_.resize(n);
  for (uint32_t i = 0; i < n; ++i) order_[i] = i;
  collapsed_.assign(n, false);
  // Python stacks start collapsed (their top frame shows): the ops matter first.
  for (uint32_t i = 0; i < n; ++i) collapsed_[i] = index.tracks()[i].kind == TrackKind::Python;
  relayout(index);
}

void TimelineLayout::relayout(const TimelineIndex& index) {
  const auto& tracks = index.tracks();
  const size_t n = tracks.size();
  top_.assign(n, 0);
  height_.assign(n, 0);
  firstSlot_.assign(n, 0);
  rowCount_.assign(n, 0);
  slots_.clear();
  int y = 0;
  for (uint32_t t : order_) {
    top_[t] = y;
    y += kTitleHeight;
    firstSlot_[t] = static_cast<int>(slots_.size());
    const auto rows = static_cast<uint32_t>(tracks[t].rows.size());
    const uint32_t shown = collapsed_[t] ? std::min<uint32_t>(rows, 1) : rows;
    for (uint32_t r = 0; r < shown; ++r) {
      slots_.push_back({t, r, y, kRowHeight});
      y += kRowHeight;
    }
    rowCount_[t] = static_cast<int>(shown);
    y += kTrackGap;
    height_[t] = y - top_[t];
  }
  total_ = y;
  ++version_;
}

void TimelineLayout::moveTrack(uint32_t track, int toPosition) {
  const int from = positionOf(track);
  if (from < 0) return;
  order_.erase(order_.begin() + from);
  toPosition = std::clamp(toPosition, 0, static_cast<int>(order_.size()));
  order_.insert(order_.begin() + toPosition, track);
}

bool TimelineLayout::fitFirstGpu(const TimelineIndex& index, int height) {
  const auto& tracks = index.tracks();
  int gpu = -1, cpu = -1;
  for (uint32_t t : order_) {
    if (tracks[t].kind == TrackKind::Cpu && cpu < 0) cpu = static_cast<int>(t);
    if (tracks[t].kind == TrackKind::Gpu) {
      gpu = static_cast<int>(t);
      break;
    }
  }
  if (gpu < 0) return false;
  const auto g = static_cast<uint32_t>(gpu);
  auto fits = [&] { return top_[g] + height_[g] <= height; };
  if (fits()) return false;
  for (uint32_t t : order_) {
    if (t == g) break;
    if (static_cast<int>(t) == cpu || collapsed_[t] || tracks[t].rows.size() < 2) continue;
    collapsed_[t] = true;
    relayout(index);
    if (fits()) return true;
  }
  if (cpu >= 0) {
    moveTrack(g, positionOf(static_cast<uint32_t>(cpu)) + 1);
    relayout(index);
  }
  return true;
}

int TimelineLayout::positionOf(uint32_t track) const {
  const auto it = std::find(order_.begin(), order_.end(), track);
  return it == order_.end() ? -1 : static_cast<int>(it - order_.begin());
}

int TimelineLayout::rowY(uint32_t track, uint32_t row) const {
  if (track >= rowCount_.size() || rowCount_[track] == 0) return -1;
  const int r = std::min<int>(static_cast<int>(row), rowCount_[track] - 1);
  return slots_[static_cast<size_t>(firstSlot_[track] + r)].y;
}

const RowSlot* TimelineLayout::slotAt(int y) const {
  auto it = std::upper_bound(slots_.begin(), slots_.end(), y, [](int v, const RowSlot& s) { return v < s.y; });
  if (it == slots_.begin()) return nullptr;
  --it;
  return y < it->y + it->h ? &*it : nullptr;
}

int TimelineLayout::trackAt(int y) const {
  for (uint32_t t : order_) {
    if (y >= top_[t] && y < top_[t] + height_[t]) return static_cast<int>(t);
  }
  return -1;
}

}  // namespace attnscope::ui
