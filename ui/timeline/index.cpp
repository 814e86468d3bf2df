#include "ui/timeline/index.h"

#include <algorithm>

namespace attnscope::ui {
namespace {

constexpr size_t kMaxGreedyRows = 64;

void append(TrackRow& row, const EventStore& s, EventId id) {
  const int64_t end = s.event(id).end();
  row.maxEnd.push_back(row.maxEnd.empty() ? end : std::max(row.maxEnd.back(), end));
  row.ids.push_back(id);
}

// Start-sorted events that may overlap, packed into the first row whose
// last event has ended (capped: the last row takes the rest).
class GreedyRows {
 public:
  void add(Track& t, const EventStore& s, EventId id) {
    const Event& e = s.event(id);
    size_t r = 0;
    while (r < lastEnd_.size() && lastEnd_[r] > e.start && r + 1 < kMaxGreedyRows) ++r;
    if (r == lastEnd_.size()) {
      lastEnd_.push_back(e.end());
      t.rows.emplace_back();
    } else {
      lastEnd_[r] = std::max(lastEnd_[r], e.end());
    }
    append(t.rows[r], s, id);
    t.eventCount++;
  }

 private:
  std::vector<int64_t> lastEnd_;
};

std::string threadLabel(const Lane& l) { return l.label.empty() ? std::string("thread") : l.label; }

}  // namespace

const char* trackKindName(TrackKind k) {
  switch (k) {
    case TrackKind::Cpu:
      return "cpu";
    case TrackKind::Python:
      return "python";
    case TrackKind::Instants:
      return "instants";
    case TrackKind::Gpu:
      return "gpu";
    case TrackKind::GpuAnnotations:
      return "gpu_annotations";
    case TrackKind::Overhead:
      return "overhead";
    case TrackKind::Other:
      return "other";
  }
  return "other";
}

std::string trackTitle(const Track& t) {
  std::string base = t.label, kind;
  if (t.kind == TrackKind::Python || t.kind == TrackKind::Instants || t.kind == TrackKind::GpuAnnotations) {
    const size_t dot = base.rfind(" · ");
    if (dot != std::string::npos) {
      kind = base.substr(dot + std::string_view(" · ").size());
      base.resize(dot);
    }
  }
  const bool thread = t.kind == TrackKind::Cpu || t.kind == TrackKind::Python || t.kind == TrackKind::Instants;
  if (const size_t slash = base.find(" / "); thread && slash != std::string::npos)
    base = base.substr(slash + 3) + " · " + base.substr(0, slash);
  return kind.empty() ? base : kind + " · " + base;
}

TimelineIndex::TimelineIndex(const EventStore& s) : store_(&s), place_(s.events().size(), 0) {
  std::vector<Track> cpu, gpu, other;
  Track overhead;
  overhead.kind = TrackKind::Overhead;
  overhead.label = "Profiler overhead";
  std::vector<EventId> overheadIds;

  for (uint32_t ln = 0; ln < s.lanes().size(); ++ln) {
    const Lane& lane = s.lanes()[ln];
    if (lane.kind == LaneKind::CpuThread) {
      Track main{TrackKind::Cpu, ln, threadLabel(lane), {}, 0};
      Track py{TrackKind::Python, ln, threadLabel(lane) + " · Python stack", {}, 0};
      Track inst{TrackKind::Instants, ln, threadLabel(lane) + " · instants", {}, 0};
      GreedyRows instRows;
      // Rows: ops and runtime calls by their depth among non-Python
      // ancestors; Python frames (with_stack) by theirs, on a track of their own.
      std::vector<uint16_t> opRow(lane.end - lane.begin, 0), pyRow(lane.end - lane.begin, 0);
      for (EventId id = lane.begin; id < lane.end; ++id) {
        const Event& e = s.event(id);
        const size_t k = id - lane.begin;
        if (e.parent != kNoEvent && e.parent >= lane.begin && e.parent < id) {
          const size_t pk = e.parent - lane.begin;
          const bool pyParent = s.event(e.parent).family == Family::PythonFunction;
          opRow[k] = static_cast<uint16_t>(opRow[pk] + (pyParent ? 0 : 1));
          pyRow[k] = static_cast<uint16_t>(pyRow[pk] + (pyParent ? 1 : 0));
        }
        if (e.family == Family::Overhead) {
          overheadIds.push_back(id);
        } else if (e.family == Family::Memory || e.family == Family::CpuInstant) {
          instRows.add(inst, s, id);
        } else {
          const bool python = e.family == Family::PythonFunction;
          Track& t = python ? py : main;
          const uint16_t r = python ? pyRow[k] : opRow[k];
          if (t.rows.size() <= r) t.rows.resize(r + 1u);
          append(t.rows[r], s, id);
          t.eventCount++;
        }
      }
      if (main.eventCount) cpu.push_back(std::move(main));
      if (py.eventCount) cpu.push_back(std::move(py));
      if (inst.eventCount) cpu.push_back(std::move(inst));
    } else if (lane.kind == LaneKind::GpuStream) {
      Track ann{TrackKind::GpuAnnotations, ln, lane.label + " · annotations", {}, 0};
      Track work{TrackKind::Gpu, ln, lane.label, {}, 0};
      GreedyRows annRows, workRows;
      for (EventId id = lane.begin; id < lane.end; ++id) {
        const Event& e = s.event(id);
        if (e.family == Family::Overhead)
          overheadIds.push_back(id);
        else if (e.family == Family::GpuUserAnnotation)
          annRows.add(ann, s, id);
        else
          workRows.add(work, s, id);
      }
      if (ann.eventCount) gpu.push_back(std::move(ann));
      if (work.eventCount) gpu.push_back(std::move(work));
    } else {
      Track t{TrackKind::Other, ln, lane.label, {}, 0};
      GreedyRows rows;
      for (EventId id = lane.begin; id < lane.end; ++id) {
        if (s.event(id).family == Family::Overhead)
          overheadIds.push_back(id);
        else
          rows.add(t, s, id);
      }
      if (t.eventCount) other.push_back(std::move(t));
    }
  }
  std::stable_sort(overheadIds.begin(), overheadIds.end(),
                   [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; });
  GreedyRows ohRows;
  for (EventId id : overheadIds) ohRows.add(overhead, s, id);
  if (!overheadIds.empty()) overhead.storeLane = s.event(overheadIds.front()).lane;

  // Threads' ops, then the GPU (launch -> work reads top to bottom), then
  // the threads' Python stacks and instants.
  for (Track& t : cpu)
    if (t.kind == TrackKind::Cpu) tracks_.push_back(std::move(t));
  for (Track& t : gpu) tracks_.push_back(std::move(t));
  for (Track& t : cpu)
    if (t.kind != TrackKind::Cpu) tracks_.push_back(std::move(t));
  if (overhead.eventCount) tracks_.push_back(std::move(overhead));
  for (Track& t : other) tracks_.push_back(std::move(t));

  for (uint32_t ti = 0; ti < tracks_.size(); ++ti) {
    const auto& rows = tracks_[ti].rows;
    for (uint32_t r = 0; r < rows.size(); ++r) {
      for (EventId id : rows[r].ids) place_[id] = (ti << 16) | r;
    }
  }
}

std::pair<size_t, size_t> TimelineIndex::visible(const TrackRow& row, int64_t t0, int64_t t1) const {
  // maxEnd is non-decreasing: nothing before the first maxEnd >= t0 can reach t0.
  const auto first = std::lower_bound(row.maxEnd.begin(), row.maxEnd.end(), t0);
  const size_t f = static_cast<size_t>(first - row.maxEnd.begin());
  return {f, firstStartingAt(row, f, row.ids.size(), t1)};
}

size_t TimelineIndex::firstStartingAt(const TrackRow& row, size_t from, size_t to, int64_t t, size_t hint) const {
  // Galloping from a guess (the caller's, else `from`): the timeline walks a
  // row bucket by bucket, so the answer is usually near where the last bucket
  // ended plus that bucket's count, and probes near it stay in the cache
  // where a plain binary search over [from, to) would start far away.
  if (from >= to) return to;
  auto startOf = [&](size_t k) { return store_->event(row.ids[k]).start; };
  size_t lo = std::clamp(hint, from, to - 1);
  if (startOf(lo) >= t) {
    // Back from the guess: the answer is in (hi - step, hi].
    size_t hi = lo, step = 1;
    while (hi > from) {
      const size_t probe = hi > from + step ? hi - step : from;
      if (startOf(probe) < t) {
        lo = probe;
        break;
      }
      hi = probe;
      step *= 2;
    }
    if (hi == from && startOf(from) >= t) return from;
    const auto it = std::lower_bound(row.ids.begin() + static_cast<std::ptrdiff_t>(lo + 1),
                                     row.ids.begin() + static_cast<std::ptrdiff_t>(hi), t,
                                     [this](EventId id, int64_t v) { return store_->event(id).start < v; });
    return static_cast<size_t>(it - row.ids.begin());
  }
  size_t step = 1;
  while (lo + step < to && startOf(lo + step) < t) {
    lo += step;
    step *= 2;
  }
  const auto b = row.ids.begin() + static_cast<std::ptrdiff_t>(lo + 1);
  const auto e = row.ids.begin() + static_cast<std::ptrdiff_t>(std::min(to, lo + step));
  const auto it = std::lower_bound(b, e, t, [this](EventId id, int64_t v) { return store_->event(id).start < v; });
  return static_cast<size_t>(it - row.ids.begin());
}

size_t TimelineIndex::memoryBytes() const {
  size_t n = place_.capacity() * sizeof(uint32_t) + tracks_.capacity() * sizeof(Track);
  for (const Track& t : tracks_) {
    n += t.label.capacity() + t.rows.capacity() * sizeof(TrackRow);
    for (const TrackRow& r : t.rows) n += r.ids.capacity() * sizeof(EventId) + r.maxEnd.capacity() * sizeof(int64_t);
  }
  return n;
}

}  // namespace attnscope::ui
