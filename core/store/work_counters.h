// How often the expensive derivations of a trace ran in this process: a
// loaded trace must parse its engine metadata once, compute each table
// once and build its indexes once, whatever the views do afterwards. Tests
// read the counters before and after a load or a burst of selections.
#pragma once

#include <atomic>
#include <cstdint>

namespace attnscope {

struct WorkCounters {
  std::atomic<uint64_t> engineMetadataParses{0};  // readEngineRun() on a trace that has the object
  std::atomic<uint64_t> keyAverageTables{0};      // key_averages tables produced (one per grouping)
  std::atomic<uint64_t> explanations{0};          // explainTrace()
  std::atomic<uint64_t> activityIndexes{0};       // ActivityIndex built
};

WorkCounters& workCounters();

}  // namespace attnscope
