// One rank's summary from its own trace: steps, collectives (gloo ops with their worker spans, or
// NCCL/RCCL kernels with the op that enqueued them), and per step the compute/communication split
// and the rank's own top cause.
#include "core/ranks/rank_summary.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/explain/diagnosis.h"
#include "core/explain/explanation.h"
#include "core/ranks/ranks_util.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/store/intervals.h"

namespace attnscope::ranks {

int64_t rankFromFileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  static const std::regex re(R"((?:^|[^a-z0-9])(?:rank|worker)[-_]?([0-9]{1,7})(?:[^0-9]|$))", std::regex::icase);
  std::smatch m;
  if (std::regex_search(base, m, re)) return std::stoll(m[1].str());
  return -1;
}

std::string hostFromFileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  static const std::regex re(R"(^(.+)_[0-9]{3,10}\.[0-9]{10,}\.pt\.trace\.json(\.gz)?$)");
  std::smatch m;
  if (std::regex_match(base, m, re)) return m[1].str();
  return {};
}

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool isP2p(std::string_view n) {
  const std::string k = collectiveKey(n);
  return k.find("send") != std::string::npos || k.find("recv") != std::string::npos;
}

// "c10d::allreduce_" -> "allreduce", "gloo:all_reduce" -> "all_reduce", "nccl:all_to_all" -> "all_to_all",
// "ncclKernel_AllReduce_RING_LL_Sum_float(...)" / "ncclDevKernel_AllReduce_Sum_f32_RING_LL" -> "AllReduce".
std::string collectiveWord(std::string_view n) {
  for (std::string_view p : {"c10d::", "gloo:", "nccl:", "rccl:"})
    if (startsWith(n, p)) {
      std::string w(n.substr(p.size()));
      while (!w.empty() && w.back() == '_') w.pop_back();
      if (startsWith(w, "_")) w.erase(0, 1);
      return w;
    }
  for (std::string_view p : {"ncclKernel_", "ncclDevKernel_", "rcclKernel_", "ncclDevKernel"})
    if (startsWith(n, p)) {
      std::string_view rest = n.substr(p.size());
      const size_t u = rest.find_first_of("_(");
      return std::string(rest.substr(0, u));
    }
  return std::string(n.substr(0, n.find('(')));
}

// The first element of a list's text: "[[[135696]], [], []]" -> "[[135696]]".
std::string firstElement(std::string_view t) {
  if (t.size() < 2 || t.front() != '[') return {};
  int depth = 0;
  for (size_t i = 1; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '[') ++depth;
    if (c == ']') {
      if (depth == 0) return std::string(t.substr(1, i - 1));
      --depth;
    }
    if (c == ',' && depth == 0) return std::string(t.substr(1, i - 1));
  }
  return {};
}

