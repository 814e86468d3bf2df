// The job report as text (the headline first, then a per-rank table, the clock offsets, the
// collectives and the findings) and as JSON (docs in the README's CLI usage).
#include <map>

#include "core/explain/diagnosis.h"
#include "core/ranks/job_internal.h"
#include "core/ranks/ranks_util.h"
#include "core/text/duration.h"
#include "core/text/json_out.h"

namespace attnscope::ranks {

std::string causeWords(std::string_view code) {
  if (code == "host_compute") return "host compute (ops)";
  if (code == "communication") return "waiting in collectives";
  if (code == "data_loader") return "data loading";
  if (code == "host_idle") return "host idle (outside any op)";
  for (int c = 0; c < kCauseCount; ++c)
    if (causeCode(static_cast<Cause>(c)) == code) return causeLabel(static_cast<Cause>(c));
  return std::string(code);
}

namespace {

std::string ms(int64_t ns) { return spanDurationText(ns); }

std::string signedMs(int64_t ns) { return (ns >= 0 ? "+" : "-") + spanDurationText(ns >= 0 ? ns : -ns); }

int64_t pct(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(at), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + static_cast<int64_t>((at - static_cast<double>(lo)) * static_cast<double>(v[hi] - v[lo]));
}

std::string spreadText(const std::vector<int64_t>& v) {
  if (v.empty()) return "-";
  if (v.size() == 1) return ms(v.front());
  return ms(medianOf(v)) + " [" + ms(pct(v, 0.1)) + " - " + ms(pct(v, 0.9)) + "]";
}

// A column: `s`, then spaces to `w`, and always at least two (a long value never runs into the next).
std::string pad(std::string s, size_t w) {
  s.append(s.size() + 2 < w ? w - s.size() : 2, ' ');
  return s;
}

std::string intList(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void kv(std::string& o, const char* k, const std::string& jsonValue, bool first = false) {
  if (!first) o += ", ";
  appendJsonString(o, k);
  o += ": " + jsonValue;
}

std::string num(int64_t x) { return std::to_string(x); }

}  // namespace

std::string jobText(const JobReport& r) {
  std::string o = r.headline + "\n";
  o += "job: " + std::to_string(r.ranks.size()) + " rank(s) read" +
       (r.worldSize > 0 ? " of world size " + std::to_string(r.worldSize) : "") +
       (r.backend.empty() ? "" : ", backend " + r.backend) + "\n";
  o += "ranks (per step: median [p10 - p90] over its steps; waiting = from its arrival to the last rank's, on the "
       "aligned clock):\n";
  o += "  " + pad("rank", 6) + pad("steps", 7) + pad("step time", 34) + pad("compute", 34) + pad("exposed comm", 34) +
       pad("overlapped comm", 34) + pad("waiting for last", 34) + pad("made others wait", 34) +
       "top cause (steps)  file\n";
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const auto& fs = i < r.figures.size() ? r.figures[i] : std::vector<StepFigures>{};
    std::vector<int64_t> step, comp, exp, ovl, wait, imposed;
    std::map<std::string, int> causes;
    for (const StepFigures& f : fs) {
      step.push_back(f.stepNs);
      comp.push_back(f.computeNs);
      exp.push_back(f.exposedCommNs);
      ovl.push_back(f.overlappedCommNs);
      wait.push_back(f.waitForLastNs);
      imposed.push_back(f.imposedNs);
      causes[f.causeLabel]++;
    }
    std::string cause;
    int most = 0;
    for (const auto& [c, k] : causes)
      if (k > most) cause = c, most = k;
    o += "  " + pad(std::to_string(r.ranks[i].rank), 6) + pad(std::to_string(fs.size()), 7) +
         pad(spreadText(step), 34) + pad(spreadText(comp), 34) + pad(spreadText(exp), 34) + pad(spreadText(ovl), 34) +
         pad(spreadText(wait), 34) + pad(spreadText(imposed), 34) +
         (cause.empty() ? "-" : cause + " (" + std::to_string(most) + "/" + std::to_string(fs.size()) + ")") + "  " +
         r.ranks[i].file + (r.ranks[i].host.empty() ? "" : " (host " + r.ranks[i].host + ")") +
         (r.ranks[i].truncated.empty() ? "" : " (truncated)") + "\n";
  }
  o += "jitter: the ranks' arrivals vary " + ms(r.jitterNs) + " (robust scale); a set of ranks stands out when it is " +
       ms(r.thresholdNs) + " or more later than the others\n";
  o += "clock offsets (" + r.clock.method + "):\n";
  for (const RankClock& c : r.clock.ranks) {
    if (c.rank == r.clock.referenceRank) {
      o += "  rank " + std::to_string(c.rank) + ": reference\n";
      continue;
    }
    o += "  rank " + std::to_string(c.rank) + ": " + signedMs(c.estimateNs) + " +- " + ms(c.uncertaintyNs) +
         " (one collective's ends spread " + ms(c.spreadNs) + ", " + std::to_string(c.collectives) + " collectives): " +
         (c.appliedNs ? "applied, its times are shifted by " + signedMs(-c.appliedNs)
                      : "not applied (within its uncertainty)") +
         "\n";
  }
  std::map<std::string, std::vector<const MatchedCollective*>> byPg;
  for (const MatchedCollective& m : r.matched) byPg[m.pg].push_back(&m);
  std::map<std::string, int> unmatchedByPg;
  for (const UnmatchedCollective& u : r.unmatched) unmatchedByPg[u.pg]++;
  o += "collectives: " + std::to_string(r.matched.size()) + " matched on every rank of their group, " +
       std::to_string(r.unmatched.size()) + " not (" + (r.matchMethods.empty() ? "none" : r.matchMethods) + ")\n";
  for (const auto& [pg, ms_] : byPg) {
    std::vector<int64_t> late, endSpread;
    std::map<std::string, int> names;
    for (const MatchedCollective* m : ms_) {
      late.push_back(m->lateNs);
      endSpread.push_back(m->endSpreadNs);
      names[m->name + (m->dims.empty() ? "" : " " + m->dims)]++;
    }
    std::string nameText;
    for (const auto& [nm, k] : names) nameText += (nameText.empty() ? "" : ", ") + std::to_string(k) + "x " + nm;
    o += "  group '" + pg + "'" + (ms_.front()->pgInferred ? " (inferred)" : "") + ": " + std::to_string(ms_.size()) +
         " matched (" + nameText + "), " + std::to_string(unmatchedByPg[pg]) +
         " not; last arrival after the others' median " + spreadText(late) + "; ends spread " + spreadText(endSpread) +
         "\n";
  }
  o += "findings:\n";
  size_t count = 0;
  for (const Hang& h : r.hangs) o += "  - hang: " + h.text + "\n", ++count;
  for (const Straggler& s : r.stragglers) o += "  - straggler: " + s.text + "\n", ++count;
  for (const UnmatchedCollective& u : r.unmatched)
    if (u.reason == "outside_window" || u.reason == "truncated") {
      o += "  - unmatched: " + u.name + " " + u.dims + " #" + std::to_string(u.index) + " on process group '" + u.pg +
           "' is in the traces of ranks " + intList(u.presentRanks) + " but not of " + intList(u.missingRanks) +
           (u.reason == "truncated" ? ", whose trace is truncated (what it did then is not in its file)\n"
                                    : ", whose trace ends before the others reached it\n");
      ++count;
    }
  for (const JobFinding& f : r.findings) o += "  - " + f.kind + ": " + f.text + "\n", ++count;
  if (!count) o += "  none\n";
  return o;
}

std::string jobJson(const JobReport& r) {
  std::string o = "{";
  kv(o, "headline", jsonString(r.headline), true);
  kv(o, "fix", jsonString(r.fix));
  kv(o, "world_size", num(r.worldSize));
  kv(o, "backend", jsonString(r.backend));
  kv(o, "steps", jsonStringArray(r.steps));
  kv(o, "median_step_ns", num(r.medianStepNs));
  kv(o, "jitter_ns", num(r.jitterNs));
  kv(o, "threshold_ns", num(r.thresholdNs));
  o += ", \"groups\": [";
  for (size_t i = 0; i < r.groups.size(); ++i) {
    o += i ? ", {" : "{";
    kv(o, "name", jsonString(r.groups[i].name), true);
    kv(o, "desc", jsonString(r.groups[i].desc));
    kv(o, "ranks", intList(r.groups[i].ranks));
    o += "}";
  }
  o += "]";
  o += ", \"ranks\": [";
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankSummary& s = r.ranks[i];
    o += i ? ", {" : "{";
    kv(o, "rank", num(s.rank), true);
    kv(o, "file", jsonString(s.file));
    kv(o, "rank_from", jsonString(s.rankFrom));
    kv(o, "host", jsonString(s.host));
    kv(o, "host_from", jsonString(s.hostFrom));
    kv(o, "collectives", num(static_cast<int64_t>(s.collectives.size())));
    if (s.truncated.empty()) {
      kv(o, "truncated", "null");
    } else {
      std::string last;
      for (const StepFigures& f : i < r.figures.size() ? r.figures[i] : std::vector<StepFigures>{})
        if (!f.beyondEnd) last = f.step;
      o += ", \"truncated\": {";
      kv(o, "reader", jsonString(s.truncated), true);
      kv(o, "last_event_ns", num(s.traceEndNs - (i < r.clock.ranks.size() ? r.clock.ranks[i].appliedNs : 0)));
      kv(o, "last_complete_step", jsonString(last));
      o += "}";
    }
    o += ", \"steps\": [";
    const auto& fs = i < r.figures.size() ? r.figures[i] : std::vector<StepFigures>{};
    for (size_t k = 0; k < fs.size(); ++k) {
      const StepFigures& f = fs[k];
      o += k ? ", {" : "{";
      kv(o, "name", jsonString(f.step), true);
      kv(o, "start_ns", num(f.startNs));
      kv(o, "step_ns", num(f.stepNs));
      kv(o, "compute_ns", num(f.computeNs));
      kv(o, "comm_ns", num(f.commNs));
      kv(o, "exposed_comm_ns", num(f.exposedCommNs));
      kv(o, "overlapped_comm_ns", num(f.overlappedCommNs));
      kv(o, "wait_for_last_ns", num(f.waitForLastNs));
      kv(o, "imposed_ns", num(f.imposedNs));
      kv(o, "beyond_end", f.beyondEnd ? "true" : "false");
      kv(o, "collectives", num(f.collectives));
      kv(o, "arrived_last", num(f.arrivedLast));
      kv(o, "cause", jsonString(f.cause));
      kv(o, "cause_label", jsonString(f.causeLabel));
      kv(o, "cause_ns", num(f.causeNs));
      o += "}";
    }
    o += "]}";
  }
  o += "], \"clock\": {";
  kv(o, "method", jsonString(r.clock.method), true);
  kv(o, "reference_rank", num(r.clock.referenceRank));
  std::string offs, unc, est, spread;
  for (const RankClock& c : r.clock.ranks) {
    const std::string k = jsonString(std::to_string(c.rank)) + ": ";
    offs += (offs.empty() ? "" : ", ") + k + num(c.appliedNs);
    est += (est.empty() ? "" : ", ") + k + num(c.estimateNs);
    unc += (unc.empty() ? "" : ", ") + k + num(c.uncertaintyNs);
    spread += (spread.empty() ? "" : ", ") + k + num(c.spreadNs);
  }
  o += ", \"offsets_ns\": {" + offs + "}, \"estimated_ns\": {" + est + "}, \"uncertainty_ns\": {" + unc +
       "}, \"spread_ns\": {" + spread + "}}";
  o += ", \"collectives\": {";
  kv(o, "method", jsonString(r.matchMethods), true);
  o += ", \"matched\": [";
  for (size_t i = 0; i < r.matched.size(); ++i) {
    const MatchedCollective& m = r.matched[i];
    o += i ? ", {" : "{";
    kv(o, "pg", jsonString(m.pg), true);
    kv(o, "pg_inferred", m.pgInferred ? "true" : "false");
    kv(o, "index", num(m.index));
    kv(o, "method", jsonString(m.method));
    kv(o, "name", jsonString(m.name));
    kv(o, "dims", jsonString(m.dims));
    kv(o, "nelems", num(m.nelems));
    kv(o, "seq", num(m.seq));
    kv(o, "comms_id", jsonString(m.commsId));
    kv(o, "step", jsonString(m.step));
    kv(o, "slot", num(m.slot));
    std::vector<int64_t> ranks;
    for (const Part& p : m.parts) ranks.push_back(r.ranks[p.first].rank);
    kv(o, "ranks", intList(ranks));
    kv(o, "last_rank", num(m.lastRank));
    kv(o, "late_ns", num(m.lateNs));
    kv(o, "gap_ns", num(m.gapNs));
    kv(o, "straggled", m.straggled ? "true" : "false");
    kv(o, "late_ranks", intList(m.lateRanks));
    kv(o, "imposed_ns", num(m.imposedNs));
    kv(o, "arrival_skew_ns", num(m.lastArrivalNs - m.firstArrivalNs));
    kv(o, "end_spread_ns", num(m.endSpreadNs));
    o += "}";
  }
  o += "], \"unmatched\": [";
  for (size_t i = 0; i < r.unmatched.size(); ++i) {
    const UnmatchedCollective& u = r.unmatched[i];
    o += i ? ", {" : "{";
    kv(o, "pg", jsonString(u.pg), true);
    kv(o, "index", num(u.index));
    kv(o, "name", jsonString(u.name));
    kv(o, "dims", jsonString(u.dims));
    kv(o, "present_ranks", intList(u.presentRanks));
    kv(o, "missing_ranks", intList(u.missingRanks));
    kv(o, "reason", jsonString(u.reason));
    o += "}";
  }
  o += "], \"per_rank\": {";
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    int matched = 0;
    for (const MatchedCollective& m : r.matched)
      for (const Part& p : m.parts) matched += p.first == i;
    o += (i ? ", " : "") + jsonString(std::to_string(r.ranks[i].rank)) +
         ": {\"issued\": " + num(static_cast<int64_t>(r.ranks[i].collectives.size())) +
         ", \"matched\": " + num(matched) + "}";
  }
  o += "}}, \"stragglers\": [";
  for (size_t i = 0; i < r.stragglers.size(); ++i) {
    const Straggler& s = r.stragglers[i];
    o += i ? ", {" : "{";
    kv(o, "rank", num(s.rank), true);
    kv(o, "ranks", intList(s.ranks));
    kv(o, "who", jsonString(s.who));
    kv(o, "host", jsonString(s.host));
    kv(o, "whole_host", s.wholeHost ? "true" : "false");
    kv(o, "steps", jsonStringArray(s.steps));
    kv(o, "steps_with_collectives", num(s.stepsWithCollectives));
    kv(o, "persistent", s.persistent ? "true" : "false");
    kv(o, "late_ns", num(s.lateNs));
    kv(o, "min_late_ns", num(s.minLateNs));
    kv(o, "max_late_ns", num(s.maxLateNs));
    kv(o, "total_late_ns", num(s.totalLateNs));
    kv(o, "step_share", jsonNumber(s.stepShare));
    kv(o, "job_share", jsonNumber(s.jobShare));
    kv(o, "cause", jsonString(s.cause));
    kv(o, "region", jsonString(s.region));
    kv(o, "region_ns", num(s.regionNs));
    kv(o, "others_region_ns", num(s.othersRegionNs));
    kv(o, "work_ratio", jsonNumber(s.workRatio));
    kv(o, "group", jsonString(s.group));
    kv(o, "collective_ns", num(s.collectiveNs));
    kv(o, "others_collective_ns", num(s.othersCollectiveNs));
    kv(o, "fix", jsonString(s.fix));
    kv(o, "text", jsonString(s.text));
    o += "}";
  }
  o += "], \"straggler_rule\": " + jsonString(r.stragglerRule) + ", \"hangs\": [";
  for (size_t i = 0; i < r.hangs.size(); ++i) {
    const Hang& h = r.hangs[i];
    o += i ? ", {" : "{";
    kv(o, "collective", jsonString(h.collective), true);
    kv(o, "pg", jsonString(h.pg));
    kv(o, "index", num(h.index));
    kv(o, "missing_ranks", intList(h.missingRanks));
    kv(o, "waiting_ranks", intList(h.waitingRanks));
    kv(o, "waited_ns", num(h.waitedNs));
    kv(o, "blocked_in", jsonString(h.blockedIn));
    kv(o, "step", jsonString(h.step));
    kv(o, "missing_rank_traced_past", h.tracedPast ? "true" : "false");
    kv(o, "text", jsonString(h.text));
    o += "}";
  }
  o += "], \"findings\": [";
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const JobFinding& f = r.findings[i];
    o += i ? ", {" : "{";
    kv(o, "kind", jsonString(f.kind), true);
    kv(o, "text", jsonString(f.text));
    kv(o, "ranks", intList(f.ranks));
    o += "}";
  }
  return o + "]}\n";
}

}  // namespace attnscope::ranks
