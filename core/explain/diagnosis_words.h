// The diagnosis's words: what each cause is called, what the trace shows of it and what to do,
// fitted to the program and the machine the trace comes from (FixContext), and the sentence a
// ranked cause becomes. diagnosis.cpp splits the time; this file says it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/explain/diagnosis.h"
#include "core/store/event_store.h"

namespace attnscope::diagnosis_words {

std::string pct(double share);

struct CauseWords {
  std::string label;  // what it is, in a few words
  std::string what;   // what the trace shows, in a sentence
  std::string fix;    // what to do ("" when nothing applies)
};

// What the trace says about the program and the machine, so that a fix fits them: the device's
// generation (its precision advice), whether the model is already compiled, which data-parallel
// wrapper it uses, ROCm or CUDA, and the parts of a cause's time that its words should name.
struct FixContext {
  bool fp32 = false;      // the fp32_no_tensor_cores hint holds
  std::string precision;  // what reduced precision this device runs well
  bool compiled = false;  // torch.compile'd (CompiledFunction ops)
  bool ddp = false, fsdp = false;
  bool rocm = false;             // hip* runtime calls
  bool mtia = false;             // an MTIA device
  int64_t queuedCommNs = 0;      // of communication: collectives launched and not yet started
  int64_t overlappedCommNs = 0;  // not part of it: collectives' time with compute beside them
  int64_t queuedIdleNs = 0;      // of little_work: work launched and not yet started
  int64_t autotuneNs = 0;        // of one_time_setup: convolutions benchmarking their algorithms
  int64_t cpuLoaderNs = 0;       // of cpu_only: the main thread in the DataLoader
  bool loaderWorkers = false;    // the DataLoader has worker processes (_MultiProcessingDataLoaderIter)
  int64_t cpuOnlyNs = 0;         // cpu_only's whole time
  // cpu_only: the steps' host time on their own thread by kind ("backward", "the DataLoader", "Python
  // between ops", ...), largest first (empty when the steps are not a thread's annotations).
  std::vector<std::pair<std::string, int64_t>> cpuParts;
};

FixContext fixContext(const EventStore& s);
CauseWords wordsFor(Cause c, const FixContext& f);
std::string sentence(const DiagnosedCause& c, const CauseWords& w, int64_t wallNs, size_t steps);

}  // namespace attnscope::diagnosis_words
