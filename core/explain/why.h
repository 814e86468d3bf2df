// "Why is this zero?": for a table row name, where its GPU time is: the
// work it launched itself, the work of the ops inside it, and if there is
// none, where the GPU work near it went (another op, another thread, the
// profiler's overhead event, unlinked). `attnscope-cli why` prints it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/event_store.h"
#include "core/tables/key_averages.h"

namespace attnscope {

struct WhyItem {
  std::string section;  // row, difference, own, children, near, span, launched_by, summary
  std::string text;     // one plain sentence with its numbers
  int64_t ns = 0;
  std::vector<EventId> evidence;
};

struct WhyReport {
  std::string name;
  bool found = false;  // some event has this name
  std::vector<WhyItem> items;
};

struct TraceSnapshot;

// Reads the snapshot's tables and index; recomputes neither.
WhyReport whyRow(const TraceSnapshot& snap, std::string_view name);
// The same for one row of a table (what the table shows: grouped by input shape, the row with
// those shapes), with why torch's CUDA total and the GPU work its ops launched differ.
WhyReport whyTableRow(const TraceSnapshot& snap, const KeyAverageRow& row, GroupBy groupBy);
// The table row a user names as the table shows it: "ProfilerStep*", a kernel's name, or, grouped by
// input shape, "aten::bmm [[128, 1024, 64], [128, 64, 1024]]" (the name, a space, the shapes). CPU rows
// before device rows of the same name; null when no row is so named.
struct TableRowRef {
  const KeyAverageRow* row = nullptr;
  GroupBy groupBy = GroupBy::Name;
};
TableRowRef findTableRow(const TraceSnapshot& snap, std::string_view shown);
// `attnscope-cli why`: every table row so named (a record_function has a CPU row and a GPU-span
// row), each as whyTableRow reports it; else, for a name no row has, whyRow.
WhyReport whyShownRow(const TraceSnapshot& snap, std::string_view shown);
std::string whyText(const EventStore& store, const WhyReport& r);
std::string whyJson(const EventStore& store, const WhyReport& r);

}  // namespace attnscope
