#include "core/snapshot/trace_snapshot.h"

#include <exception>
#include <thread>

namespace attnscope {

namespace {
// Stores this large compute their two attributions on two threads.
constexpr size_t kParallelSnapshotEvents = 200'000;
}  // namespace

const std::shared_ptr<const KeyAverages>& TraceSnapshot::table(Attribution attribution, GroupBy groupBy) const {
  const bool shape = groupBy == GroupBy::InputShape;
  if (attribution == Attribution::Corrected) return shape ? correctedByInputShape : correctedByName;
  return shape ? torchByInputShape : torchByName;
}

std::shared_ptr<const TraceSnapshot> buildSnapshot(std::shared_ptr<const EventStore> store,
                                                   const SnapshotOptions& options) {
  auto snap = std::make_shared<TraceSnapshot>();
  const EventStore& s = *store;
  snap->store = std::move(store);
  snap->engine = readEngineRun(s);
  snap->record = readScriptRun(s);
  if (options.stepsOnly) {
    snap->index = ActivityIndex(s);
    if (options.explain)
      snap->explanation = std::make_shared<const Explanation>(
          explainTrace(*snap, options.steps, options.profilerStepsFirst, /*stepsOnly=*/true));
    return snap;
  }
  if (options.shapeTables) {
    // Each attribution once, both groupings from it; a large trace's two attributions (and the activity
    // index) on two threads.
    KeyAveragesBothGroupings torch, corrected;
    auto second = [&] {
      corrected = computeKeyAveragesBothGroupings(s, Attribution::Corrected);
      snap->index = ActivityIndex(s);
    };
    std::exception_ptr err;
    std::thread t;
    // Not while spilling (a trace larger than the memory budget): one attribution's arrays at a time.
    if (s.size() >= kParallelSnapshotEvents && std::thread::hardware_concurrency() >= 2 && !spill::spilling()) {
      try {
        t = std::thread([&] {
          try {
            second();
          } catch (...) {
            err = std::current_exception();
          }
        });
      } catch (...) {
        // No second thread: both here.
      }
    }
    try {
      torch = computeKeyAveragesBothGroupings(s, Attribution::Torch);
    } catch (...) {
      if (t.joinable()) t.join();
      throw;
    }
    if (t.joinable())
      t.join();
    else
      second();
    if (err) std::rethrow_exception(err);
    snap->torchByName = std::make_shared<const KeyAverages>(std::move(torch.byName));
    snap->torchByInputShape = std::make_shared<const KeyAverages>(std::move(torch.byInputShape));
    snap->correctedByName = std::make_shared<const KeyAverages>(std::move(corrected.byName));
    snap->correctedByInputShape = std::make_shared<const KeyAverages>(std::move(corrected.byInputShape));
  } else {
    snap->index = ActivityIndex(s);
    snap->torchByName = std::make_shared<const KeyAverages>(computeKeyAverages(s, GroupBy::Name, Attribution::Torch));
    snap->correctedByName =
        std::make_shared<const KeyAverages>(computeKeyAverages(s, GroupBy::Name, Attribution::Corrected));
  }
  if (options.explain) {
    snap->explanation =
        std::make_shared<const Explanation>(explainTrace(*snap, options.steps, options.profilerStepsFirst));
    snap->answer = std::make_shared<const FoundingAnswer>(
        foundingAnswer(s, *snap->explanation, *snap->torchByName, snap->engine ? &*snap->engine : nullptr));
  }
  return snap;
}

std::shared_ptr<const TraceSnapshot> snapshotOf(const EventStore& store, const SnapshotOptions& options) {
  return buildSnapshot(std::shared_ptr<const EventStore>(&store, [](const EventStore*) {}), options);
}

}  // namespace attnscope
