#include "core/snapshot/trace_snapshot.h"

namespace attnscope {

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
  snap->index = ActivityIndex(s);
  if (options.stepsOnly) {
    if (options.explain)
      snap->explanation = std::make_shared<const Explanation>(
          explainTrace(*snap, options.steps, options.profilerStepsFirst, /*stepsOnly=*/true));
    return snap;
  }
  if (options.shapeTables) {
    // Each attribution once, both groupings from it.
    KeyAveragesBothGroupings torch = computeKeyAveragesBothGroupings(s, Attribution::Torch);
    KeyAveragesBothGroupings corrected = computeKeyAveragesBothGroupings(s, Attribution::Corrected);
    snap->torchByName = std::make_shared<const KeyAverages>(std::move(torch.byName));
    snap->torchByInputShape = std::make_shared<const KeyAverages>(std::move(torch.byInputShape));
    snap->correctedByName = std::make_shared<const KeyAverages>(std::move(corrected.byName));
    snap->correctedByInputShape = std::make_shared<const KeyAverages>(std::move(corrected.byInputShape));
  } else {
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