bool hasDigit(std::string_view t) {
  return std::any_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// The collective's args on the event or on an op around it.
const CommArgs* commAround(const EventStore& s, EventId id) {
  for (EventId at = id; at != kNoEvent; at = s.event(at).parent)
    if (const CommArgs* c = s.commOf(s.event(at))) return c;
  return nullptr;
}

void applyComm(const EventStore& s, const CommArgs* c, Collective& col) {
  if (!c) return;
  if (c->collectiveName) col.name = std::string(s.str(c->collectiveName));
  if (c->pgName) col.pg = std::string(s.str(c->pgName)), col.pgInferred = false;
  if (c->seq >= 0) col.seq = c->seq;
  if (c->commsId) col.commsId = std::string(s.str(c->commsId));
  if (c->inNelems >= 0) col.nelems = c->inNelems;
  if (c->dtype) col.dtype = std::string(s.str(c->dtype));
}

// The op a GPU kernel was enqueued from: its launch call's innermost collective ancestor (c10d::,
// nccl:, record_param_comms), else the call's innermost op.
EventId enqueuingOp(const EventStore& s, const Event& k) {
  if (k.correlation <= 0) return kNoEvent;
  const EventId call = s.callOfCorrelation(k.correlation);
  if (call == kNoEvent) return kNoEvent;
  EventId firstOp = kNoEvent;
  for (EventId at = s.event(call).parent; at != kNoEvent; at = s.event(at).parent) {
    const std::string_view n = s.name(s.event(at));
    if (startsWith(n, "ProfilerStep#")) break;
    if (firstOp == kNoEvent) firstOp = at;
    if (startsWith(n, "c10d::") || startsWith(n, "nccl:") || startsWith(n, "rccl:") || n == "record_param_comms")
      return at;
  }
  return firstOp;
}

std::string innermostAnnotation(const EventStore& s, EventId id) {
  for (EventId at = id; at != kNoEvent; at = s.event(at).parent) {
    const Event& e = s.event(at);
    if (e.family != Family::UserAnnotation) continue;
    const std::string_view n = s.name(e);
    if (startsWith(n, "ProfilerStep#") || startsWith(n, "gloo:") || startsWith(n, "nccl:")) continue;
    return std::string(n);
  }
  return {};
}

struct Dsu {
  std::vector<int> p;
  int find(int x) { return p[x] == x ? x : p[x] = find(p[x]); }
  void unite(int a, int b) { p[find(a)] = find(b); }
};

// gloo: c10d ops paired with the gloo worker spans that ran them; the group inferred from the worker
// threads (threads that ran the same collective signature belong to one group; the groups in the
// order their threads were created, which is the order the groups were).
void glooCollectives(const EventStore& s, RankSummary& r, Intervals& p2p) {
  std::vector<EventId> ops, workers;
  for (EventId id = 0; id < s.events().size(); ++id) {
    const Event& e = s.event(id);
    const std::string_view n = s.name(e);
    if ((e.family == Family::CpuOp && startsWith(n, "c10d::")) ||
        (e.family == Family::UserAnnotation && startsWith(n, "gloo:")))
      if (isP2p(n)) p2p.emplace_back(e.start, e.end());
    if (e.family == Family::CpuOp && startsWith(n, "c10d::") && !isP2p(n)) {
      bool nested = false;  // a c10d op inside another is the same collective
      for (EventId at = e.parent; at != kNoEvent && !nested; at = s.event(at).parent)
        nested = startsWith(s.name(s.event(at)), "c10d::");
      if (!nested) ops.push_back(id);
    } else if (e.family == Family::UserAnnotation && startsWith(n, "gloo:") && !isP2p(n)) {
      workers.push_back(id);
    }
  }
  auto byStart = [&](EventId a, EventId b) { return s.event(a).start < s.event(b).start; };
  std::sort(ops.begin(), ops.end(), byStart);
  std::sort(workers.begin(), workers.end(), byStart);
  std::vector<bool> used(workers.size(), false);
  std::vector<std::pair<EventId, EventId>> pairs;  // (op, worker), either may be kNoEvent
  for (EventId op : ops) {
    const Event& e = s.event(op);
    const std::string key = collectiveKey(collectiveWord(s.name(e)));
    const auto a = s.argsOf(e);
    const std::string dims = a && a->inputDims ? firstElement(s.str(a->inputDims)) : std::string();
    size_t pick = workers.size();
    for (size_t i = 0; i < workers.size(); ++i) {
      const Event& w = s.event(workers[i]);
      if (used[i] || w.start < e.start) continue;
      if (collectiveKey(collectiveWord(s.name(w))) != key) continue;
      const auto wa = s.argsOf(w);
      if (!dims.empty() && wa && wa->inputDims && s.str(wa->inputDims) != dims) continue;
      pick = i;
      break;
    }
    if (pick < workers.size()) used[pick] = true;
    pairs.emplace_back(op, pick < workers.size() ? workers[pick] : kNoEvent);
  }
  for (size_t i = 0; i < workers.size(); ++i)
    if (!used[i]) pairs.emplace_back(kNoEvent, workers[i]);

  // Worker threads -> groups.
  std::vector<uint32_t> lanes;
  for (const auto& [op, w] : pairs)
    if (w != kNoEvent) lanes.push_back(s.event(w).lane);
  std::sort(lanes.begin(), lanes.end());
  lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
  Dsu dsu{std::vector<int>(lanes.size())};
  std::iota(dsu.p.begin(), dsu.p.end(), 0);
  std::map<std::string, int> firstLaneOfSig;
  auto laneIdx = [&](uint32_t l) {
    return static_cast<int>(std::lower_bound(lanes.begin(), lanes.end(), l) - lanes.begin());
  };
  for (const auto& [op, w] : pairs) {
    if (w == kNoEvent) continue;
    const Event& we = s.event(w);
    const auto wa = s.argsOf(we);
    const std::string sig = collectiveKey(collectiveWord(s.name(we))) + "|" +
                            (wa && wa->inputDims ? std::string(s.str(wa->inputDims)) : "");
    if (!wa || !wa->inputDims) continue;  // a span the profiler cut has no shapes: it joins no group
    auto [it, fresh] = firstLaneOfSig.emplace(sig, laneIdx(we.lane));
    if (!fresh) dsu.unite(laneIdx(we.lane), it->second);
  }
  // Components ordered by their lowest thread id.
  std::map<int, int64_t> compMinTid;
  for (size_t i = 0; i < lanes.size(); ++i) {
    const int c = dsu.find(static_cast<int>(i));
    const int64_t tid = s.lanes()[lanes[i]].tid;
    auto [it, fresh] = compMinTid.emplace(c, tid);
    if (!fresh) it->second = std::min(it->second, tid);
  }
  // More groups of threads than distributedInfo has process groups: a group's threads that never ran
  // the same collective look apart; join the two whose thread ids lie closest (a group creates its
  // threads one after the other) until the counts agree.
  const size_t groups = r.dist.pgConfig.empty() ? 0 : r.dist.pgConfig.size();
  while (groups > 0 && compMinTid.size() > groups) {
    std::vector<std::pair<int64_t, int>> ids;  // (tid, component) of every thread
    for (size_t i = 0; i < lanes.size(); ++i) ids.emplace_back(s.lanes()[lanes[i]].tid, dsu.find(static_cast<int>(i)));
    std::sort(ids.begin(), ids.end());
    int64_t bestGap = INT64_MAX;
    std::pair<int, int> join{-1, -1};
    for (size_t i = 1; i < ids.size(); ++i)
      if (ids[i].second != ids[i - 1].second && ids[i].first - ids[i - 1].first < bestGap) {
        bestGap = ids[i].first - ids[i - 1].first;
        join = {ids[i - 1].second, ids[i].second};
      }
    if (join.first < 0) break;
    dsu.unite(join.first, join.second);
    compMinTid.clear();
    for (size_t i = 0; i < lanes.size(); ++i) {
      const int c = dsu.find(static_cast<int>(i));
      const int64_t tid = s.lanes()[lanes[i]].tid;
      auto [it, fresh] = compMinTid.emplace(c, tid);
      if (!fresh) it->second = std::min(it->second, tid);
    }
  }
  std::vector<std::pair<int64_t, int>> order;
  for (const auto& [c, tid] : compMinTid) order.emplace_back(tid, c);
  std::sort(order.begin(), order.end());
  std::map<int, std::string> compName;
  for (size_t i = 0; i < order.size(); ++i)
    compName[order[i].second] =
        i < r.dist.pgConfig.size() ? r.dist.pgConfig[i].name : "gloo group " + std::to_string(i + 1);
  if (!r.dist.pgConfig.empty() && order.size() != r.dist.pgConfig.size())
    r.notes.push_back("the gloo worker threads form " + std::to_string(order.size()) +
                      " group(s) but distributedInfo lists " + std::to_string(r.dist.pgConfig.size()) +
                      " process group(s): group names are a guess by creation order");

  for (const auto& [op, w] : pairs) {
    Collective c;
    c.kind = op != kNoEvent && w != kNoEvent ? "gloo" : "cpu_op";
    const Event& main = s.event(op != kNoEvent ? op : w);
    c.op = std::string(s.name(main));
    c.name = collectiveWord(c.op);
    c.issueNs = main.start;
    if (w != kNoEvent) {
      const Event& we = s.event(w);
      c.arrivalNs = std::max(we.start, main.start);
      c.endNs = we.end();
      const int comp = dsu.find(laneIdx(we.lane));
      c.pg = compName[comp];
      c.pgInferred = true;
      if (const auto wa = s.argsOf(we); wa && wa->inputDims) c.dims = std::string(s.str(wa->inputDims));
    } else {
      c.arrivalNs = main.start;
      c.endNs = main.end();
      // A c10d op whose worker span is not in the trace (a file cut short loses a thread's events): its
      // group is the job's only one when there is one; its end is not known (the op returns at once).
      if (op != kNoEvent && w == kNoEvent && r.dist.pgConfig.size() == 1) {
        c.pg = r.dist.pgConfig.front().name;
        c.pgInferred = true;
        c.endUnknown = true;
      }
    }
    if (c.dims.empty())
      if (const auto a = s.argsOf(main); a && a->inputDims) c.dims = firstElement(s.str(a->inputDims));
    applyComm(s, commAround(s, op != kNoEvent ? op : w), c);
    c.thread = s.lanes()[main.lane].label;
    c.blockedIn = innermostAnnotation(s, op != kNoEvent ? op : w);
    r.collectives.push_back(std::move(c));
  }
}

// Whether a GPU event is communication (an NCCL/RCCL kernel), its name read once per name.
struct CommNames {
  const EventStore& s;
  std::vector<int8_t> known;  // per interned name: -1 not read yet, 0 no, 1 yes
  bool operator()(EventId id) {
    const Event& e = s.event(id);
    if (e.family == Family::GpuMemcpy || e.family == Family::GpuMemset) return false;
    if (known.size() <= e.name) known.resize(e.name + 1, -1);
    int8_t& k = known[e.name];
    if (k < 0) k = workKind(s, id) == WorkKind::Communication;
    return k == 1;
  }
};

void gpuCollectives(const TraceSnapshot& snap, RankSummary& r, CommNames& isComm, Intervals& p2p) {
  const EventStore& s = *snap.store;
  for (EventId id : snap.index.gpuWorkByStart()) {
    const Event& k = s.event(id);
    if (k.family != Family::Kernel || !isComm(id)) continue;
    const std::string_view kn = s.name(k);
    const EventId op = enqueuingOp(s, k);
    // all_to_all runs as SendRecv kernels: a kernel is point-to-point only when its op says so (or,
    // with no op, its own name).
    if (isP2p(op != kNoEvent ? s.name(s.event(op)) : kn)) {
      p2p.emplace_back(k.start, k.end());
      continue;
    }
    Collective c;
    c.kind = "gpu_kernel";
    c.op = std::string(kn.substr(0, kn.find('(')));
    c.arrivalNs = k.start;
    c.endNs = k.end();
    c.issueNs = k.start;
    const auto ka = s.argsOf(k);
    c.pg = ka && ka->stream >= 0 ? "stream " + std::to_string(ka->stream) : s.lanes()[k.lane].label;
    c.pgInferred = true;
    if (op != kNoEvent) {
      const Event& oe = s.event(op);
      c.issueNs = oe.start;
      c.name = collectiveWord(s.name(oe));
      if (const auto a = s.argsOf(oe); a && a->inputDims && hasDigit(s.str(a->inputDims)))
        c.dims = firstElement(s.str(a->inputDims));
      c.thread = s.lanes()[oe.lane].label;
      c.blockedIn = innermostAnnotation(s, op);
      applyComm(s, commAround(s, op), c);
    } else {
      c.name = collectiveWord(kn);
    }
    applyComm(s, s.commOf(k), c);
    r.collectives.push_back(std::move(c));
  }
}

// Regions one level below a step on `lane` (or its top-level events where no step is on it),
// clipped to [t0, t1), summed by name, largest first.
std::vector<Activity> regionsIn(const EventStore& s, uint32_t lane, const std::unordered_set<EventId>& stepEvents,
                                int64_t t0, int64_t t1, size_t keep) {
  std::map<std::string_view, int64_t> byName;
  if (t1 > t0 && lane < s.lanes().size()) {
    const auto [first, last] = s.visibleRange(lane, t0, t1);
    bool laneHasSteps = false;
    for (EventId id : stepEvents) laneHasSteps |= s.event(id).lane == lane;
    for (EventId id = first; id < last; ++id) {
      const Event& e = s.event(id);
      if (e.family != Family::UserAnnotation && e.family != Family::CpuOp) continue;
      if (stepEvents.count(id)) continue;
      const bool level = laneHasSteps ? (e.parent != kNoEvent && stepEvents.count(e.parent)) : e.depth == 0;
      if (!level) continue;
      const int64_t a = std::max(e.start, t0), b = std::min(e.end(), t1);
      if (b > a) byName[s.name(e)] += b - a;
    }
  }
  std::vector<Activity> out;
  for (const auto& [n, ns] : byName) out.push_back({std::string(n), ns});
  std::sort(out.begin(), out.end(), [](const Activity& a, const Activity& b) { return a.ns > b.ns; });
  if (out.size() > keep) out.resize(keep);
  return out;
}

bool looksLikeDataLoading(std::string_view n) {
  const std::string k = collectiveKey(n);  // lower case, no separators
  return k.find("dataload") != std::string::npos || k.find("dataloader") != std::string::npos ||
         k.find("loadbatch") != std::string::npos || k.find("getbatch") != std::string::npos;
}

}  // namespace

