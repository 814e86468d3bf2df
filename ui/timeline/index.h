// The timeline's view of the event store: tracks (what the timeline draws
// as one collapsible lane) made of rows, each row a start-sorted list of
// event ids with a running maximum of their ends (the "end index"), so the
// events of a row that overlap a time range are found by two binary
// searches, never by walking the lane.
//
// Tracks: a CPU thread (rows = nesting depth: annotations, ops, runtime
// calls), its Python frames (with_stack; a track of their own so that
// the ops stay compact), its instant events (memory, markers), each GPU stream (kernels,
// copies, memsets, sync records), the stream's GPU user-annotation spans,
// the profiler's overhead events (one track for all), and "other" lanes
// (Kineto's Spans/Traces). Every event of the store is in exactly one row.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/store/event_store.h"

namespace attnscope::ui {

enum class TrackKind : uint8_t { Cpu, Python, Instants, Gpu, GpuAnnotations, Overhead, Other };

// In spill vectors: a huge trace's rows live in files while the loader spills (spill.h).
struct TrackRow {
  spill::Vector<EventId> ids;     // sorted by start
  spill::Vector<int64_t> maxEnd;  // maxEnd[i] = max end of ids[0..i]; non-decreasing
};

struct Track {
  TrackKind kind = TrackKind::Other;
  uint32_t storeLane = 0;
  std::string label;
  std::vector<TrackRow> rows;
  uint64_t eventCount = 0;
};

// The name a track's header shows, its distinct part first (a thread's id before its process, a
// secondary track's kind before its lane): "thread 1489 · python3 (1489)", "Python stack · thread
// 1489 · python3 (1489)", "annotations · GPU 0 / stream 7". Cut at the end, they stay distinct.
std::string trackTitle(const Track& t);

class TimelineIndex {
 public:
  TimelineIndex() = default;
  explicit TimelineIndex(const EventStore& store);

  const EventStore* store() const { return store_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  uint32_t trackOf(EventId id) const { return place_[id] >> 16; }
  uint32_t rowOf(EventId id) const { return place_[id] & 0xffffu; }

  // Indexes [first, last) into row.ids of the events overlapping [t0, t1)
  // (an instant at t counts when t0 <= t < t1).
  std::pair<size_t, size_t> visible(const TrackRow& row, int64_t t0, int64_t t1) const;
  // The first index in [from, to) whose event starts at or after t (`to`
  // if none); `hint` is a guess of it that makes the search shorter.
  size_t firstStartingAt(const TrackRow& row, size_t from, size_t to, int64_t t, size_t hint = 0) const;

  // Bytes held by the index (not the store).
  size_t memoryBytes() const;

 private:
  const EventStore* store_ = nullptr;
  std::vector<Track> tracks_;
  spill::Vector<uint32_t> place_;  // per event: track << 16 | row
};

const char* trackKindName(TrackKind k);

}  // namespace attnscope::ui
