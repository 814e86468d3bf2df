// Hostile shapes next to an ordinary trace: the test suite only checks that
// these inputs load, give the right answers and never hang; how fast they go
// is measured here, side by side with a real capture's steps repeated to the
// same size (trace_gen.h), so a shape that is slower per byte than ordinary
// data shows as a ratio above 1.
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "hostile_shapes.h"
#include "trace_gen.h"

namespace {

std::string usText(int64_t ns) {
  char b[40];
  std::snprintf(b, sizeof b, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  return b;
}

std::string op(const char* name, int64_t tsNs, int64_t durNs, int tid = 1) {
  return std::string(R"({"ph":"X","cat":"cpu_op","name":")") + name + R"(","pid":1,"tid":)" + std::to_string(tid) +
         R"(,"ts":)" + usText(tsNs) + R"(,"dur":)" + usText(durNs) + "}";
}

// Writes {"traceEvents": [...]} of n events to path; returns its bytes (0 on failure).
uint64_t writeTrace(const std::string& path, size_t n, const std::function<std::string(size_t)>& event) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << "{\"traceEvents\": [\n";
  for (size_t i = 0; i < n; ++i) f << (i ? ",\n" : "") << event(i);
  f << "\n]}\n";
  f.close();
  struct stat st {};
  return f && ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

struct Shape {
  std::string name;
  std::string file;
  uint64_t bytes = 0;
};

}  // namespace

int benchHostile(const std::vector<std::string>& args) {
  std::string dir = "/tmp", cli = bench::selfDir() + "/attnscope-cli";
  int repeat = 3;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (args[i] == "--dir" && more)
      dir = args[++i];
    else if (args[i] == "--cli" && more)
      cli = args[++i];
    else if (args[i] == "--repeat" && more)
      repeat = std::max(1, std::stoi(args[++i]));
    else {
      std::cerr << "usage: attnscope-bench hostile [--dir DIR] [--repeat N] [--cli PATH]\n";
      return 2;
    }
  }
  std::vector<Shape> shapes;
  auto add = [&](const char* name, size_t n, const std::function<std::string(size_t)>& event) {
    Shape s{name, dir + "/attnscope_hostile_" + name + ".json", 0};
    s.bytes = writeTrace(s.file, n, event);
    if (s.bytes == 0) return false;
    shapes.push_back(s);
    return true;
  };
  // The shapes of tests/core/test_hostile_inputs.cpp that carry most events.
  const bool written =
      add("tiny_2M", 2'000'000,
          [](size_t i) {
            return op(i % 3 ? "aten::add" : "aten::mul", static_cast<int64_t>(2 * i), 1, static_cast<int>(i % 4));
          }) &&
      add("nested_100k", 100'000,
          [](size_t i) { return op("aten::add", static_cast<int64_t>(i), static_cast<int64_t>(2 * (100'000 - i))); }) &&
      add("stairs_200k", 200'000, [](size_t i) { return op("aten::add", static_cast<int64_t>(i), 1'000'000); }) &&
      add("shared_ids_50k", 200'001, [](size_t i) { return bench::sharedIdsEvent(i, 50'000); });
  if (!written) {
    std::cerr << "attnscope-bench hostile: cannot write traces in " << dir << "\n";
    return 2;
  }
  // The ordinary trace: the largest shape's size of a real capture's steps.
  const Shape ordinary{"ordinary", dir + "/attnscope_hostile_ordinary.json", 0};
  const bench::TraceGenResult g = bench::generateTrace(ATTNSCOPE_BENCH_TRAIN20, ordinary.file, shapes[0].bytes);
  if (!g.ok) {
    std::cerr << "attnscope-bench hostile: " << g.error << "\n";
    return 2;
  }
  shapes.insert(shapes.begin(), Shape{ordinary.name, ordinary.file, g.bytes});

  // Median seconds per MB for each command on each shape.
  const char* cmds[] = {"info", "table", "explain"};
  std::vector<std::vector<double>> sPerMb(shapes.size(), std::vector<double>(3, 0));
  for (size_t s = 0; s < shapes.size(); ++s) {
    for (int c = 0; c < 3; ++c) {
      std::vector<double> t;
      for (int k = 0; k < repeat; ++k) {
        const bench::ChildRun r = bench::runChild({cli, cmds[c], shapes[s].file});
        if (r.status != 0) {
          std::cerr << "attnscope-bench hostile: " << cmds[c] << " " << shapes[s].file << " exited " << r.status
                    << "\n";
          return 1;
        }
        t.push_back(r.wallS);
      }
      const double mb = static_cast<double>(shapes[s].bytes) / 1e6;
      sPerMb[s][c] = bench::median(t) / mb;
      std::printf("%-15s %7.1f MB  %-7s %6.2f s median of %d  (%.1f ms/MB)\n", shapes[s].name.c_str(), mb, cmds[c],
                  bench::median(t), repeat, sPerMb[s][c] * 1e3);
    }
  }
  // Ratios to the ordinary trace, per byte: the last line.
  std::string line;
  for (size_t s = 1; s < shapes.size(); ++s)
    for (int c = 0; c < 3; ++c) {
      char kv[96];
      std::snprintf(kv, sizeof kv, "%s_%s_ratio=%.2f ", shapes[s].name.c_str(), cmds[c], sPerMb[s][c] / sPerMb[0][c]);
      line += kv;
    }
  std::printf("%s\n", line.c_str());
  for (const Shape& s : shapes) std::remove(s.file.c_str());
  return 0;
}
