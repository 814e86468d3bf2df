#include "core/explain/glossary.h"

#include <array>

namespace attnscope {

namespace {

constexpr std::array<GlossaryEntry, 16> kEntries{{
    {"Activity Buffer Request",
     "The profiler's own event (Kineto asking CUPTI for a buffer to hold activity records). Its CPU "
     "time is the profiler's, not the model's. torch's key_averages gives it the External id of the op "
     "running on the main thread when it happened, so in torch's table it can also own that op's "
     "kernels; the corrected attribution never lets it own GPU work."},
    {"cudaStreamSynchronize",
     "Blocks the calling CPU thread until all work queued earlier on the stream has finished. Its "
     "duration is mostly waiting for GPU work queued before it (often by earlier steps), not work of "
     "the op that called it."},
    {"cudaDeviceSynchronize",
     "Blocks the calling CPU thread until all work queued on the device has finished. "
     "torch.cuda.synchronize() calls it, and so does the profiler itself when it stops."},
    {"cudaEventSynchronize", "Blocks the calling CPU thread until a recorded CUDA event has completed on the GPU."},
    {"cudaEventRecord",
     "Queues a timestamp marker on a stream. With torch.autograd.profiler.profile(use_cuda=True) "
     "(PyTorch 2.11) one is recorded at every op's entry and exit, and the op's CUDA time is the "
     "GPU-timeline distance between its two markers: when the GPU is idle a marker completes as soon "
     "as it is submitted, so an op that launches nothing still gets CUDA time; when the GPU is busy "
     "the start marker waits behind earlier work, so time moves between neighbouring ops."},
    {"cudaMemcpyAsync",
     "Queues a copy between host and device. From pageable (not pinned) host memory the runtime "
     "stages the data; torch follows the host-to-device copy of a host scalar with "
     "cudaStreamSynchronize, which waits for everything queued before it."},
    {"cudaMemcpy", "A synchronous copy: the CPU thread waits until it (and the work queued before it) is done."},
    {"cudaLaunchKernel",
     "Queues a kernel on a stream and returns, usually long before the kernel runs. Its CPU time is "
     "launch cost; the kernel's GPU time is in the kernel record with the same correlation id."},
    {"cuLaunchKernel", "Driver-level kernel launch; see cudaLaunchKernel."},
    {"gpu_user_annotation",
     "The device-side span of a record_function: from the start of the first to the end of the last "
     "GPU activity launched inside it. torch reports the whole span, idle gaps included, as that "
     "row's Self CUDA time, on top of the kernels' own rows, so Self CUDA % can exceed 100%."},
    {"user_annotation",
     "The CPU-side range of a record_function. It launches nothing itself, so its Self CUDA is 0; its "
     "CUDA total is the GPU time of the ops inside it, wherever on the GPU timeline that work ran."},
    {"Self CUDA", "GPU time of the kernels, copies and memsets an op launched itself (not its children)."},
    {"CUDA total",
     "Self CUDA of an op plus that of the ops nested inside it, wherever and whenever on the GPU "
     "timeline that work ran (often after the op returned on the CPU)."},
    {"correlation",
     "CUPTI's id tying a GPU activity to the runtime call that queued it; the runtime call sits inside "
     "the CPU op that launched the work."},
    {"launch latency",
     "Time from the start of the runtime call that queued a GPU activity to the start of that activity "
     "on the GPU: launch cost plus waiting behind earlier queued work."},
    {"host window",
     "The CPU-side interval of a step. GPU work launched inside it may run after it closes: a host "
     "timer around the step sees launch cost, not GPU time, unless something synchronizes."},
}};

}  // namespace

std::span<const GlossaryEntry> glossary() { return kEntries; }

const GlossaryEntry* glossaryFor(std::string_view name) {
  const GlossaryEntry* best = nullptr;
  for (const auto& e : kEntries) {
    if (name == e.key) return &e;
    if (name.starts_with(e.key) && (!best || e.key.size() > best->key.size())) best = &e;
  }
  return best;
}

}  // namespace attnscope
