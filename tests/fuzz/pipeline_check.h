// What the pipeline fuzzer checks for one input, shared with the test that
// replays its findings (tests/data/fuzz, test_reader): the reader's check
// (reader_check.h), then, when the input loads, everything a user can ask
// of it: the snapshot (activity index, torch's four tables), every table
// written in every format, the analysis (steps, sync waits, ledger,
// findings) written as text and JSON, the four views in every format, a
// compare of the trace with itself (every change must be zero), and the
// trace writer. A crash, a sanitizer report or a false answer is a finding.
#pragma once

#include <string>
#include <string_view>

#include "core/explain/compare.h"
#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/tables/table_format.h"
#include "core/views/views.h"
#include "reader_check.h"

namespace attnscope::fuzz {

// False when an answer is wrong (a crash or a sanitizer report ends the run).
inline bool checkPipeline(std::string_view input) {
  LoadResult r;
  if (!checkReader(input, &r)) return false;
  if (!r.ok()) return true;
  auto store = std::make_shared<const EventStore>(std::move(*r.store));
  auto snap = buildSnapshot(store);
  for (const auto* ka : {snap->torchByName.get(), snap->torchByInputShape.get(), snap->correctedByName.get(),
                         snap->correctedByInputShape.get()}) {
    if (!ka) return false;
    for (TableFormat f : {TableFormat::Text, TableFormat::Csv, TableFormat::Json, TableFormat::Markdown})
      (void)renderTable(*ka, {.format = f, .sortBy = Column::SelfDevice, .ascending = false, .limit = 0});
  }
  const Explanation& ex = *snap->explanation;
  (void)explainText(*store, ex);
  (void)explainJson(*store, ex);
  (void)ledgerText(ex.ledger);
  (void)ledgerJson(*store, ex.ledger, true);
  const KernelView k = kernelView(*snap);
  (void)kernelViewText(k);
  (void)kernelViewJson(k);
  (void)kernelViewCsv(k);
  const MemoryView m = memoryView(*snap);
  (void)memoryViewText(m);
  (void)memoryViewJson(m);
  (void)memoryViewCsv(m);
  const OverviewView o = overviewView(*snap);
  (void)overviewViewText(o);
  (void)overviewViewJson(o);
  (void)overviewViewCsv(o);
  const ModuleView mv = moduleView(*snap);
  (void)moduleViewText(mv);
  (void)moduleViewJson(mv);
  (void)moduleViewCsv(mv);
  // The trace against itself: nothing may have changed.
  const Comparison c = compareTraces(*snap, *snap);
  (void)compareText(c);
  (void)compareJson(c);
  (void)compareCsv(c);
  for (const Change& ch : c.changes)
    if (ch.deltaNs != 0 || ch.status != "changed") return false;
  for (const StepStat& st : c.stepStats)
    if (st.deltaNs != 0) return false;
  return true;
}

}  // namespace attnscope::fuzz