RankSummary summarizeRank(const TraceSnapshot& snap, const std::string& file) {
  const EventStore& s = *snap.store;
  RankSummary r;
  r.file = file;
  r.dist = s.meta().distributed;
  if (r.dist.rank >= 0) {
    r.rank = r.dist.rank;
    r.rankFrom = "distributedInfo";
  } else if ((r.rank = rankFromFileName(file)) >= 0) {
    r.rankFrom = "file name";
  }
  if (!s.meta().hostName.empty()) {
    r.host = s.meta().hostName;
    r.hostFrom = "trace";
  } else if (!(r.host = hostFromFileName(file)).empty()) {
    r.hostFrom = "file name";
  }
  r.truncated = s.meta().partial;
  r.hasDevice = !snap.index.gpuWorkByStart().empty();
  r.traceStartNs = s.minTime();
  r.traceEndNs = s.maxTime();

  // Steps: the explanation's (ProfilerStep#N when the trace has them).
  std::unordered_set<EventId> stepEvents;
  uint32_t stepLane = UINT32_MAX;
  if (snap.explanation)
    for (const StepReport& st : snap.explanation->steps) {
      RankStep rs;
      rs.name = st.name;
      rs.startNs = st.hostStartNs;
      rs.endNs = st.hostEndNs;
      if (st.event != kNoEvent) {
        stepEvents.insert(st.event);
        stepLane = s.event(st.event).lane;
      }
      r.steps.push_back(std::move(rs));
    }

  CommNames isComm{s, {}};
  bool gpuComm = false;
  for (EventId id : snap.index.gpuWorkByStart())
    if (isComm(id)) {
      gpuComm = true;
      break;
    }
  Intervals p2p;  // point-to-point transfers: each runs until its peer is there
  if (gpuComm)
    gpuCollectives(snap, r, isComm, p2p);
  else
    glooCollectives(s, r, p2p);
  p2p = merged(std::move(p2p));
  std::stable_sort(r.collectives.begin(), r.collectives.end(),
                   [](const Collective& a, const Collective& b) { return a.issueNs < b.issueNs; });

  // Lanes by label, for the issuing thread's regions.
  std::unordered_map<std::string, uint32_t> laneOf;
  for (uint32_t l = 0; l < s.lanes().size(); ++l) laneOf.emplace(s.lanes()[l].label, l);
  std::set<int64_t> earlierEnds;  // the ends of the collectives issued before this one
  for (size_t i = 0; i < r.collectives.size(); ++i) {
    Collective& c = r.collectives[i];
    c.cut = c.endUnknown || c.endNs >= r.traceEndNs;
    for (size_t k = 0; k < r.steps.size(); ++k)
      if (c.issueNs >= r.steps[k].startNs && c.issueNs < r.steps[k].endNs) c.step = static_cast<int>(k);
    int64_t from = c.step >= 0 ? r.steps[static_cast<size_t>(c.step)].startNs : r.traceStartNs;
    if (auto it = earlierEnds.upper_bound(c.arrivalNs); it != earlierEnds.begin()) from = std::max(from, *--it);
    earlierEnds.insert(c.endNs);
    c.beforeFromNs = std::min(from, c.arrivalNs);
    // The thread's regions up to the issue only: after it, what the thread does (a loss.item() waiting
    // for the device, the next ops' launches) no longer delays this collective; the device's queue does.
    const auto it = laneOf.find(c.thread);
    if (it != laneOf.end())
      c.before = regionsIn(s, it->second, stepEvents, c.beforeFromNs,
                           std::max(c.beforeFromNs, std::min(c.issueNs, c.arrivalNs)), 6);
    for (const auto& [a, b] : intersected(p2p, Intervals{{c.beforeFromNs, c.arrivalNs}})) c.peerWaitNs += b - a;
  }

  // Per step: compute and communication.
  Intervals comm, compute;
  for (const Collective& c : r.collectives) comm.emplace_back(c.arrivalNs, c.endNs);
  comm = merged(std::move(comm));
  if (r.hasDevice) {
    for (EventId id : snap.index.gpuWorkByStart())
      if (!isComm(id)) compute.emplace_back(s.event(id).start, s.event(id).end());
  } else if (stepLane != UINT32_MAX) {
    for (const Event& e : s.laneEvents(stepLane)) {
      if (e.family != Family::CpuOp) continue;
      const std::string_view n = s.name(e);
      if (startsWith(n, "c10d::") || n == "record_param_comms") continue;
      compute.emplace_back(e.start, e.end());
    }
  }
  compute = merged(std::move(compute));
  const Diagnosis* diag = snap.explanation ? &snap.explanation->diagnosis : nullptr;
  for (size_t k = 0; k < r.steps.size(); ++k) {
    RankStep& st = r.steps[k];
    const Intervals win{{st.startNs, st.endNs}};
    const Intervals c = intersected(comm, win), p = intersected(compute, win);
    for (const auto& [a, b] : c) st.commNs += b - a;
    for (const auto& [a, b] : p) st.computeNs += b - a;
    for (const auto& [a, b] : intersected(c, p)) st.overlappedCommNs += b - a;
    st.exposedCommNs = st.commNs - st.overlappedCommNs;
    if (snap.explanation && snap.explanation->steps[k].event != kNoEvent)
      st.phases = regionsIn(s, s.event(snap.explanation->steps[k].event).lane, stepEvents, st.startNs, st.endNs, 12);
    const StepWaits* w = diag ? diagnosedStep(*diag, st.startNs, st.endNs) : nullptr;
    if (r.hasDevice && w) {
      const Cause top = topCause(*w);
      st.cause = std::string(causeCode(top));
      st.causeLabel = causeLabel(top);
      st.causeNs = w->parts[static_cast<int>(top)];
      continue;
    }
    // A CPU-only trace (the diagnosis calls all of it cpu_only): the step's own split. Its time in
    // ops (compute), in collectives with no op running (communication), in a data-loading region
    // with neither, or in none of them (the host idle: sleeping, waiting outside any op).
    Intervals rest = win;
    takeCovered(rest, p);
    Intervals exposed = c;
    takeCovered(exposed, p);
    takeCovered(rest, exposed);
    int64_t loading = 0;
    if (snap.explanation && snap.explanation->steps[k].event != kNoEvent) {
      Intervals dl;
      const uint32_t lane = s.event(snap.explanation->steps[k].event).lane;
      const auto [first, last] = s.visibleRange(lane, st.startNs, st.endNs);
      for (EventId id = first; id < last; ++id)
        if (s.event(id).family == Family::UserAnnotation && looksLikeDataLoading(s.name(s.event(id))))
          dl.emplace_back(s.event(id).start, s.event(id).end());
      loading = takeCovered(rest, merged(std::move(dl)));
    }
    int64_t idle = 0;
    for (const auto& [a, b] : rest) idle += b - a;
    const std::pair<int64_t, const char*> parts[] = {{st.computeNs, "host_compute"},
                                                     {st.exposedCommNs, "communication"},
                                                     {loading, "data_loader"},
                                                     {idle, "host_idle"}};
    const auto* best = std::max_element(std::begin(parts), std::end(parts),
                                        [](const auto& a, const auto& b) { return a.first < b.first; });
    st.cause = best->second;
    st.causeNs = best->first;
    st.causeLabel = causeWords(st.cause);
  }
  if (r.collectives.empty()) r.notes.push_back("no collective found (no c10d op, gloo span or NCCL/RCCL kernel)");
  if (r.steps.empty()) r.notes.push_back("no step found");
  return r;
}

}  // namespace attnscope::ranks
