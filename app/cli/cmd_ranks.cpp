#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <thread>

#include "cli_args.h"
#include "commands.h"
#include "core/ranks/job.h"
#include "core/ranks/summary_cache.h"

extern char** environ;

namespace attnscope::cli {

static const char* kRanksHelp =
    "usage: attnscope-cli ranks PATH... [--format text|json] [-o FILE] [--jobs N] [--no-cache]\n"
    "                           [--cache-only] [--stats] [--list]\n"
    "       attnscope-cli ranks --summarize TRACE\n"
    "\n"
    "A distributed job's traces read together, one per rank. PATH is a trace file or a folder (its\n"
    "*.json / *.json.gz files with 'trace' in the name). Each file's rank comes from the trace's\n"
    "distributedInfo.rank, else from its name (rank-3, rank3, worker3); world size and process groups\n"
    "from distributedInfo. Missing ranks, a rank claimed twice and files from different jobs are said.\n"
    "\n"
    "Collectives (gloo's c10d ops with their gloo worker spans; NCCL/RCCL kernels with the op that\n"
    "enqueued them) are matched across ranks by Comms Id, else by process group and Seq, else by their\n"
    "order in the group checked against name and size. Each rank's clock offset is estimated from the\n"
    "matched collectives' ends (they end together on every rank) and applied where it stands out of its\n"
    "uncertainty; every cross-rank figure is on that aligned clock. Then: per rank and step, the step\n"
    "time, compute, exposed and overlapped communication, the time it waited for the last rank to\n"
    "arrive and its own top cause; the stragglers (the ranks that make the others wait, in which steps,\n"
    "by how much, and what they were doing before they arrived); the hangs (a collective some ranks\n"
    "entered and another never issued). The first line says what costs the job most.\n"
    "\n"
    "Each rank is summarised on its own (steps, collectives with their arrival times, causes) by worker\n"
    "processes, each loading one trace at a time, and the summary is cached as Arrow IPC files (pandas,\n"
    "pyarrow and DuckDB read them) in TRACE.attnscope/ next to the trace, or, when that folder is\n"
    "read-only, in $ATTNSCOPE_CACHE_DIR (else $XDG_CACHE_HOME/attnscope/ranks, else\n"
    "~/.cache/attnscope/ranks). A summary whose trace changed (size or mtime) is made again; the job\n"
    "analysis reads the summaries only, so reopening a cached job loads no trace.\n"
    "\n"
    "  --format text|json      output format (default text)\n"
    "  -o, --output FILE       write to FILE atomically instead of stdout\n"
    "  --jobs N                at most N worker processes summarising ranks (default: the cores when\n"
    "                          that is faster here: the largest trace is summarised in this process\n"
    "                          first and timed, and workers start only when they would finish sooner)\n"
    "  --no-cache              summarise every rank in this process, reading and writing no cache\n"
    "  --cache-only            use cached summaries only; exit 2 naming a trace whose summary is\n"
    "                          missing or stale (after summarising elsewhere, e.g. tools/ranks_dask.py)\n"
    "  --stats                 say on stderr how many summaries were cached or made, and how long it took\n"
    "  --list                  print the job's trace files, one a line, and stop\n"
    "  --summarize TRACE       summarise one rank's trace into its cache and print the cache folder (the\n"
    "                          unit of work of the workers and of tools/ranks_dask.py)\n";

namespace {

// The limits as options, for a worker process.
std::vector<std::string> limitArgs(const ReaderLimits& l) {
  std::vector<std::string> v;
  if (l.maxDecompressedRatio == 0) v.insert(v.end(), {"--max-decompressed", std::to_string(l.maxDecompressedBytes)});
  v.insert(v.end(), {"--max-depth", std::to_string(l.maxDepth), "--max-string", std::to_string(l.maxStringBytes),
                     "--max-events", std::to_string(l.maxEvents)});
  return v;
}

// Runs `ranks --summarize FILE` for each file in worker processes, at most `jobs` at once. Returns the
// files whose worker failed (the worker said why on stderr).
std::vector<std::string> runWorkers(const std::vector<std::string>& files, size_t jobs, const ReaderLimits& limits) {
  std::vector<std::string> failed;
  size_t next = 0, running = 0;
  std::vector<std::pair<pid_t, std::string>> pids;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const std::vector<std::string> extra = limitArgs(limits);
  while (next < files.size() || running > 0) {
    while (running < jobs && next < files.size()) {
      std::vector<std::string> args = {"attnscope-cli", "ranks", "--summarize", files[next]};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (std::string& s : args) argv.push_back(s.data());
      argv.push_back(nullptr);
      pid_t pid = 0;
      if (posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ) != 0) {
        failed.push_back(files[next++]);
        continue;
      }
      pids.emplace_back(pid, files[next++]);
      ++running;
    }
    if (running == 0) break;
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, 0);
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) break;
    for (auto& [pid, file] : pids)
      if (pid == done) {
        --running;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed.push_back(file);
        pid = 0;
      }
  }
  posix_spawn_file_actions_destroy(&fa);
  return failed;
}

