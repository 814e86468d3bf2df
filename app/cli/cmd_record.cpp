// `attnscope-cli record [OPTIONS] -- python train.py ARGS`: the user's own script under
// torch.profiler, with the engine's toggles (core/run/record_config.h), one trace per rank.
// The recorder is Python embedded here (resources/record/*.py); this command checks what it can
// before starting anything, starts the ranks (record_launch), and reads back what each rank wrote:
// the trace, and the recorder's result file (record_report).
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_args.h"
#include "commands.h"
#include "core/run/record_config.h"
#include "core/run/script_run.h"
#include "core/text/json_out.h"
#include "core/text/shell_quote.h"
#include "core/write/atomic_file.h"
#include "record_launch.h"
#include "record_report.h"
#include "record_runner_py.h"

namespace attnscope::cli {

namespace {

namespace fs = std::filesystem;

constexpr int kExitScriptFailed = 3;
constexpr int kExitOwnProfiler = 4;
constexpr int kExitCancelled = 130;

std::string currentDir() {
  std::error_code ec;
  const fs::path p = fs::current_path(ec);
  return ec ? std::string(".") : p.string();
}

std::string absoluteIn(const std::string& base, const std::string& p) {
  if (p.empty() || p.front() == '/') return p;
  return (fs::path(base) / p).lexically_normal().string();
}

bool executable(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// The interpreter's path: as given when it has a '/', else the first on PATH.
std::string findPython(const std::string& name, const std::string& here) {
  if (name.find('/') != std::string::npos) {
    const std::string p = absoluteIn(here, name);
    return executable(p) ? p : std::string();
  }
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(ss, dir, ':');) {
    if (dir.empty()) dir = ".";
    const std::string p = absoluteIn(here, dir + "/" + name);
    if (executable(p)) return p;
  }
  return {};
}

std::string stamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

std::string stemOf(const RecordConfig& c) {
  if (!c.module.empty()) return c.module;
  std::string s = fs::path(c.script).stem().string();
  return s.empty() ? "script" : s;
}

std::string signalText(int sig) {
  const char* d = ::strsignal(sig);
  return "signal " + std::to_string(sig) + (d ? std::string(" (") + d + ")" : std::string());
}

void removeUnfinished(const std::string& out) {
  std::error_code ec;
  fs::remove(out + ".part", ec);
  const fs::path dir = fs::path(out).parent_path();
  const std::string base = fs::path(out).filename().string() + ".tmp-";
  for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec))
    if (e.path().filename().string().starts_with(base)) fs::remove(e.path(), ec);
}

}  // namespace

