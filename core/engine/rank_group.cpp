#include "core/engine/rank_group.h"

#include <sys/syscall.h>
#include <unistd.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

// ProcessGroupNCCL.hpp includes CUDA's fp16 header, which needs CCCL's <nv/target>: a CUDA toolkit
// has it, torch's wheels do not. Without it the engine is built without NCCL and says so (gloo works).
#if defined(USE_C10D_NCCL) && __has_include(<nv/target>)
#define ATTNSCOPE_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "core/engine/clock.h"

namespace attnscope::engine {

namespace {

// The process group's name and description, as torch names the default group.
constexpr const char* kPgName = "0";
constexpr const char* kPgDesc = "default_pg";

}  // namespace

struct RankGroup::Impl {
  RunConfig cfg;
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
  std::vector<CollectiveOpRecord> records;
  std::string ranksText;  // "[0, 1, 2, 3]"
  int64_t tid = 0;
};

RankGroup::RankGroup(const RunConfig& cfg, at::Device device, std::string_view pass) : impl_(std::make_unique<Impl>()) {
  impl_->cfg = cfg;
  impl_->tid = static_cast<int64_t>(::syscall(SYS_gettid));
  for (int r = 0; r < cfg.ranks; ++r) impl_->ranksText += (r ? ", " : "[") + std::to_string(r);
  impl_->ranksText += "]";
  // Long enough for the slowest rank's sleep; the launcher stops every rank when one fails.
  const auto timeout = std::chrono::milliseconds(std::max<int64_t>(120000, 3 * cfg.slowUs / 1000));
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(cfg.storePort);
  so.isServer = false;
  so.waitWorkers = false;
  so.timeout = timeout;
  auto tcp = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
  // One group per pass: its rendezvous keys under a prefix no other pass uses.
  auto store = c10::make_intrusive<c10d::PrefixStore>("attnscope/" + std::string(pass), tcp);
  impl_->pg = c10::make_intrusive<c10d::ProcessGroup>(store, cfg.rank, cfg.ranks);
  if (cfg.backend == RankBackend::Gloo) {
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    auto gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(store, cfg.rank, cfg.ranks, opts);
    impl_->pg->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, gloo);
    impl_->pg->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
  } else {
#ifdef ATTNSCOPE_NCCL
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    opts->timeout = timeout;
    auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, cfg.rank, cfg.ranks, opts);
    impl_->pg->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::NCCL, nccl);
    impl_->pg->setDefaultBackend(c10d::ProcessGroup::BackendType::NCCL);
    (void)device;
#else
    (void)device;
    // A plain exception: TORCH_CHECK would put this file's build path into the installed engine.
    throw std::runtime_error(
        "this engine was built without NCCL: its LibTorch has none (USE_C10D_NCCL), or CUDA's CCCL headers "
        "(<nv/target>, from a CUDA toolkit or PyPI's nvidia-cuda-cccl) were missing when it was built");
#endif
  }
}

RankGroup::~RankGroup() = default;

at::Tensor RankGroup::allGather(const at::Tensor& part, int64_t seq) {
  Impl& m = *impl_;
  std::vector<at::Tensor> in{part.contiguous()};
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < m.cfg.ranks; ++r) out[0].push_back(at::empty_like(in[0]));
  CollectiveOpRecord rec;
  rec.op.startNs = static_cast<int64_t>(nowNs());
  // Issued through the dispatcher (c10d::allgather_), then waited for: on gloo the wait blocks this
  // thread until every rank has contributed, so a late rank shows here on the others.
  m.pg->allgather(out, in)->wait();
  rec.op.endNs = static_cast<int64_t>(nowNs());
  if (seq >= 0) {
    rec.op.name = "record_param_comms";
    rec.op.tid = m.tid;
    CollectiveRecord& c = rec.comm;
    c.name = "all_gather";
    c.pgName = kPgName;
    c.pgDesc = kPgDesc;
    c.groupRanks = m.ranksText;
    c.dtype = std::string(c10::toString(in[0].scalar_type()));
    c.inNelems = in[0].numel();
    c.outNelems = in[0].numel() * m.cfg.ranks;
    c.seq = seq;
    c.groupSize = m.cfg.ranks;
    m.records.push_back(std::move(rec));
  }
  return at::cat(out[0], 1);
}

std::vector<CollectiveOpRecord> RankGroup::takeRecords(int64_t windowStart) {
  std::vector<CollectiveOpRecord> out;
  for (auto& r : impl_->records)
    if (r.op.startNs >= windowStart) out.push_back(std::move(r));
  impl_->records.clear();
  return out;
}

DistributedInfo RankGroup::info() const {
  const RunConfig& c = impl_->cfg;
  DistributedInfo d;
  d.present = true;
  d.backend = std::string(backendName(c.backend));
  d.rank = c.rank;
  d.worldSize = c.ranks;
  d.pgCount = 1;
  d.hasPgConfig = true;
  ProcessGroupConfig p;
  p.name = kPgName;
  p.desc = kPgDesc;
  p.backendConfig = c.backend == RankBackend::Nccl ? "cuda:nccl" : "cpu:gloo";
  p.size = c.ranks;
  for (int r = 0; r < c.ranks; ++r) p.ranks.push_back(r);
  d.pgConfig.push_back(std::move(p));
  return d;
}

}  // namespace attnscope::engine
