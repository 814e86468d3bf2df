// P3: huge traces. `gen` writes one from a real capture (trace_gen.h);
// `huge` times attnscope-cli info and table on it, in child processes, with
// their peak resident set as the kernel reports it (wait4's ru_maxrss).
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "bench_util.h"
#include "core/read/gzip.h"
#include "trace_gen.h"

namespace {

// "1G", "4G", "500M", "123456": bytes (decimal units, as disk sizes are given).
bool parseSize(const std::string& s, uint64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  double mult = 1;
  const std::string unit(end);
  if (unit == "K" || unit == "KB")
    mult = 1e3;
  else if (unit == "M" || unit == "MB")
    mult = 1e6;
  else if (unit == "G" || unit == "GB")
    mult = 1e9;
  else if (!unit.empty())
    return false;
  if (!(v > 0)) return false;
  *out = static_cast<uint64_t>(v * mult);
  return true;
}

// The JSON size: the file's, or what its gzip stream inflates to.
uint64_t jsonBytes(const std::string& path, uint64_t fileBytes) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (!attnscope::isGzip(data.data(), data.size())) return fileBytes;
  attnscope::GunzipStream z(data.data(), data.size(), UINT64_MAX - 1);
  std::vector<char> buf(size_t{1} << 20);
  size_t got = 0;
  while (!z.done() && z.read(buf.data(), buf.size(), &got)) {
  }
  return z.produced();
}

}  // namespace

int benchGen(const std::vector<std::string>& args) {
  std::string source = ATTNSCOPE_BENCH_TRAIN20, out;
  uint64_t size = 1'000'000'000, reps = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (args[i] == "--source" && more)
      source = args[++i];
    else if ((args[i] == "-o" || args[i] == "--out") && more)
      out = args[++i];
    else if (args[i] == "--size" && more && parseSize(args[i + 1], &size))
      ++i;
    else if (args[i] == "--reps" && more)
      reps = std::stoull(args[++i]);
    else {
      std::cerr << "usage: attnscope-bench gen -o OUT [--size 1G] [--reps K] [--source TRACE]\n";
      return 2;
    }
  }
  if (out.empty()) {
    std::cerr << "attnscope-bench gen: missing -o OUT\n";
    return 2;
  }
  const bench::TraceGenResult r = bench::generateTrace(source, out, size, reps);
  if (!r.ok) {
    std::cerr << "attnscope-bench gen: " << r.error << "\n";
    return 2;
  }
  std::printf("source: %s (%llu events repeated, %llu written once, shift %.3f ms, id stride %lld)\n", source.c_str(),
              static_cast<unsigned long long>(r.plan.bodyEvents), static_cast<unsigned long long>(r.plan.onceEvents),
              static_cast<double>(r.plan.shiftNs) / 1e6, static_cast<long long>(r.plan.idStride));
  std::printf("out=%s bytes=%llu events=%llu repetitions=%llu\n", out.c_str(), static_cast<unsigned long long>(r.bytes),
              static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.repetitions));
  return 0;
}

int benchHuge(const std::vector<std::string>& args) {
  std::string path, cli = bench::selfDir() + "/attnscope-cli";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--cli" && i + 1 < args.size())
      cli = args[++i];
    else
      path = args[i];
  }
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) {
    std::cerr << "usage: attnscope-bench huge TRACE.json [--cli PATH]  (make one with attnscope-bench gen)\n";
    return 2;
  }
  const double mb = static_cast<double>(jsonBytes(path, static_cast<uint64_t>(st.st_size))) / 1e6;
  std::printf("trace: %s (%.1f MB of JSON, %.1f MB on disk)\n", path.c_str(), mb,
              static_cast<double>(st.st_size) / 1e6);
  std::string line;
  for (const char* cmd : {"info", "table"}) {
    const bench::ChildRun r = bench::runChild({cli, cmd, path});
    if (r.status != 0) {
      std::cerr << "attnscope-bench huge: " << cli << " " << cmd << " exited " << r.status << "\n";
      return 1;
    }
    const double rssMb = static_cast<double>(r.maxRssKb) * 1024.0 / 1e6;
    std::printf("attnscope-cli %-5s %7.2f s wall (%.2f user, %.2f sys), peak RSS %.0f MB = %.2fx the JSON\n", cmd,
                r.wallS, r.userS, r.sysS, rssMb, rssMb / mb);
    char kv[256];
    std::snprintf(kv, sizeof kv, "%s_s=%.2f %s_rss_mb=%.0f %s_rss_ratio=%.3f ", cmd, r.wallS, cmd, rssMb, cmd,
                  rssMb / mb);
    line += kv;
  }
  std::printf("json_mb=%.1f %s\n", mb, line.c_str());
  return 0;
}