int cmdRecord(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      std::cout << recordHelp() << kRecordOnDemandHelp;
      return kExitOk;
    }
  }
  if (wantsOnDemand(args)) return cmdRecordOnDemand(args);  // cmd_record_on_demand.cpp
  RecordConfig cfg;
  if (auto err = parseRecordArgs(args, &cfg)) throw UsageError(*err);
  const std::string here = currentDir();
  const std::string cwd = cfg.cwd.empty() ? here : absoluteIn(here, cfg.cwd);
  std::error_code ec;
  if (!fs::is_directory(cwd, ec)) throw UsageError("record: --cwd " + cfg.cwd + ": no such folder");
  std::string script;
  if (cfg.module.empty()) {
    script = absoluteIn(cwd, cfg.script);
    if (!fs::exists(script, ec))
      throw UsageError("record: no script '" + cfg.script + "' in " + cwd + (cfg.cwd.empty() ? "" : " (--cwd)"));
    if (!fs::is_regular_file(script, ec)) throw UsageError("record: '" + cfg.script + "' is not a file");
  }
  const std::string pyName = recordPython(cfg);
  const std::string python = findPython(pyName, here);
  if (python.empty())
    throw UsageError("record: no Python interpreter '" + pyName +
                     "' (not on PATH, or not executable); choose yours: attnscope-cli record -- "
                     "/path/to/venv/bin/python train.py, or --python PATH");

  // Where the traces go: a file, or with several ranks a folder of rank-R.json.
  const bool several = cfg.nproc > 1;
  std::string out =
      cfg.out.empty() ? "attnscope-record-" + stemOf(cfg) + "-" + stamp() + (several ? "" : ".json") : cfg.out;
  out = absoluteIn(here, out);
  if (several) {
    fs::create_directories(out, ec);
    if (!fs::is_directory(out, ec)) throw UsageError("record: --out " + out + ": cannot make this folder");
  } else {
    const fs::path parent = fs::path(out).parent_path();
    if (!fs::is_directory(parent, ec)) throw UsageError("record: --out " + out + ": no folder " + parent.string());
    if (fs::is_directory(out, ec))
      throw UsageError("record: --out " + out + " is a folder (one process writes a file)");
  }

  // The recorder and its config, in a private folder removed at the end.
  std::string tmpl = (fs::temp_directory_path(ec) / "attnscope-record-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw UsageError("record: cannot make a temporary folder in " + tmpl);
  const std::string tmp = tmpl;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code e;
      fs::remove_all(dir, e);
    }
  } cleanup{tmp};
  std::string why;
  for (const auto& [name, text] : kRecordRunnerFiles)
    if (!writeFileAtomic(tmp + "/" + std::string(name), text, &why)) throw UsageError("record: " + why);
  const std::string runner = tmp + "/attnscope_record.py";
  const std::string command = shellJoin(std::vector<std::string>{"attnscope-cli", "record"}) + " " + shellJoin(args);

  std::vector<RankLaunch> ranks;
  std::vector<FileIdentity> before;
  for (int r = 0; r < cfg.nproc; ++r) {
    RankLaunch l;
    l.rank = r;
    l.out = several ? out + "/rank-" + std::to_string(r) + ".json" : out;
    l.result = tmp + "/result-" + std::to_string(r) + ".json";
    l.config = tmp + "/config-" + std::to_string(r) + ".json";
    RecordConfig c = cfg;
    c.script = script;
    if (!writeFileAtomic(l.config, recordConfigJson(c, l.out, l.result, command, cfg.script), &why))
      throw UsageError("record: " + why);
    before.push_back(identityOf(l.out));
    ranks.push_back(std::move(l));
  }
  std::ostream& report = cfg.progressJson ? std::cerr : std::cout;
  // The script's stderr is passed through to ours: where the report goes there too, a failure's last
  // lines are not printed again.
  const bool reportSeesStderr = sameDestination(cfg.progressJson ? 2 : 1, 2);
  std::cerr << "[attnscope] recording " << recordSummary(cfg) << " with " << python << "\n";

  const LaunchResult launched = launchRanks(cfg, python, runner, cwd, ranks);
  std::vector<RankReport> reports;
  for (size_t i = 0; i < ranks.size(); ++i) {
    removeUnfinished(ranks[i].out);
    reports.push_back(readBack(ranks[i], before[i], several && !launched.cancelled));
  }

  if (launched.cancelled) {
    // Ctrl-C or SIGTERM: what is complete is kept (a trace is renamed into place whole), and said.
    std::vector<std::string> kept;
    for (size_t i = 0; i < reports.size(); ++i) {
      const RankReport& r = reports[i];
      const std::string who = several ? "rank " + std::to_string(r.rank) + ": " : "";
      if (!r.trace) continue;
      kept.push_back(ranks[i].out);
      std::cerr << "attnscope-cli: record: " << who << cancelMoment(r.run) << ": " << shellQuote(kept.back()) << "\n";
    }
    if (kept.empty())
      std::cerr << "attnscope-cli: record: cancelled before the trace was complete; nothing was written\n";
    else if (kept.size() < reports.size())
      std::cerr << "attnscope-cli: record: the other ranks were cancelled before their traces were complete\n";
    if (cfg.progressJson)
      std::cout << "{\"phase\": \"cancelled\", \"message\": \"cancelled\", \"traces\": " << jsonStringArray(kept)
                << "}\n"
                << std::flush;
    return kExitCancelled;
  }

  int exitCode = kExitOk;
  std::vector<std::string> written;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankLaunch& l = ranks[i];
    const RankExit& x = launched.ranks[i];
    const RankReport& r = reports[i];
    const std::string who = several ? "rank " + std::to_string(l.rank) + ": " : "";
    auto tail = [&] {
      const std::vector<std::string> lines = stderrToShow(x.stderrTail, 12);
      if (lines.empty()) return;
      if (reportSeesStderr) {
        report << "(the script's last lines are above)\n";
        return;
      }
      report << "its last lines on stderr:\n";
      for (const std::string& line : lines) report << "  " << line << "\n";
    };
    if (!r.run) {
      // The recorder never finished: the interpreter died (a signal, os._exit) or could not start.
      report << "attnscope-cli: record: " << who << "the script ended "
             << (x.signal ? "by " + signalText(x.signal) : "with exit code " + std::to_string(x.exitCode))
             << " before attnscope could write its trace (nothing was kept)\n";
      tail();
      exitCode = std::max(exitCode, kExitScriptFailed);
      continue;
    }
    const ScriptRun& s = *r.run;
    if (s.status == "no_torch") {
      report << "attnscope-cli: record: " << python << " (Python " << s.pythonVersion << ") cannot import torch ("
             << s.detail
             << "). Run the Python of the environment your script uses: attnscope-cli record -- "
                "/path/to/venv/bin/python train.py, or --python PATH\n";
      return kExitBadInput;
    }
    if (s.status == "recorder_error") {
      report << "attnscope-cli: record: attnscope's recorder failed before your script started (" << s.detail
             << "): a bug in attnscope, please report it with the lines above\n";
      return kExitInternal;
    }
    if (s.status == "bad_step_fn") {
      report << "attnscope-cli: record: " << s.detail << "\n";
      return kExitBadInput;
    }
    if (s.status == "failed" && s.beforeFirstStep) {
      // No step ran to its end: nothing to diagnose, and nothing is kept. The failure is the script's.
      report << "attnscope-cli: record: " << who << "the script failed before its first step ended (exit code "
             << s.exitCode << (s.detail.empty() ? "" : ": " + s.detail) << "): nothing was recorded\n";
      tail();
      exitCode = std::max(exitCode, kExitScriptFailed);
      continue;
    }
    if (s.status == "own_profiler") {
      report << "attnscope-cli: record: " << who << "the script starts its own profiler at " << s.detail
             << ". A process has one profiler: CUPTI takes one subscriber per process, and torch.profiler one "
                "session, so attnscope's and the script's cannot both record. Remove the script's profiler "
                "(record does its job: steps from optimizer.step, --wait/--warmup/--active as its schedule), or "
                "run the script as it is and open the trace it writes: attnscope-cli explain TRACE\n";
      exitCode = std::max(exitCode, kExitOwnProfiler);
    } else if (s.status == "failed") {
      report << "attnscope-cli: record: " << who << "the script failed (exit code " << s.exitCode
             << (s.detail.empty() ? "" : ": " + s.detail) << ")\n";
      tail();
      exitCode = std::max(exitCode, kExitScriptFailed);
    }
    for (const std::string& n : s.notes) report << "note: " << who << n << "\n";
    if (x.cuptiTaken)
      report << "note: " << who
             << "CUPTI refused torch.profiler (another subscriber holds it in this process: Nsight Systems or "
                "Nsight Compute, or a profiler the script started): the trace has no GPU activity. CUPTI takes "
                "one subscriber per process; record without the other tool\n";
    if (!r.trace) {
      if (s.status == "complete" && !s.writeError.empty())
        report << "attnscope-cli: record: " << who << "the trace could not be written: " << s.writeError << "\n";
      else if (s.status == "complete")
        report << "attnscope-cli: record: " << who << "nothing was recorded (the script ended after " << s.stepsSeen
               << " steps, before the schedule's active steps)\n";
      exitCode = std::max(exitCode, kExitScriptFailed);
      continue;
    }
    written.push_back(l.out);
    report << (s.partial ? "recorded (partial): " : "recorded: ") << who << l.out << "\n";
    report << "  steps: " << s.stepSource << "\n";
    if (!r.readError.empty()) report << "  (could not read it back: " << r.readError << ")\n";
    if (!r.headline.empty()) report << "  " << r.headline << "\n";
    for (const std::string& n : scriptRunNotes(s))
      if (n.starts_with("the profiler's inflation") || (n.starts_with("modules wrapped") && s.wrapModules != "none"))
        report << "  " << n << "\n";
  }
  for (const std::string& n : launched.notes) report << "note: " << n << "\n";
  if (several && !written.empty()) {
    // The job as a whole: who held it up and why (attnscope-cli ranks' headline), not only rank 0's view.
    const std::string job = jobHeadline(reports);
    report << "the job (" << written.size() << " of " << ranks.size() << " ranks traced): " << out << "\n";
    if (!job.empty()) report << "  " << job << "\n";
    report << "open the job: attnscope-cli ranks " << shellQuote(out) << "   (or attnscope --job " << shellQuote(out)
           << "; one rank: attnscope-cli explain " << shellQuote(written.front()) << ")\n";
  } else if (!written.empty()) {
    report << "open it: attnscope " << shellQuote(written.front()) << "   (or attnscope-cli explain "
           << shellQuote(written.front()) << ")\n";
  }
  if (cfg.progressJson) {
    std::string j =
        "{\"phase\": \"done\", \"message\": \"done\", \"out\": " + jsonString(several ? out : ranks[0].out) +
        ", \"traces\": " + jsonStringArray(written) + ", \"exit_code\": " + std::to_string(exitCode) + "}";
    std::cout << j << "\n" << std::flush;
  }
  return exitCode;
}

}  // namespace attnscope::cli
