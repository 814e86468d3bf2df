// Renders KeyAverages as torch's text table, CSV, JSON or Markdown.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tables/key_averages.h"
#include "core/text/duration.h"

namespace attnscope {

enum class TableFormat { Text, Csv, Json, Markdown };

// Sortable columns, named as the CLI accepts them.
enum class Column {
  Name,
  SelfCpuPct,
  SelfCpu,
  CpuTotalPct,
  CpuTotal,
  CpuAvg,
  SelfDevice,
  SelfDevicePct,
  DeviceTotal,
  DeviceAvg,
  CpuMem,
  SelfCpuMem,
  DeviceMem,
  SelfDeviceMem,
  Calls,
  InputShapes,
  Count
};
std::string_view columnTitle(Column c);                 // torch's header: "Self CUDA %"
std::string_view columnKey(Column c);                   // CLI/JSON key: "self_device_pct"
std::optional<Column> parseColumn(std::string_view s);  // key or title, case-insensitive

struct TableOptions {
  TableFormat format = TableFormat::Text;
  Column sortBy = Column::SelfDevice;
  bool ascending = false;
  size_t limit = 0;  // 0 = all rows
};

// Sorts a copy of the rows (stable: ties keep torch's order).
std::vector<const KeyAverageRow*> sortedRows(const KeyAverages& ka, Column by, bool ascending);
// Numeric value of a column for sorting (name/shapes: not numeric, returns 0).
double columnValue(const KeyAverages& ka, const KeyAverageRow& r, Column c);

std::string renderTable(const KeyAverages& ka, const TableOptions& opt);

// torch's formatting helpers (_format_memory, percentages; _format_time is torchTimeText).
std::string formatMemory(int64_t bytes);
std::string formatPercent(double pct);

}  // namespace attnscope
