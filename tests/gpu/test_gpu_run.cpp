// The engine on a real GPU: kernels, copies, runtime calls and syncs with
// correlation to ops, no dropped records, NVTX ranges back through CUPTI,
// and record_function adding no synchronization. Skips (77) without a GPU.
#include <simdjson.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/read/trace_reader.h"
#include "core/tables/key_averages.h"

using namespace attnscope;

namespace {

int passed = 0, failed = 0;
void check(bool ok, const std::string& what) {
  std::cout << (ok ? "PASS  " : "FAIL  ") << what << "\n";
  (ok ? passed : failed)++;
}

int runCli(const std::string& args, std::string* err) {
  const std::string errFile = "/tmp/attnscope-gpu-test." + std::to_string(::getpid()) + ".err";
  const std::string cmd = std::string(ATTNSCOPE_BIN_DIR) + "/attnscope-cli run " + args + " 2>" + errFile;
  const int rc = std::system(cmd.c_str());
  if (FILE* f = std::fopen(errFile.c_str(), "r")) {
    char buf[4096];
    size_t n = std::fread(buf, 1, sizeof buf, f);
    err->assign(buf, n);
    std::fclose(f);
  }
  ::unlink(errFile.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

uint64_t count(const EventStore& s, std::string_view name) {
  uint64_t n = 0;
  for (const auto& e : s.events()) n += s.name(e) == name;
  return n;
}

int64_t metaInt(const EventStore& s, const char* section, const char* key) {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  if (p.parse(s.meta().attnscopeJson).get(doc)) return -1;
  int64_t v = -1;
  if (doc[section][key].get_int64().get(v)) return -1;
  return v;
}

}  // namespace

int main() {
  const std::string dir = "/tmp/attnscope-gpu-test-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::string err;
  const int probe = runCli("--device cuda --shape 1,1,8,8 --warmup 0 --timing host --out " + dir + "/probe.json", &err);
  if (probe == 2 && err.find("no CUDA device") != std::string::npos) {
    std::cout << "SKIP: no CUDA device here (" << err.substr(0, err.find('\n')) << ")\n";
    return 77;
  }
  check(probe == 0, "a tiny cold CUDA run succeeds (" + err.substr(0, 200) + ")");

  struct Run {
    std::string wrap;
    std::optional<EventStore> store;
  };
  std::vector<Run> runs(3);  // EventStore moves, never copies
  runs[0].wrap = "none";
  runs[1].wrap = "softmax";
  runs[2].wrap = "all";
  for (auto& r : runs) {
    const std::string out = dir + "/" + r.wrap + ".json";
    const int rc = runCli("--device cuda --shape 8,16,1024,64 --wrap " + r.wrap + " --out " + out, &err);
    check(rc == 0, "run --wrap " + r.wrap + " exits 0 " + err.substr(0, 200));
    LoadResult lr = loadTrace(out);
    check(lr.ok(), "its trace loads in our reader");
    if (lr.ok()) r.store.emplace(std::move(*lr.store));
  }
  if (!runs[1].store) {
    std::cout << passed << " passed, " << failed << " failed\n";
    return 1;
  }
  const EventStore& s = *runs[1].store;
  check(s.familyCount(Family::Kernel) >= 5, "kernels recorded: " + std::to_string(s.familyCount(Family::Kernel)));
  check(s.familyCount(Family::GpuMemcpy) >= 1, "the hidden H2D copy of the scale tensor is recorded");
  check(s.familyCount(Family::CudaRuntime) >= 5, "runtime calls recorded");
  // One per iteration of the block (the run's default: 20 iterations, each marked ProfilerStep#N).
  size_t iterations = 0;
  for (const auto& e : s.events())
    iterations += e.family == Family::UserAnnotation && s.name(e).starts_with("ProfilerStep#");  // not the NVTX copies
  check(iterations == 20, "20 iterations, each marked ProfilerStep#N (" + std::to_string(iterations) + ")");
  check(count(s, "cudaStreamSynchronize") == iterations,
        "one cudaStreamSynchronize per iteration (the scale's copy): " +
            std::to_string(count(s, "cudaStreamSynchronize")));
  uint64_t linked = 0, gpu = 0;
  for (const auto& e : s.events()) {
    if (e.family != Family::Kernel && e.family != Family::GpuMemcpy) continue;
    ++gpu;
    bool hasLaunch = false, hasOp = false;
    for (EventId id : s.byCorrelation(e.correlation))
      hasLaunch |= s.event(id).family == Family::CudaRuntime || s.event(id).family == Family::CudaDriver;
    for (EventId id : s.byExternalId(e.externalId)) hasOp |= s.event(id).family == Family::CpuOp;
    linked += hasLaunch && hasOp;
  }
  check(gpu > 0 && linked == gpu, "every kernel and copy links to its launch and its op (" + std::to_string(linked) +
                                      "/" + std::to_string(gpu) + ")");
  uint64_t launches = 0, nested = 0;
  for (const auto& e : s.events()) {
    if (e.family != Family::CudaRuntime || s.name(e).find("Launch") == std::string_view::npos) continue;
    ++launches;
    nested += e.parent != kNoEvent && s.event(e.parent).family == Family::CpuOp;
  }
  check(launches > 0 && nested == launches, "every kernel launch sits inside the op that made it, on its thread (" +
                                                std::to_string(nested) + "/" + std::to_string(launches) + ")");
  // The block's External id (one per call, CUPTI kind CUSTOM1) comes back on
  // every API call made inside it: at least every launch.
  const int64_t tagged = metaInt(s, "collection", "api_calls_with_call_id");
  check(tagged >= static_cast<int64_t>(launches), "CUPTI tags the API calls with their call of the block (" +
                                                      std::to_string(tagged) + " tagged, " + std::to_string(launches) +
                                                      " launches)");
  check(metaInt(s, "collection", "dropped_records") == 0, "zero dropped CUPTI records");
  const int64_t pushed = metaInt(s, "collection", "nvtx_ranges_pushed");
  const int64_t seen = metaInt(s, "collection", "nvtx_ranges_seen");
  check(pushed >= 1 && seen >= pushed, "NVTX ranges come back through CUPTI (" + std::to_string(seen) + " seen, " +
                                           std::to_string(pushed) + " pushed)");
  const KeyAverages ka = computeKeyAverages(s, GroupBy::Name);
  const KeyAverageRow *scope = nullptr, *softmax = nullptr;
  for (const auto& r : ka.rows) {
    if (r.name == "SOFTMAX PASS" && r.deviceType == DeviceType::Cpu) scope = &r;
    if (r.name == "aten::_softmax") softmax = &r;
  }
  check(scope && scope->selfDeviceNs == 0 && scope->deviceTotalNs > 0,
        "SOFTMAX PASS: Self CUDA 0, CUDA total = its children's kernels");
  check(softmax && softmax->selfDeviceNs > 0, "aten::_softmax owns the softmax kernel");
  if (runs[0].store && runs[2].store) {
    for (const char* sync : {"cudaStreamSynchronize", "cudaDeviceSynchronize"})
      check(count(*runs[0].store, sync) == count(*runs[2].store, sync),
            std::string("wrapping every step adds no ") + sync + " (" + std::to_string(count(*runs[0].store, sync)) +
                " vs " + std::to_string(count(*runs[2].store, sync)) + ")");
  }
  const int rc = runCli("--device cuda --shape 8,16,1024,64 --scale host-scalar --out " + dir + "/hs.json", &err);
  LoadResult hs = loadTrace(dir + "/hs.json");
  check(rc == 0 && hs.ok() && count(*hs.store, "cudaStreamSynchronize") == 0 &&
            hs.store->familyCount(Family::GpuMemcpy) == 0,
        "--scale host-scalar: no copy, no stream sync");
  const int oom = runCli("--device cuda --shape 64,64,65536,64 --out " + dir + "/oom.json", &err);
  check(oom == 3 && err.find("MiB") != std::string::npos, "a shape too big for the GPU is refused with exit 3");
  std::filesystem::remove_all(dir);
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}