int64_t fileBytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

// What starting a process of ours costs here: `ranks --help` run once, timed (a worker also writes its
// summary and this process reads it back: twice that, all told).
double processStartSeconds() {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> args = {"attnscope-cli", "ranks", "--help"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  double s = 1.0;  // cannot start one: workers cost too much
  if (posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    s = 2 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  posix_spawn_file_actions_destroy(&fa);
  return s;
}

int summarizeOne(const std::string& trace, const ReaderLimits& limits) {
  ranks::RankSummary s;
  std::string error, warning, dir, note;
  if (!ranks::summarizeFile(trace, limits, &s, &error, &warning)) throw UsageError(error);
  if (!warning.empty()) std::cerr << "attnscope-cli: warning: " << warning << "\n";
  if (!ranks::writeSummaryCache(trace, s, &dir, &note, &error)) throw UsageError(error);
  if (!note.empty() && !std::getenv("ATTNSCOPE_RANKS_WORKER")) std::cerr << "attnscope-cli: note: " << note << "\n";
  std::cout << dir << "\n";
  return kExitOk;
}

}  // namespace

int cmdRanks(Args& a) {
  if (a.wantsHelp()) {
    std::cout << kRanksHelp << kLimitsHelp;
    return kExitOk;
  }
  const auto t0 = std::chrono::steady_clock::now();
#if defined(__GLIBC__)
  // One malloc arena: the reader's threads free a trace's memory into arenas of their own, which the
  // next trace's main-thread allocations would not reuse, so each rank read here added to the peak.
  mallopt(M_ARENA_MAX, 1);
#endif
  const bool json = formatOption(a, "ranks", {"text", "json"}) == "json";
  auto out = a.value("--output", "-o");
  const auto summarize = a.value("--summarize");
  const auto jobsOpt = a.number("--jobs");
  const bool cacheOnly = a.flag("--cache-only"), stats = a.flag("--stats");
  bool noCache = a.flag("--no-cache");
  const bool list = a.flag("--list");
  const ReaderLimits limits = readerLimits(a);
  if (summarize) {
    a.positionals(0, 0);
    return summarizeOne(*summarize, limits);
  }
  if (jobsOpt && *jobsOpt == 0) throw UsageError("ranks: --jobs must be at least 1");
  if (noCache && cacheOnly) throw UsageError("ranks: --no-cache and --cache-only contradict each other");
  if (!ipc::available()) {
    // A build without Arrow: no summary files to read or write; every rank is summarised here.
    if (cacheOnly) throw UsageError(std::string("ranks: --cache-only: ") + ipc::kNoArrow);
    if (!noCache) std::cerr << "attnscope-cli: note: the summaries are not cached: " << ipc::kNoArrow << "\n";
    noCache = true;
  }
  const auto pos = a.positionals(1, 100000);
  std::string error;
  const std::vector<std::string> files = ranks::jobFiles(pos, &error);
  if (!error.empty()) throw UsageError("ranks: " + error);
  if (list) {
    std::string text;
    for (const std::string& f : files) text += f + "\n";
    emit(out, text);
    return kExitOk;
  }
  std::vector<std::string> warnings;
  ranks::JobReport r;
  size_t cached = 0, made = 0, workers = 0;
  if (noCache) {
    r = ranks::openJob(files, limits, &error, &warnings);
    if (!error.empty()) throw UsageError(error);
    made = files.size();
  } else {
    std::vector<ranks::RankSummary> summaries(files.size());
    std::vector<size_t> missing;
    std::string why;
    for (size_t i = 0; i < files.size(); ++i) {
      if (ranks::readSummaryCache(files[i], &summaries[i], &why)) {
        ++cached;
      } else {
        if (cacheOnly) throw UsageError("ranks: " + files[i] + ": --cache-only, and " + why);
        missing.push_back(i);
      }
    }
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    std::string fallbackNote;
    // One trace summarised here (its cache written, its failure to write only said): how long it took.
    auto here = [&](size_t i) {
      const auto start = std::chrono::steady_clock::now();
      std::string warning, dir, note;
      if (!ranks::summarizeFile(files[i], limits, &summaries[i], &error, &warning)) throw UsageError(error);
      if (!warning.empty()) warnings.push_back(warning);
      if (!ranks::writeSummaryCache(files[i], summaries[i], &dir, &note, &error)) {
        warnings.push_back(error + " (the summary is not cached)");
        error.clear();
      }
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    std::vector<size_t> rest = missing;
    size_t jobs = std::min<size_t>(jobsOpt ? *jobsOpt : cores, rest.size());
    if (!jobsOpt && jobs >= 2 && rest.size() >= 3) {
      // Workers only where they are faster on this machine: the largest trace is summarised here first,
      // timed; the others would take as long per byte here, one after the other, against that time split
      // over the cores plus what a worker costs each trace (a process started: timed here too).
      std::stable_sort(rest.begin(), rest.end(),
                       [&](size_t x, size_t y) { return fileBytes(files[x]) > fileBytes(files[y]); });
      const double firstS = here(rest.front());
      const double perByte = firstS / std::max<double>(1, static_cast<double>(fileBytes(files[rest.front()])));
      rest.erase(rest.begin());
      double restBytes = 0;
      for (size_t i : rest) restBytes += static_cast<double>(fileBytes(files[i]));
      const double inProcess = perByte * restBytes;
      const double startS = processStartSeconds();
      jobs = std::min<size_t>(cores, rest.size());
      const double inWorkers = (inProcess + startS * static_cast<double>(rest.size())) / static_cast<double>(jobs);
      if (inWorkers >= inProcess) jobs = 1;
    }
    if (jobs >= 2) {
      std::vector<std::string> todo;
      for (size_t i : rest) todo.push_back(files[i]);
      ::setenv("ATTNSCOPE_RANKS_WORKER", "1", 1);
      const std::vector<std::string> failed = runWorkers(todo, jobs, limits);
      ::unsetenv("ATTNSCOPE_RANKS_WORKER");
      if (!failed.empty())
        throw UsageError("ranks: " + failed.front() + ": its summary could not be made (" +
                         std::to_string(failed.size()) + " of " + std::to_string(todo.size()) +
                         " failed; the worker said why above)");
      for (size_t i : rest)
        if (!ranks::readSummaryCache(files[i], &summaries[i], &why))
          throw UsageError("ranks: " + files[i] + ": a worker summarised it, but " + why);
      workers = jobs;
    } else {
      for (size_t i : rest) here(i);  // one at a time, here
    }
    made = missing.size();
    for (const std::string& f : files)
      if (const ranks::SummaryCacheDir d = ranks::summaryCacheDir(f); d.fallback && fallbackNote.empty())
        fallbackNote = d.why + ": summaries are cached under " + d.dir.substr(0, d.dir.rfind('/'));
    if (!fallbackNote.empty() && made > 0) std::cerr << "attnscope-cli: note: " << fallbackNote << "\n";
    r = ranks::analyzeJob(std::move(summaries));
  }
  for (const std::string& w : warnings) std::cerr << "attnscope-cli: warning: " << w << "\n";
  emit(out, json ? ranks::jobJson(r) : ranks::jobText(r));
  if (stats) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    std::cerr << "attnscope-cli: ranks: " << files.size() << " traces: " << cached << " summaries from the cache, "
              << made << " made"
              << (noCache   ? " (no cache)"
                  : workers ? " by " + std::to_string(workers) + " worker processes"
                            : std::string(" here"))
              << "; " << buf << " s\n";
  }
  return kExitOk;
}

}  // namespace attnscope::cli
