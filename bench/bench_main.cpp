// attnscope-bench: speed goals, measured side by side in one run.
// Every benchmark prints its last line as key=value pairs.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

int benchLoad(const std::vector<std::string>& args);
int benchAggregate(const std::vector<std::string>& args);
int benchGen(const std::vector<std::string>& args);
int benchHuge(const std::vector<std::string>& args);
int benchCache(const std::vector<std::string>& args);
int benchLayouts(const std::vector<std::string>& args);
int benchSteps(const std::vector<std::string>& args);
int benchHostile(const std::vector<std::string>& args);
int benchViews(const std::vector<std::string>& args);
int benchStart(const std::vector<std::string>& args);
int benchOverhead(const std::vector<std::string>& args, const std::string& self);
int benchSpill(const std::vector<std::string>& args);
#ifdef ATTNSCOPE_BENCH_TIMELINE
int benchTimeline(const std::vector<std::string>& args, int argc, char** argv);
#endif

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << "usage: attnscope-bench load FILE [--repeat N] [--no-python] [--chunk BYTES]\n"
                 "  load   our load time (read + decompress + parse + build the store) next to\n"
                 "         python3 json.loads and a raw simdjson DOM parse of the same text\n"
                 "  aggregate FILE [--repeat N] [--no-hta]\n"
                 "         key_averages (by name and by shape, torch and corrected) next to HTA\n"
                 "         (HolisticTraceAnalysis) loading FILE and computing its kernel breakdown\n"
                 "  gen -o OUT [--size 1G] [--reps K] [--source TRACE]\n"
                 "  layouts [--runs N] [--cmd CMD]... FIRST.json OTHER...\n"
                 "         one trace in several layouts, or under several commands (--cmd info --cmd\n"
                 "         explain: explain's cost over info), interleaved, with ratios to the first\n"
                 "  steps TRACE                  (where a load's time and memory go)\n"
                 "         writes a huge trace by repeating a real capture's steps (default\n"
                 "         transformer_train20) with shifted times and fresh ids\n"
                 "  huge TRACE [--cli PATH]\n"
                 "         attnscope-cli info and table on TRACE: time and peak RSS (from the OS)\n"
                 "  cache TRACE [--cmd CMD]... [--repeat N] [--no-one-core]\n"
                 "         the columnar cache: info, table and explain on TRACE, first open (JSON read, cache\n"
                 "         written) on 2 CPUs and on 1, then the second open (cache mapped): time, peak RSS\n"
                 "  views [--repeat N] [TRACE...]\n"
                 "         the cost of opening each view (overview, kernels, memory, modules) after the load,\n"
                 "         on the largest real traces (goal: under 100 ms each)\n"
                 "  hostile [--dir DIR] [--repeat N]\n"
                 "         info, table and explain on the hostile shapes the tests load (2M tiny\n"
                 "         events, 100k nesting, a staircase, shared ids) per MB, next to an\n"
                 "         ordinary trace of the same size\n"
                 "  start [--runs N] [--platform offscreen|xcb] [TRACE]\n"
                 "         GUI start to the first painted frame with the bundled capture (or TRACE)\n"
                 "  overhead [--shape B,H,S,D] [--wrap LIST] [--calls N] [--batches N] [--rounds N]\n"
                 "           [--device cuda|cpu] [--ablations | --blocks]\n"
                 "         per-op profiling overhead: our collector vs LibTorch's profiler vs none\n"
                 "         (--ablations adds our collector without each of its parts; --blocks prints\n"
                 "         only the building blocks' ns per call, CUPTI's cost per CUDA call among them)\n"
                 "  spill [--mb N] [--repeat N]\n"
                 "         writing N MB (default 512) into the heap and into spilled buffers (a trace past the\n"
                 "         memory budget): new, new with the kernel's read-ahead, given back and reused\n"
                 "  timeline [--events N] [--frames N]\n"
                 "         timeline frames at 1920x1080 across zoom levels on N synthetic events\n";
    return args.empty() ? 2 : 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "load") return benchLoad(args);
  if (cmd == "aggregate") return benchAggregate(args);
  if (cmd == "gen") return benchGen(args);
  if (cmd == "huge") return benchHuge(args);
  if (cmd == "cache") return benchCache(args);
  if (cmd == "layouts") return benchLayouts(args);
  if (cmd == "steps") return benchSteps(args);
  if (cmd == "hostile") return benchHostile(args);
  if (cmd == "views") return benchViews(args);
  if (cmd == "start") return benchStart(args);
  if (cmd == "overhead") return benchOverhead(args, argv[0]);
  if (cmd == "spill") return benchSpill(args);
#ifdef ATTNSCOPE_BENCH_TIMELINE
  if (cmd == "timeline") return benchTimeline(args, argc, argv);
#endif
  std::cerr << "attnscope-bench: unknown benchmark '" << cmd << "'\n";
  return 2;
}