// attnscope-bench layouts [--runs N] [--cmd CMD]... FIRST.json OTHER... : each file read by
// `attnscope-cli CMD` for every CMD given (default info), N times, interleaved (run 1 of every file and
// command, then run 2...) so that the machine's state is shared; prints each one's wall time and peak
// RSS (median [min-max]) and their ratios to the first file's first command. Two ways to use it: one
// trace in several layouts (minified, the top-level array, .gz), or one trace under several commands
// (`--cmd info --cmd explain`: what explain costs over info; a command with options is quoted:
// `--cmd "explain --format json"`).
int benchLayouts(const std::vector<std::string>& args) {
  std::string cli = bench::selfDir() + "/attnscope-cli";
  std::vector<std::string> cmds;
  int runs = 3;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (args[i] == "--runs" && more)
      runs = std::max(1, std::atoi(args[++i].c_str()));
    else if (args[i] == "--cmd" && more)
      cmds.push_back(args[++i]);
    else if (args[i] == "--cli" && more)
      cli = args[++i];
    else
      files.push_back(args[i]);
  }
  if (cmds.empty()) cmds.push_back("info");
  if (files.empty()) {
    std::cerr << "usage: attnscope-bench layouts [--runs N] [--cmd CMD]... FIRST.json OTHER...\n";
    return 2;
  }
  struct Row {
    std::string file, cmd;
    std::vector<double> wall, rss;
  };
  std::vector<Row> rows;
  for (const std::string& f : files)
    for (const std::string& c : cmds) rows.push_back({f, c, {}, {}});
  for (int r = 0; r < runs; ++r) {
    for (Row& row : rows) {
      // A command with options ("explain --format json") is split at its spaces; the file goes last.
      std::vector<std::string> argv{cli};
      for (size_t a = 0, b = 0; a <= row.cmd.size(); a = b + 1) {
        b = row.cmd.find(' ', a);
        if (b == std::string::npos) b = row.cmd.size();
        if (b > a) argv.push_back(row.cmd.substr(a, b - a));
      }
      argv.push_back(row.file);
      const bench::ChildRun c = bench::runChild(argv, "/dev/null");
      if (c.status != 0) {
        std::cerr << "attnscope-bench layouts: " << cli << " " << row.cmd << " " << row.file << " exited " << c.status
                  << "\n";
        return 1;
      }
      row.wall.push_back(c.wallS);
      row.rss.push_back(static_cast<double>(c.maxRssKb) * 1024.0 / 1e6);
    }
  }
  const double w0 = bench::median(rows[0].wall), m0 = bench::median(rows[0].rss);
  for (const Row& row : rows) {
    struct stat st {};
    ::stat(row.file.c_str(), &st);
    const auto [wmin, wmax] = std::minmax_element(row.wall.begin(), row.wall.end());
    const auto [mmin, mmax] = std::minmax_element(row.rss.begin(), row.rss.end());
    const double w = bench::median(row.wall), m = bench::median(row.rss);
    std::printf(
        "%-28s %7.1f MB on disk  %-8s %5.2f s [%.2f-%.2f]  peak RSS %5.0f MB [%.0f-%.0f]  time %.2fx  memory %.2fx\n",
        row.file.substr(row.file.find_last_of('/') + 1).c_str(), static_cast<double>(st.st_size) / 1e6, row.cmd.c_str(),
        w, *wmin, *wmax, m, *mmin, *mmax, w / w0, m / m0);
  }
  return 0;
}
