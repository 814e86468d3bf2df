// Per-rank summaries cached as Arrow IPC files (summary_cache.h).
#include "core/ranks/summary_cache.h"

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "core/cache/cache_dir.h"
#include "core/snapshot/trace_snapshot.h"

namespace attnscope::ranks {

namespace fs = std::filesystem;
using ipc::Column;
using ipc::Table;

namespace {

// The tables, in the order they are written (rank last: its presence says the others are complete).
const char* const kTables[] = {"steps",          "step_phases", "collectives", "collective_before",
                               "process_groups", "notes",       "rank"};

std::string joinInts(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::vector<int64_t> splitInts(const std::string& s) {
  std::vector<int64_t> v;
  size_t at = 0;
  while (at < s.size()) {
    size_t end = s.find(',', at);
    if (end == std::string::npos) end = s.size();
    v.push_back(std::strtoll(s.substr(at, end - at).c_str(), nullptr, 10));
    at = end + 1;
  }
  return v;
}

// Reads columns by name from one table, failing once with a message naming the table and column.
struct Cols {
  const Table& t;
  std::string table;
  std::string* error;
  const Column* get(const char* name, ipc::ColumnType type) {
    const Column* c = t.column(name);
    if ((!c || c->type != type) && error->empty())
      *error = table + ".arrow has no column '" + name + "' of the expected type";
    return c && c->type == type ? c : nullptr;
  }
  int64_t i(const char* name, size_t row) {
    const Column* c = get(name, ipc::ColumnType::Int64);
    return c && row < c->ints.size() ? c->ints[row] : 0;
  }
  std::string s(const char* name, size_t row) {
    const Column* c = get(name, ipc::ColumnType::Utf8);
    return c && row < c->strings.size() ? c->strings[row] : std::string();
  }
  bool b(const char* name, size_t row) {
    const Column* c = get(name, ipc::ColumnType::Bool);
    return c && row < c->bools.size() && c->bools[row];
  }
};

}  // namespace

SummaryCacheDir summaryCacheDir(const std::string& trace) {
  const cache::CacheDir c = cache::cacheDirFor(trace, "ranks");
  return SummaryCacheDir{c.dir, c.fallback, c.why};
}

bool traceStamp(const std::string& trace, TraceStamp* out) {
  struct stat st {};
  if (::stat(trace.c_str(), &st) != 0) return false;
  out->size = static_cast<int64_t>(st.st_size);
  out->mtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return true;
}

std::vector<std::pair<std::string, Table>> summaryTables(const RankSummary& s, const TraceStamp& stamp) {
  std::vector<std::pair<std::string, Table>> out;
  auto add = [&](const std::string& name, std::vector<Column> cols) {
    Table t;
    t.columns = std::move(cols);
    t.metadata = {{"attnscope_summary_version", kSummaryCacheVersion},
                  {"attnscope_table", name},
                  {"trace", s.file},
                  {"trace_size", std::to_string(stamp.size)},
                  {"trace_mtime_ns", std::to_string(stamp.mtimeNs)}};
    out.emplace_back(name, std::move(t));
  };
  {  // steps, step_phases
    const size_t k = s.steps.size();
    std::vector<int64_t> idx(k), start(k), end(k), comp(k), comm(k), exp(k), ovl(k), causeNs(k), pStep;
    std::vector<std::string> name(k), cause(k), label(k), pName;
    std::vector<int64_t> pNs;
    for (size_t i = 0; i < k; ++i) {
      const RankStep& st = s.steps[i];
      idx[i] = static_cast<int64_t>(i);
      name[i] = st.name;
      start[i] = st.startNs, end[i] = st.endNs, comp[i] = st.computeNs, comm[i] = st.commNs;
      exp[i] = st.exposedCommNs, ovl[i] = st.overlappedCommNs, causeNs[i] = st.causeNs;
      cause[i] = st.cause, label[i] = st.causeLabel;
      for (const Activity& a : st.phases) {
        pStep.push_back(static_cast<int64_t>(i));
        pName.push_back(a.name);
        pNs.push_back(a.ns);
      }
    }
    std::vector<int64_t> rk(k, s.rank), prk(pStep.size(), s.rank);
    add("steps",
        {ipc::int64Column("rank", rk), ipc::int64Column("step", idx), ipc::utf8Column("name", name),
         ipc::int64Column("start_ns", start), ipc::int64Column("end_ns", end), ipc::int64Column("compute_ns", comp),
         ipc::int64Column("comm_ns", comm), ipc::int64Column("exposed_comm_ns", exp),
         ipc::int64Column("overlapped_comm_ns", ovl), ipc::utf8Column("cause", cause),
         ipc::utf8Column("cause_label", label), ipc::int64Column("cause_ns", causeNs)});
    add("step_phases", {ipc::int64Column("rank", prk), ipc::int64Column("step", pStep), ipc::utf8Column("name", pName),
                        ipc::int64Column("ns", pNs)});
  }
  {  // collectives, collective_before
    const size_t k = s.collectives.size();
    std::vector<int64_t> idx(k), seq(k), nel(k), issue(k), arr(k), end(k), step(k), from(k), peer(k), bIdx, bNs;
    std::vector<std::string> name(k), op(k), kind(k), pg(k), cid(k), dims(k), dtype(k), thread(k), blocked(k), bName;
    std::vector<bool> inferred(k), cut(k);
    std::vector<double> ms(k);
    for (size_t i = 0; i < k; ++i) {
      const Collective& c = s.collectives[i];
      idx[i] = static_cast<int64_t>(i);
      name[i] = c.name, op[i] = c.op, kind[i] = c.kind, pg[i] = c.pg, cid[i] = c.commsId, dims[i] = c.dims;
      dtype[i] = c.dtype, thread[i] = c.thread, blocked[i] = c.blockedIn;
      inferred[i] = c.pgInferred, cut[i] = c.cut;
      seq[i] = c.seq, nel[i] = c.nelems, issue[i] = c.issueNs, arr[i] = c.arrivalNs, end[i] = c.endNs;
      step[i] = c.step, from[i] = c.beforeFromNs, peer[i] = c.peerWaitNs;
      ms[i] = static_cast<double>(c.endNs - c.arrivalNs) / 1e6;
      for (const Activity& a : c.before) {
        bIdx.push_back(static_cast<int64_t>(i));
        bName.push_back(a.name);
        bNs.push_back(a.ns);
      }
    }
    std::vector<int64_t> rk(k, s.rank), brk(bIdx.size(), s.rank);
    add("collectives", {ipc::int64Column("rank", rk),
                        ipc::int64Column("index", idx),
                        ipc::utf8Column("name", name),
                        ipc::utf8Column("op", op),
                        ipc::utf8Column("kind", kind),
                        ipc::utf8Column("pg", pg),
                        ipc::boolColumn("pg_inferred", inferred),
                        ipc::int64Column("seq", seq),
                        ipc::utf8Column("comms_id", cid),
                        ipc::utf8Column("dims", dims),
                        ipc::int64Column("nelems", nel),
                        ipc::utf8Column("dtype", dtype),
                        ipc::int64Column("issue_ns", issue),
                        ipc::int64Column("arrival_ns", arr),
                        ipc::int64Column("end_ns", end),
                        ipc::boolColumn("cut", cut),
                        ipc::int64Column("step", step),
                        ipc::utf8Column("thread", thread),
                        ipc::utf8Column("blocked_in", blocked),
                        ipc::int64Column("before_from_ns", from),
                        ipc::int64Column("peer_wait_ns", peer),
                        ipc::float64Column("duration_ms", ms)});
    add("collective_before", {ipc::int64Column("rank", brk), ipc::int64Column("collective", bIdx),
                              ipc::utf8Column("name", bName), ipc::int64Column("ns", bNs)});
  }
  {  // process_groups, notes
    const size_t k = s.dist.pgConfig.size();
    std::vector<std::string> name(k), desc(k), backend(k), ranks(k);
    std::vector<int64_t> size(k);
    for (size_t i = 0; i < k; ++i) {
      const ProcessGroupConfig& p = s.dist.pgConfig[i];
      name[i] = p.name, desc[i] = p.desc, backend[i] = p.backendConfig, size[i] = p.size;
      ranks[i] = joinInts(p.ranks);
    }
    add("process_groups",
        {ipc::utf8Column("name", name), ipc::utf8Column("desc", desc), ipc::utf8Column("backend_config", backend),
         ipc::int64Column("size", size), ipc::utf8Column("ranks", ranks)});
    add("notes", {ipc::utf8Column("note", s.notes)});
  }
  add("rank", {ipc::utf8Column("file", {s.file}), ipc::int64Column("rank", {s.rank}),
               ipc::utf8Column("rank_from", {s.rankFrom}), ipc::utf8Column("host", {s.host}),
               ipc::utf8Column("host_from", {s.hostFrom}), ipc::utf8Column("truncated", {s.truncated}),
               ipc::boolColumn("has_device", {s.hasDevice}), ipc::int64Column("trace_start_ns", {s.traceStartNs}),
               ipc::int64Column("trace_end_ns", {s.traceEndNs}), ipc::boolColumn("dist_present", {s.dist.present}),
               ipc::utf8Column("backend", {s.dist.backend}), ipc::int64Column("dist_rank", {s.dist.rank}),
               ipc::int64Column("world_size", {s.dist.worldSize}), ipc::int64Column("pg_count", {s.dist.pgCount}),
               ipc::boolColumn("has_pg_config", {s.dist.hasPgConfig}),
               ipc::int64Column("steps", {static_cast<int64_t>(s.steps.size())}),
               ipc::int64Column("collectives", {static_cast<int64_t>(s.collectives.size())})});
  return out;
}

bool summaryFromTables(const std::vector<std::pair<std::string, Table>>& tables, RankSummary* out, std::string* error) {
  auto find = [&](const std::string& name) -> const Table* {
    for (const auto& [n, t] : tables)
      if (n == name) return &t;
    if (error->empty()) *error = "no " + name + ".arrow";
    return nullptr;
  };
  RankSummary s;
  const Table* rank = find("rank");
  const Table* steps = find("steps");
  const Table* phases = find("step_phases");
  const Table* colls = find("collectives");
  const Table* before = find("collective_before");
  const Table* pgs = find("process_groups");
  const Table* notes = find("notes");
  if (!error->empty()) return false;
  Cols r{*rank, "rank", error};
  if (rank->rows() != 1) *error = "rank.arrow has " + std::to_string(rank->rows()) + " rows, not 1";
  s.file = r.s("file", 0), s.rank = r.i("rank", 0), s.rankFrom = r.s("rank_from", 0);
  s.host = r.s("host", 0), s.hostFrom = r.s("host_from", 0), s.truncated = r.s("truncated", 0);
  s.hasDevice = r.b("has_device", 0), s.traceStartNs = r.i("trace_start_ns", 0), s.traceEndNs = r.i("trace_end_ns", 0);
  s.dist.present = r.b("dist_present", 0), s.dist.backend = r.s("backend", 0), s.dist.rank = r.i("dist_rank", 0);
  s.dist.worldSize = r.i("world_size", 0), s.dist.pgCount = r.i("pg_count", 0);
  s.dist.hasPgConfig = r.b("has_pg_config", 0);
  Cols st{*steps, "steps", error};
  for (size_t i = 0; i < static_cast<size_t>(steps->rows()); ++i) {
    RankStep x;
    x.name = st.s("name", i), x.startNs = st.i("start_ns", i), x.endNs = st.i("end_ns", i);
    x.computeNs = st.i("compute_ns", i), x.commNs = st.i("comm_ns", i), x.exposedCommNs = st.i("exposed_comm_ns", i);
    x.overlappedCommNs = st.i("overlapped_comm_ns", i), x.cause = st.s("cause", i);
    x.causeLabel = st.s("cause_label", i), x.causeNs = st.i("cause_ns", i);
    s.steps.push_back(std::move(x));
  }
  Cols ph{*phases, "step_phases", error};
  for (size_t i = 0; i < static_cast<size_t>(phases->rows()); ++i) {
    const int64_t k = ph.i("step", i);
    if (k < 0 || static_cast<size_t>(k) >= s.steps.size()) {
      if (error->empty()) *error = "step_phases.arrow names step " + std::to_string(k) + ", which steps.arrow lacks";
      break;
    }
    s.steps[static_cast<size_t>(k)].phases.push_back({ph.s("name", i), ph.i("ns", i)});
  }
  Cols co{*colls, "collectives", error};
  for (size_t i = 0; i < static_cast<size_t>(colls->rows()); ++i) {
    Collective c;
    c.name = co.s("name", i), c.op = co.s("op", i), c.kind = co.s("kind", i), c.pg = co.s("pg", i);
    c.pgInferred = co.b("pg_inferred", i), c.seq = co.i("seq", i), c.commsId = co.s("comms_id", i);
    c.dims = co.s("dims", i), c.nelems = co.i("nelems", i), c.dtype = co.s("dtype", i);
    c.issueNs = co.i("issue_ns", i), c.arrivalNs = co.i("arrival_ns", i), c.endNs = co.i("end_ns", i);
    c.cut = co.b("cut", i), c.step = static_cast<int>(co.i("step", i)), c.thread = co.s("thread", i);
    c.blockedIn = co.s("blocked_in", i), c.beforeFromNs = co.i("before_from_ns", i);
    c.peerWaitNs = co.i("peer_wait_ns", i);
    s.collectives.push_back(std::move(c));
  }
  Cols be{*before, "collective_before", error};
  for (size_t i = 0; i < static_cast<size_t>(before->rows()); ++i) {
    const int64_t k = be.i("collective", i);
    if (k < 0 || static_cast<size_t>(k) >= s.collectives.size()) {
      if (error->empty())
        *error = "collective_before.arrow names collective " + std::to_string(k) + ", which collectives.arrow lacks";
      break;
    }
    s.collectives[static_cast<size_t>(k)].before.push_back({be.s("name", i), be.i("ns", i)});
  }
  Cols pg{*pgs, "process_groups", error};
  for (size_t i = 0; i < static_cast<size_t>(pgs->rows()); ++i)
    s.dist.pgConfig.push_back({.name = pg.s("name", i),
                               .desc = pg.s("desc", i),
                               .backendConfig = pg.s("backend_config", i),
                               .size = pg.i("size", i),
                               .ranks = splitInts(pg.s("ranks", i))});
  Cols no{*notes, "notes", error};
  for (size_t i = 0; i < static_cast<size_t>(notes->rows()); ++i) s.notes.push_back(no.s("note", i));
  if (!error->empty()) return false;
  *out = std::move(s);
  return true;
}

bool writeSummaryCache(const std::string& trace, const RankSummary& s, std::string* dir, std::string* note,
                       std::string* error) {
  TraceStamp stamp;
  if (!traceStamp(trace, &stamp)) {
    *error = trace + ": cannot read its size and time";
    return false;
  }
  const SummaryCacheDir d = summaryCacheDir(trace);
  std::error_code ec;
  fs::create_directories(d.dir, ec);
  if (ec) {
    *error = d.dir + ": cannot create the summary cache folder (" + ec.message() + ")";
    return false;
  }
  *dir = d.dir;
  if (d.fallback) *note = d.why + ": its summary is cached in " + d.dir;
  for (const auto& [name, table] : summaryTables(s, stamp))
    if (!ipc::writeFile((fs::path(d.dir) / (name + ".arrow")).string(), table, error)) return false;
  return true;
}

bool readSummaryCache(const std::string& trace, RankSummary* out, std::string* why) {
  TraceStamp stamp;
  if (!traceStamp(trace, &stamp)) {
    *why = trace + ": cannot read its size and time";
    return false;
  }
  const SummaryCacheDir d = summaryCacheDir(trace);
  const fs::path rankFile = fs::path(d.dir) / "rank.arrow";
  std::error_code ec;
  if (!fs::exists(rankFile, ec)) {
    *why = "no cached summary in " + d.dir;
    return false;
  }
  std::vector<std::pair<std::string, Table>> tables;
  for (const char* name : kTables) {
    Table t;
    std::string error;
    if (!ipc::readFile((fs::path(d.dir) / (std::string(name) + ".arrow")).string(), &t, &error)) {
      *why = error;
      return false;
    }
    if (t.meta("attnscope_summary_version") != kSummaryCacheVersion ||
        t.meta("trace_size") != std::to_string(stamp.size) ||
        t.meta("trace_mtime_ns") != std::to_string(stamp.mtimeNs)) {
      *why = "the cached summary in " + d.dir + " is stale (another cache version, or the trace changed)";
      return false;
    }
    tables.emplace_back(name, std::move(t));
  }
  std::string error;
  if (!summaryFromTables(tables, out, &error)) {
    *why = d.dir + ": " + error;
    return false;
  }
  out->file = trace;
  return true;
}

bool summarizeFile(const std::string& trace, const ReaderLimits& limits, RankSummary* out, std::string* error,
                   std::string* warning) {
  {
    LoadResult lr = loadTrace(trace, limits);
    if (!lr.ok()) {
      *error = lr.error->what();
      return false;
    }
    if (warning && !lr.warning.empty()) *warning = trace + ": " + lr.warning;
    const auto snap = buildSnapshot(std::make_shared<const EventStore>(std::move(*lr.store)),
                                    {.shapeTables = false, .profilerStepsFirst = true, .stepsOnly = true});
    *out = summarizeRank(*snap, trace);
  }
#if defined(__GLIBC__)
  // The trace's events are freed: hand their pages back, so that the next trace of a job read in this
  // process does not add its peak to a heap left scattered by this one.
  malloc_trim(0);
#endif
  return true;
}

}  // namespace attnscope::ranks
