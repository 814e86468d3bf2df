// One rank's process group for one pass of a multi-rank run (--ranks N): it joins the launcher's
// TCPStore on 127.0.0.1 under a prefix of its own (every pass of every rank makes a fresh group, so
// a pass run in a child process joins as well as one run in the rank's own process), makes a
// ProcessGroupGloo (or ProcessGroupNCCL, GPUs only) behind c10d's ProcessGroup, so an all-gather
// goes through the dispatcher's c10d::allgather_ as torch.distributed's does, and records each
// measured all-gather as Kineto writes collectives: a record_param_comms op with its args.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string_view>
#include <vector>

#include "core/run/run_capture.h"
#include "core/run/run_config.h"

namespace attnscope::engine {

class RankGroup {
 public:
  // Throws c10::Error (the store or the backend could not be reached or made).
  RankGroup(const RunConfig& cfg, at::Device device, std::string_view pass);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  // `part` of every rank, in rank order, concatenated along dim 1 (the heads). `seq` >= 0: the
  // call is recorded (a record_param_comms op around the issue and the wait, Seq = `seq`).
  at::Tensor allGather(const at::Tensor& part, int64_t seq);
  // The recorded all-gathers that began at or after `windowStart`, moved out.
  std::vector<CollectiveOpRecord> takeRecords(int64_t windowStart);
  // The trace's distributedInfo, as Kineto writes it.
  DistributedInfo info() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnscope::engine
