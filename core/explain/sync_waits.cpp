// Sync provenance: every host call that blocks on GPU work, the op chain
// that issued it, and the GPU activities it waited for.
#include <algorithm>
#include <string_view>

#include "core/explain/explanation.h"
#include "core/store/activity_index.h"
#include "core/tables/attribution.h"

namespace attnscope {

namespace {

// cudaStreamSynchronize, cudaDeviceSynchronize, cuCtxSynchronize, hipEventSynchronize, ...:
// (cuda|hip|cu) + letters + "Synchronize".
bool isSyncApi(std::string_view n) {
  size_t p = n.starts_with("cuda") ? 4 : n.starts_with("hip") ? 3 : n.starts_with("cu") ? 2 : 0;
  if (p == 0 || !n.ends_with("Synchronize")) return false;
  for (; p + 11 < n.size(); ++p)
    if (!((n[p] >= 'a' && n[p] <= 'z') || (n[p] >= 'A' && n[p] <= 'Z'))) return false;
  return true;
}

bool isMemcpyApi(std::string_view n) {
  return n.starts_with("cudaMemcpy") || n.starts_with("cuMemcpy") || n.starts_with("hipMemcpy");
}

// Synchronizing: the sync APIs, synchronous memcpy (no "Async"), and async
// copies to pageable host memory (the runtime waits for them).
bool isSynchronizing(const EventStore& s, EventId id) {
  const Event& e = s.event(id);
  if (e.family != Family::CudaRuntime && e.family != Family::CudaDriver) return false;
  const std::string_view n = s.name(e);
  if (isSyncApi(n)) return true;
  if (!isMemcpyApi(n)) return false;
  if (n.find("Async") == std::string_view::npos) return true;
  const EventId c = copyOfCall(s, id);
  return c != kNoEvent && s.name(s.event(c)).find("-> Pageable") != std::string_view::npos;
}

}  // namespace

EventId copyOfCall(const EventStore& s, EventId call) {
  const Event& e = s.event(call);
  if (e.correlation <= 0) return kNoEvent;
  for (EventId id : s.byCorrelation(e.correlation))
    if (s.event(id).family == Family::GpuMemcpy) return id;
  return kNoEvent;
}

std::string callLabel(const EventStore& s, EventId id) {
  std::string label(s.name(s.event(id)));
  if (!isMemcpyApi(label)) return label;
  const EventId c = copyOfCall(s, id);
  if (c == kNoEvent) return label;
  const std::string_view cn = s.name(s.event(c));
  const size_t open = cn.find('(');
  if (open != std::string_view::npos) label += " " + std::string(cn.substr(open));
  return label;
}

namespace {

// The runtime call just before `id` under the same parent, if it is a copy.
EventId precedingCopyCall(const EventStore& s, EventId id) {
  const Event& e = s.event(id);
  const EventId laneBegin = s.lanes()[e.lane].begin;
  for (EventId i = id; i-- > laneBegin;) {
    const Event& p = s.event(i);
    if (e.parent != kNoEvent && p.start < s.event(e.parent).start) break;
    if (p.parent != e.parent || p.end() > e.start) continue;
    if (p.family != Family::CudaRuntime && p.family != Family::CudaDriver) continue;
    return isMemcpyApi(s.name(p)) ? i : kNoEvent;
  }
  return kNoEvent;
}

void fillChain(const EventStore& s, SyncWait& w) {
  std::vector<EventId> ops, frames;
  for (EventId p = s.event(w.ev).parent; p != kNoEvent; p = s.event(p).parent) {
    const Family f = s.event(p).family;
    if (f == Family::CpuOp || f == Family::UserAnnotation)
      ops.push_back(p);
    else if (f == Family::PythonFunction)
      frames.push_back(p);
  }
  bool profiler = false;
  for (EventId p : frames) {
    const std::string_view n = s.name(s.event(p));
    if (n.find("torch/profiler/") != std::string_view::npos ||
        n.find("torch/autograd/profiler") != std::string_view::npos)
      profiler = true;
  }
  w.issuer = profiler ? "profiler" : !ops.empty() ? "op" : !frames.empty() ? "user" : "unknown";
  std::vector<EventId>& chain = ops.empty() ? frames : ops;
  std::reverse(chain.begin(), chain.end());
  if (const EventId copy = precedingCopyCall(s, w.ev); copy != kNoEvent && !isMemcpyApi(w.api)) chain.push_back(copy);
  chain.push_back(w.ev);
  for (EventId id : chain) {
    w.chainEvents.push_back(id);
    w.opChain.push_back(callLabel(s, id));
  }
}

void fillAwaited(const EventStore& s, const ActivityIndex& index, SyncWait& w) {
  const int64_t end = w.startNs + w.durNs;
  // What ends inside the wait started at most the longest activity's duration before it.
  for (EventId g : index.gpuWorkStartingIn(w.startNs - index.maxGpuDurNs(), end)) {
    const Event& ge = s.event(g);
    if (ge.end() <= w.startNs || ge.end() > end) continue;
    const EventId launch = launchOf(s, g);
    const int64_t queued = launch != kNoEvent ? s.event(launch).start : ge.start;
    if (queued >= w.startNs || launch == w.ev) continue;
    w.awaited.push_back({g, ge.correlation, ge.start, ge.end(), queued});
  }
}
}  // namespace

std::vector<SyncWait> findSyncWaits(const EventStore& s, const ActivityIndex& index) {
  std::vector<SyncWait> out;
  for (EventId i = 0; i < s.events().size(); ++i) {
    const Event& e = s.event(i);
    if (!isSynchronizing(s, i)) continue;

    SyncWait w;
    w.ev = i;
    w.api = callLabel(s, i);
    w.startNs = e.start;
    w.durNs = e.dur;
    fillChain(s, w);
    fillAwaited(s, index, w);
    out.push_back(std::move(w));
  }
  std::stable_sort(out.begin(), out.end(), [](const SyncWait& a, const SyncWait& b) { return a.startNs < b.startNs; });
  return out;
}

}  // namespace attnscope
