// `attnscope-cli record`'s configuration: the user's own script run under torch.profiler with the
// engine's toggles generalised (steps from optimizer.step, record_function around modules, a
// device sync per step or CUDA_LAUNCH_BLOCKING, steps timed without the profiler). Torch-free,
// so it is parsed, validated and tested everywhere; the GUI's "Your script" builds one and runs
// exactly toRecordArgs(cfg).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

enum class RecordSync { None, Step, Blocking };

struct RecordConfig {
  std::string python;  // the interpreter ("" = the command's, else python3)
  std::string script;  // the script, as given (relative to cwd)
  std::string module;  // or `python -m MODULE`
  std::vector<std::string> args;
  std::string cwd;                   // "" = the current folder
  std::string stepFn;                // "module:function" ("" = optimizer.step)
  std::string wrapModules = "none";  // none | children | a regular expression over qualified names
  RecordSync sync = RecordSync::None;
  int wait = 2;  // torch.profiler.schedule's: the first steps skipped (set-up, first-call costs)
  int warmup = 1;
  int active = 3;
  int baseline = 3;  // steps timed without the profiler after the trace (host, then host+sync each)
  bool recordShapes = false;
  bool profileMemory = false;
  bool withStack = false;
  bool keepRunning = false;  // let the script run on after the trace (else it ends there)
  int nproc = 1;             // > 1: torchrun's way, one process and one trace per rank
  std::string out;           // a file (one process) or a folder (--nproc > 1); "" = a new name here
  bool progressJson = false;
  bool operator==(const RecordConfig&) const = default;
};

std::string_view recordSyncName(RecordSync s);

// Parses `attnscope-cli record [OPTIONS] -- COMMAND...`. COMMAND is `python SCRIPT ARGS`,
// `python -m MODULE ARGS`, `SCRIPT.py ARGS`, or `torchrun --nproc-per-node N SCRIPT ARGS`
// (translated to --nproc N). Returns an error naming the bad option or word, or nullopt.
std::optional<std::string> parseRecordArgs(const std::vector<std::string>& args, RecordConfig* cfg);

// The canonical argument list (round-trips through parseRecordArgs): options, "--", the command.
std::vector<std::string> toRecordArgs(const RecordConfig& cfg);

// The interpreter the run will use.
std::string recordPython(const RecordConfig& cfg);

// What the recorder reads (resources/record/attnscope_record.py's config), less the paths the
// CLI fills in per process. `command` is the user's command line, for the trace; `argv0` the script
// as the user typed it (the script's sys.argv[0]; cfg.script may have been made absolute).
std::string recordConfigJson(const RecordConfig& cfg, std::string_view out, std::string_view result,
                             std::string_view command, std::string_view argv0 = {});

// "train.py --epochs 1, wrap children, sync step, steps 3..5" (the command's words shell-quoted)
std::string recordSummary(const RecordConfig& cfg);

std::string recordHelp();

}  // namespace attnscope
