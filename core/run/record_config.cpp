#include "core/run/record_config.h"

#include <charconv>
#include <regex>

#include "core/text/json_out.h"
#include "core/text/shell_quote.h"

namespace attnscope {

namespace {

bool parseCount(std::string_view s, int lo, int hi, int* out) {
  int v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

std::string baseName(std::string_view p) {
  const auto slash = p.find_last_of('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

bool isTorchrun(std::string_view word) { return baseName(word) == "torchrun"; }
bool looksLikePython(std::string_view word) { return baseName(word).starts_with("python"); }

// torchrun's options that one host can honour; the rest are refused by name.
std::optional<std::string> parseTorchrun(const std::vector<std::string>& cmd, size_t i, RecordConfig* c) {
  for (; i < cmd.size(); ++i) {
    std::string opt = cmd[i];
    if (!opt.starts_with("-")) break;
    std::string val;
    bool hasVal = false;
    if (const auto eq = opt.find('='); eq != std::string::npos) {
      val = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
      hasVal = true;
    }
    auto need = [&]() -> bool {
      if (hasVal) return true;
      if (i + 1 >= cmd.size()) return false;
      val = cmd[++i];
      return true;
    };
    if (opt == "--nproc-per-node" || opt == "--nproc_per_node") {
      if (!need() || !parseCount(val, 1, 256, &c->nproc))
        return "record: torchrun's " + opt + " takes a number of processes (1-256), got '" + val + "'";
    } else if (opt == "--standalone") {
      if (hasVal) return "record: torchrun's --standalone takes no value";
    } else if (opt == "--nnodes") {
      if (!need() || (val != "1" && val != "1:1"))
        return "record: torchrun --nnodes " + val +
               ": record runs the ranks of one host (--nnodes 1); record each host's ranks on that host";
    } else if (opt == "-m" || opt == "--module") {
      if (i + 1 >= cmd.size()) return std::string("record: torchrun -m needs a module");
      c->module = cmd[++i];
      c->args.assign(cmd.begin() + static_cast<std::ptrdiff_t>(i) + 1, cmd.end());
      return std::nullopt;
    } else {
      return "record: torchrun's " + opt +
             " is not one record translates (it runs --nproc-per-node N processes of one host, "
             "with RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set as torchrun does); "
             "use attnscope-cli record --nproc N -- python SCRIPT";
    }
  }
  if (i >= cmd.size()) return std::string("record: torchrun needs a script");
  c->script = cmd[i];
  c->args.assign(cmd.begin() + static_cast<std::ptrdiff_t>(i) + 1, cmd.end());
  return std::nullopt;
}

std::optional<std::string> parseCommand(const std::vector<std::string>& cmd, RecordConfig* c) {
  if (cmd.empty())
    return std::string("record: no command after '--' (attnscope-cli record [OPTIONS] -- python train.py ARGS...)");
  size_t i = 0;
  if (isTorchrun(cmd[0])) return parseTorchrun(cmd, 1, c);
  if (!cmd[0].ends_with(".py")) {
    if (!looksLikePython(cmd[0]) && c->python.empty())
      return "record: '" + cmd[0] +
             "' is neither a Python interpreter nor a .py script; the command is python SCRIPT ARGS, "
             "python -m MODULE ARGS, SCRIPT.py ARGS or torchrun --nproc-per-node N SCRIPT ARGS";
    if (c->python.empty()) c->python = cmd[0];
    i = 1;
    // The interpreter's own flags that change nothing we rely on.
    while (i < cmd.size() && (cmd[i] == "-u" || cmd[i] == "-B" || cmd[i] == "-O")) ++i;
    if (i < cmd.size() && cmd[i] == "-m") {
      if (i + 1 >= cmd.size()) return std::string("record: python -m needs a module");
      if (cmd[i + 1] == "torch.distributed.run" || cmd[i + 1] == "torch.distributed.launch")
        return parseTorchrun(cmd, i + 2, c);
      c->module = cmd[i + 1];
      c->args.assign(cmd.begin() + static_cast<std::ptrdiff_t>(i) + 2, cmd.end());
      return std::nullopt;
    }
    if (i < cmd.size() && cmd[i].starts_with("-"))
      return "record: the Python option '" + cmd[i] + "' is not one record passes on (it takes -u, -B, -O and -m)";
  }
  if (i >= cmd.size()) return std::string("record: no script after the interpreter (python SCRIPT ARGS...)");
  c->script = cmd[i];
  c->args.assign(cmd.begin() + static_cast<std::ptrdiff_t>(i) + 1, cmd.end());
  return std::nullopt;
}

}  // namespace

std::string_view recordSyncName(RecordSync s) {
  switch (s) {
    case RecordSync::None:
      return "none";
    case RecordSync::Step:
      return "step";
    case RecordSync::Blocking:
      return "blocking";
  }
  return "none";
}

std::optional<std::string> parseRecordArgs(const std::vector<std::string>& args, RecordConfig* cfg) {
  RecordConfig c;
  size_t i = 0;
  bool sawDashDash = false;
  for (; i < args.size(); ++i) {
    std::string opt = args[i];
    if (opt == "--") {
      sawDashDash = true;
      ++i;
      break;
    }
    std::string val;
    bool hasVal = false;
    if (const auto eq = opt.find('='); opt.starts_with("--") && eq != std::string::npos) {
      val = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
      hasVal = true;
    }
    auto need = [&]() -> std::optional<std::string> {
      if (hasVal) return std::nullopt;
      if (i + 1 >= args.size() || args[i + 1] == "--") return "record: " + opt + " needs a value";
      val = args[++i];
      return std::nullopt;
    };
    auto flag = [&](bool* b) -> std::optional<std::string> {
      if (hasVal) return "record: " + opt + " takes no value, got '" + val + "'";
      *b = true;
      return std::nullopt;
    };
    auto count = [&](int lo, int hi, int* out) -> std::optional<std::string> {
      if (auto e = need()) return e;
      if (!parseCount(val, lo, hi, out))
        return "record: " + opt + " takes a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
               ", got '" + val + "'";
      return std::nullopt;
    };
    std::optional<std::string> err;
    if (opt == "--python") {
      if (!(err = need())) c.python = val;
    } else if (opt == "--cwd") {
      if (!(err = need())) c.cwd = val;
    } else if (opt == "--step-fn") {
      if (!(err = need())) {
        const auto colon = val.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == val.size())
          return "record: --step-fn takes module:function (e.g. __main__:train_step or mypkg.loop:step), got '" + val +
                 "'";
        c.stepFn = val;
      }
    } else if (opt == "--wrap-modules") {
      if (!(err = need())) {
        if (val.empty()) return std::string("record: --wrap-modules takes none, children or a regular expression");
        if (val != "none" && val != "children") {
          try {
            std::regex check(val, std::regex::ECMAScript);
          } catch (const std::regex_error&) {
            return "record: --wrap-modules '" + val + "' is not a regular expression (none, children or a REGEX)";
          }
        }
        c.wrapModules = val;
      }
    } else if (opt == "--sync") {
      if (!(err = need())) {
        if (val == "none")
          c.sync = RecordSync::None;
        else if (val == "step")
          c.sync = RecordSync::Step;
        else if (val == "blocking")
          c.sync = RecordSync::Blocking;
        else
          return "record: --sync takes none, step or blocking, got '" + val + "'";
      }
    } else if (opt == "--wait") {
      err = count(1, 100000, &c.wait);
    } else if (opt == "--warmup") {
      // Kineto started without a warm-up step crashed torch 2.11 (SIGSEGV in the first recorded step's
      // backward) in 3 of 10 runs of a small CPU training loop: one step of warm-up is the least.
      err = count(1, 100000, &c.warmup);
    } else if (opt == "--active") {
      err = count(1, 100000, &c.active);
    } else if (opt == "--baseline") {
      err = count(0, 100000, &c.baseline);
    } else if (opt == "--nproc") {
      err = count(1, 256, &c.nproc);
    } else if (opt == "--record-shapes") {
      err = flag(&c.recordShapes);
    } else if (opt == "--profile-memory") {
      err = flag(&c.profileMemory);
    } else if (opt == "--with-stack") {
      err = flag(&c.withStack);
    } else if (opt == "--keep-running") {
      err = flag(&c.keepRunning);
    } else if (opt == "--out") {
      if (!(err = need())) c.out = val;
    } else if (opt == "--progress") {
      if (!(err = need())) {
        if (val != "json") return "record: --progress takes json, got '" + val + "'";
        c.progressJson = true;
      }
    } else if (opt.starts_with("-")) {
      return "record: unknown option '" + opt +
             "' (attnscope-cli record --help lists them; the script's own "
             "arguments go after '--')";
    } else {
      return "record: '" + opt +
             "' before '--': the command goes after it (attnscope-cli record [OPTIONS] -- "
             "python " +
             opt + " ...)";
    }
    if (err) return err;
  }
  if (!sawDashDash) return std::string("record: no command: attnscope-cli record [OPTIONS] -- python train.py ARGS...");
  const int nprocOption = c.nproc;
  c.nproc = 1;
  if (auto e = parseCommand(std::vector<std::string>(args.begin() + static_cast<std::ptrdiff_t>(i), args.end()), &c))
    return e;
  if (nprocOption > 1 && c.nproc > 1 && nprocOption != c.nproc)
    return "record: --nproc " + std::to_string(nprocOption) + " and torchrun's --nproc-per-node " +
           std::to_string(c.nproc) + " disagree";
  c.nproc = std::max(c.nproc, nprocOption);
  *cfg = std::move(c);
  return std::nullopt;
}

std::string recordPython(const RecordConfig& cfg) { return cfg.python.empty() ? "python3" : cfg.python; }

std::vector<std::string> toRecordArgs(const RecordConfig& c) {
  const RecordConfig d;
  std::vector<std::string> a;
  if (!c.cwd.empty()) a.insert(a.end(), {"--cwd", c.cwd});
  if (c.stepFn != d.stepFn) a.insert(a.end(), {"--step-fn", c.stepFn});
  if (c.wrapModules != d.wrapModules) a.insert(a.end(), {"--wrap-modules", c.wrapModules});
  if (c.sync != d.sync) a.insert(a.end(), {"--sync", std::string(recordSyncName(c.sync))});
  if (c.wait != d.wait) a.insert(a.end(), {"--wait", std::to_string(c.wait)});
  if (c.warmup != d.warmup) a.insert(a.end(), {"--warmup", std::to_string(c.warmup)});
  if (c.active != d.active) a.insert(a.end(), {"--active", std::to_string(c.active)});
  if (c.baseline != d.baseline) a.insert(a.end(), {"--baseline", std::to_string(c.baseline)});
  if (c.nproc != 1) a.insert(a.end(), {"--nproc", std::to_string(c.nproc)});
  if (c.recordShapes) a.push_back("--record-shapes");
  if (c.profileMemory) a.push_back("--profile-memory");
  if (c.withStack) a.push_back("--with-stack");
  if (c.keepRunning) a.push_back("--keep-running");
  if (c.progressJson) a.insert(a.end(), {"--progress", "json"});
  if (!c.out.empty()) a.insert(a.end(), {"--out", c.out});
  if (!c.python.empty()) a.insert(a.end(), {"--python", c.python});
  a.push_back("--");
  if (!c.module.empty()) {
    a.insert(a.end(), {recordPython(c), "-m", c.module});
  } else {
    if (!c.python.empty() || !c.script.ends_with(".py")) a.push_back(recordPython(c));
    a.push_back(c.script);
  }
  a.insert(a.end(), c.args.begin(), c.args.end());
  return a;
}

std::string recordConfigJson(const RecordConfig& c, std::string_view out, std::string_view result,
                             std::string_view command, std::string_view argv0) {
  std::string j = "{";
  auto str = [&](std::string_view k, std::string_view v) { j += jsonString(k) + ": " + jsonString(v) + ", "; };
  auto num = [&](std::string_view k, int v) { j += jsonString(k) + ": " + std::to_string(v) + ", "; };
  auto boolean = [&](std::string_view k, bool v) { j += jsonString(k) + ": " + (v ? "true" : "false") + ", "; };
  str("script", c.script);
  str("argv0", argv0.empty() ? std::string_view(c.script) : argv0);
  str("module", c.module);
  j += "\"args\": " + jsonStringArray(c.args) + ", ";
  str("cwd", c.cwd);
  str("step_fn", c.stepFn);
  str("wrap_modules", c.wrapModules);
  str("sync", recordSyncName(c.sync));
  num("wait", c.wait);
  num("warmup", c.warmup);
  num("active", c.active);
  num("baseline", c.baseline);
  boolean("record_shapes", c.recordShapes);
  boolean("profile_memory", c.profileMemory);
  boolean("with_stack", c.withStack);
  boolean("keep_running", c.keepRunning);
  str("command", command);
  str("out", out);
  j += "\"result\": " + jsonString(result) + "}";
  return j;
}

std::string recordSummary(const RecordConfig& c) {
  std::string s = c.module.empty() ? shellQuote(baseName(c.script)) : "-m " + shellQuote(c.module);
  for (const auto& a : c.args) s += " " + shellQuote(a);
  s += ", wrap " + c.wrapModules + ", sync " + std::string(recordSyncName(c.sync));
  const int first = c.wait + c.warmup;
  s += ", steps " + std::to_string(first) + ".." + std::to_string(first + c.active - 1);
  if (c.nproc > 1) s += ", " + std::to_string(c.nproc) + " ranks";
  return s;
}

std::string recordHelp() {
  return "usage: attnscope-cli record [OPTIONS] -- python SCRIPT [ARGS...]\n"
         "       attnscope-cli record [OPTIONS] -- python -m MODULE [ARGS...]\n"
         "       attnscope-cli record [OPTIONS] -- torchrun --nproc-per-node N SCRIPT [ARGS...]\n"
         "\n"
         "Runs your unmodified training script under torch.profiler (torch's own collector: the\n"
         "tables stay torch-exact), as plain Python runs it (its __main__, __file__, __spec__, argv,\n"
         "sys.path[0] and working folder), writes the trace atomically, and prints what cost your\n"
         "steps most (with several ranks, what held the job up).\n"
         "Steps are your optimizer's steps (a global optimizer.step hook; the first optimizer that\n"
         "steps, when there are several), or calls of --step-fn; with neither, the whole run is one\n"
         "step. The profiler follows torch.profiler.schedule(wait, warmup, active); once the trace is\n"
         "written (and the baseline steps timed) the script ends, unless --keep-running.\n"
         "\n"
         "options:\n"
         "  --wrap-modules none|children|REGEX  record_function around modules, named by their\n"
         "                          qualified name (module forward hooks): none; the top-level children\n"
         "                          of each model the script calls; or those whose name matches REGEX\n"
         "                          (Python re.search, e.g. 'attn|mlp'). A torch.compile'd model is\n"
         "                          wrapped whole, from outside its compiled code   default none\n"
         "  --sync none|step|blocking  none; a device synchronize at each step's end (in\n"
         "                          'attnscope::step_sync'); or CUDA_LAUNCH_BLOCKING=1  default none\n"
         "  --step-fn MODULE:FUNCTION  steps are this function's calls (__main__:train_step for the\n"
         "                          script's own, or an importable module's; Class.method works too)\n"
         "  --wait N --warmup N --active N  torch.profiler.schedule's (wait and warmup at least 1:\n"
         "                          step 0 holds the script's set-up; without a warm-up step the\n"
         "                          profiler can crash the script)              default 2, 1, 3\n"
         "  --baseline N            after the trace, time N steps without the profiler (host clock),\n"
         "                          then N with a device sync at each step's end, so the explanation\n"
         "                          says what the profiler added (0: off)               default 3\n"
         "  --record-shapes --profile-memory --with-stack  torch.profiler's options\n"
         "  --keep-running          let the script run to its end after the trace\n"
         "  --nproc N               N processes of one host with torchrun's environment (RANK,\n"
         "                          LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT): one trace per\n"
         "                          rank in the --out folder (what `torchrun --nproc-per-node N` after\n"
         "                          '--' is translated to)\n"
         "  --python PATH           the interpreter (default: the command's, else python3); it must\n"
         "                          import torch\n"
         "  --cwd DIR               run the script in DIR (default: here)\n"
         "  --out PATH              the trace (a folder with --nproc > 1); default\n"
         "                          attnscope-record-<script>-<time>.json here (a folder of\n"
         "                          rank-R.json with --nproc)\n"
         "  --progress json         progress as JSON lines on stdout (the script's own stdout goes to\n"
         "                          stderr)\n"
         "\n"
         "Exit codes: 0 recorded; 2 bad input (no such script, a Python without torch, an option);\n"
         "3 the script failed (its trace, if any, is kept and marked partial; nothing before its first\n"
         "step ended); 4 the script starts its own profiler; 130 cancelled by Ctrl-C or SIGTERM (a trace\n"
         "written before it is kept, and said; none is left unfinished).\n";
}

}  // namespace attnscope
