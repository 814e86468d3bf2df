#include "core/snapshot/trace_snapshot.h"

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "core/store/span_log.h"
#include "core/store/threads.h"

namespace attnscope {

namespace {
// Stores this large are snapshotted on two threads.
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
  // A large trace's work on several threads (spilled too: its threads' arrays are files whose pages the
  // governor keeps under the budget): torch's two attributions beside the activity index and the part
  // of the explanation that reads no table, with every free thread helping that part; then what reads
  // both.
  const bool parallel = s.size() >= parallelMinEvents(kParallelSnapshotEvents) && workerThreads() >= 2;
  // Each attribution once: both groupings from it, or by name only.
  KeyAveragesBothGroupings torch, corrected;
  auto attribution = [&](Attribution at, KeyAveragesBothGroupings& into) {
    const spans::Span sp(at == Attribution::Torch ? "snapshot: torch's table" : "snapshot: corrected table");
    if (options.shapeTables)
      into = computeKeyAveragesBothGroupings(s, at);
    else
      into.byName = computeKeyAverages(s, GroupBy::Name, at);
  };
  std::optional<Explanation> explanation;
  std::optional<Ledger> ledger;  // computed beside the explanation, when it is made on several threads
  if (parallel && options.explain) {
    // The explanation here (its chain is the longest: steps, rules, evidence); torch's attributions on
    // threads of their own (one thread for both on two CPUs), each of which then helps with the
    // explanation, as every further thread does from the start.
    const unsigned threads = workerThreads();
    // The ledger reads the index and both attributions: whichever of them is made last computes it.
    // Nobody waits for another (a part whose thread could not start runs after the rest), and a part
    // that fails leaves it to finishWithTables, after the failure has come back.
    std::atomic<int> pending(threads >= 3 ? 3 : 2);
    auto madeOne = [&] {
      if (pending.fetch_sub(1) == 1) {
        const spans::Span sp("snapshot: ledger");
        ledger = computeLedger(s, snap->index, torch.byName, corrected.byName, snap->engine ? &*snap->engine : nullptr);
      }
    };
    std::vector<std::function<void()>> parts;
    if (threads >= 3) {
      parts.emplace_back([&] {
        attribution(Attribution::Torch, torch);
        madeOne();
      });
      parts.emplace_back([&] {
        attribution(Attribution::Corrected, corrected);
        madeOne();
      });
      parts.resize(threads - 1);
    } else {
      parts.emplace_back([&] {
        attribution(Attribution::Torch, torch);
        attribution(Attribution::Corrected, corrected);
        madeOne();
      });
    }
    Helpers helpers;
    runWithHelpers(
        helpers,
        [&] {
          {
            const spans::Span sp("snapshot: activity index");
            snap->index = ActivityIndex(s);
          }
          madeOne();
          explanation = explainWithoutTables(*snap, options.steps, options.profilerStepsFirst, &helpers);
        },
        parts);
  } else {
    // With no explanation: the index and one attribution beside the other.
    runBoth(
        parallel,
        [&] {
          snap->index = ActivityIndex(s);
          attribution(Attribution::Torch, torch);
        },
        [&] { attribution(Attribution::Corrected, corrected); });
  }
  snap->torchByName = std::make_shared<const KeyAverages>(std::move(torch.byName));
  snap->correctedByName = std::make_shared<const KeyAverages>(std::move(corrected.byName));
  if (options.shapeTables) {
    snap->torchByInputShape = std::make_shared<const KeyAverages>(std::move(torch.byInputShape));
    snap->correctedByInputShape = std::make_shared<const KeyAverages>(std::move(corrected.byInputShape));
  }
  if (options.explain) {
    if (!explanation) explanation = explainWithoutTables(*snap, options.steps, options.profilerStepsFirst);
    {
      const spans::Span sp("snapshot: findings");
      if (ledger)
        finishWithLedger(*snap, *explanation, std::move(*ledger));
      else
        finishWithTables(*snap, *explanation);
    }
    const spans::Span sp("snapshot: founding answer");
    snap->explanation = std::make_shared<const Explanation>(std::move(*explanation));
    snap->answer = std::make_shared<const FoundingAnswer>(
        foundingAnswer(s, *snap->explanation, *snap->torchByName, snap->engine ? &*snap->engine : nullptr));
  }
  return snap;
}

std::shared_ptr<const TraceSnapshot> snapshotOf(const EventStore& store, const SnapshotOptions& options) {
  return buildSnapshot(std::shared_ptr<const EventStore>(&store, [](const EventStore*) {}), options);
}

}  // namespace attnscope
