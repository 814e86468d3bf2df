// P1: load time against python3 json.loads and a raw simdjson parse of the
// same text, in the same run on the same machine.
#include <simdjson.h>

#include <sys/resource.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/read/gzip.h"
#include "core/read/trace_reader.h"

using Clock = std::chrono::steady_clock;

namespace {

// Best and median of repeated timings. Best-of-N is what each side can do
// on this machine; on a shared machine it is the figure least disturbed by
// other work (as Python's timeit advises), and all three sides get it.
struct Times {
  double best = -1;
  double median = -1;
};

Times summarize(const std::vector<double>& v) {
  if (v.empty()) return {};
  return {*std::min_element(v.begin(), v.end()), bench::median(v)};
}

// python3's json.loads on the (decompressed) text; only the loads call is timed.
Times pythonJsonLoads(const std::string& path, int repeat) {
  const std::string cmd =
      "python3 -c \"import json,gzip,time,sys\n"
      "p=sys.argv[1]\n"
      "t=(gzip.open(p,'rt') if open(p,'rb').read(2)==b'\\x1f\\x8b' else open(p)).read()\n"
      "b=[]\n"
      "for _ in range(int(sys.argv[2])):\n"
      "  t0=time.perf_counter(); json.loads(t); b.append(time.perf_counter()-t0)\n"
      "b.sort(); print(b[0], b[len(b)//2])\" '" +
      path + "' " + std::to_string(repeat);
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return {};
  char buf[128] = {};
  const bool ok = fgets(buf, sizeof buf, f) != nullptr;
  const int rc = pclose(f);
  if (!ok || rc != 0) return {};
  Times t;
  if (std::sscanf(buf, "%lf %lf", &t.best, &t.median) != 2) return {};
  return t;
}

// A raw simdjson DOM parse (runtime-dispatched kernel) of the same text,
// touching every event: the floor for any simdjson-based reader. A .gz is
// inflated first, untimed (*gunzipS: how long that took, once).
Times simdjsonWalk(const std::string& path, int repeat, size_t* events, double* gunzipS) {
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text)) return {};
  *gunzipS = 0;
  if (attnscope::isGzip(text.data(), text.size())) {
    const auto t0 = Clock::now();
    std::vector<char> out;
    size_t n = 0;
    std::string err;
    if (!attnscope::gunzip(text.data(), text.size(), 1ull << 36, simdjson::SIMDJSON_PADDING, &out, &n, &err)) return {};
    simdjson::padded_string inflated(out.data(), n);
    text.swap(inflated);
    *gunzipS = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  simdjson::dom::parser parser;
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = Clock::now();
    simdjson::dom::element doc;
    if (parser.parse(text).get(doc)) return {};
    simdjson::dom::array evs;
    if (doc["traceEvents"].get_array().get(evs)) return {};
    size_t n = 0;
    for (auto e : evs) n += e.is_object();
    *events = n;
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return summarize(times);
}

double cpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

int benchLoad(const std::vector<std::string>& args) {
  bench::FileArgs fa;
  if (!bench::parseFileArgs(args, "load", "--no-python", &fa)) return 2;
  attnscope::ReaderLimits limits;
  if (fa.chunk) limits.chunkBytes = fa.chunk;
  std::vector<double> total, read, dec, parse, build;
  size_t events = 0;
  uint64_t jsonBytes = 0, chunks = 0;
  const double cpu0 = cpuSeconds();
  for (int i = 0; i < fa.repeat; ++i) {
    const auto t0 = Clock::now();
    attnscope::LoadResult r = attnscope::loadTrace(fa.path, limits);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!r.ok()) {
      std::cerr << "attnscope-bench: " << r.error->what() << "\n";
      return 2;
    }
    total.push_back(s);
    read.push_back(r.timings.read);
    dec.push_back(r.timings.decompress);
    parse.push_back(r.timings.parse);
    build.push_back(r.timings.build);
    events = r.store->events().size();
    jsonBytes = r.jsonBytes;
    chunks = r.chunks;
  }
  const Times ours = summarize(total);
  const double cpu = (cpuSeconds() - cpu0) / fa.repeat;
  size_t walked = 0;
  double gunzipS = 0;
  const Times simd = simdjsonWalk(fa.path, fa.repeat, &walked, &gunzipS);
  const Times py = fa.peer ? pythonJsonLoads(fa.path, std::max(3, fa.repeat / 2)) : Times{};
  std::printf("file: %s (%.1f MB of JSON, %zu trace events, %zu stored)\n", fa.path.c_str(),
              static_cast<double>(jsonBytes) / 1e6, walked, events);
  std::printf("                               best      median\n");
  std::printf(
      "attnscope load:                %.4f s  %.4f s  (%d runs; %.4f s CPU each) [medians: read %.4f, "
      "%s %.4f, parse %.4f, build %.4f; %llu chunks]\n",
      ours.best, ours.median, fa.repeat, cpu, bench::median(read),
      chunks && gunzipS > 0 ? "inflate (alongside parse)" : "decompress", bench::median(dec), bench::median(parse),
      bench::median(build), static_cast<unsigned long long>(chunks));
  std::printf("simdjson DOM parse + walk:     %.4f s  %.4f s  (text already in memory%s)\n", simd.best, simd.median,
              gunzipS > 0 ? ", inflated beforehand" : "");
  if (gunzipS > 0) std::printf("  (inflating it first took %.4f s with %s)\n", gunzipS, attnscope::gunzipBackend());
  if (fa.peer)
    std::printf("python3 json.loads:            %.4f s  %.4f s  (text already in memory)\n", py.best, py.median);
  auto ratio = [](double a, double b) { return a > 0 && b > 0 ? a / b : 0.0; };
  std::printf(
      "load_s=%.4f load_median_s=%.4f load_cpu_s=%.4f simdjson_walk_s=%.4f json_loads_s=%.4f "
      "speedup_vs_json_loads=%.2f ratio_vs_simdjson=%.2f median_speedup_vs_json_loads=%.2f "
      "median_ratio_vs_simdjson=%.2f events=%zu\n",
      ours.best, ours.median, cpu, simd.best, py.best, ratio(py.best, ours.best), ratio(ours.best, simd.best),
      ratio(py.median, ours.median), ratio(ours.median, simd.median), events);
  return 0;
}
