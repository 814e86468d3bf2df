#include "core/tables/table_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "core/text/json_out.h"

namespace attnscope {

namespace {

struct ColumnInfo {
  Column col;
  std::string_view title;
  std::string_view key;
  std::string_view aliases[3];
};

constexpr ColumnInfo kColumns[] = {
    {Column::Name, "Name", "name", {"key", "", ""}},
    {Column::SelfCpuPct, "Self CPU %", "self_cpu_pct", {"", "", ""}},
    {Column::SelfCpu, "Self CPU", "self_cpu", {"self_cpu_time_total", "self_cpu_us", ""}},
    {Column::CpuTotalPct, "CPU total %", "cpu_total_pct", {"", "", ""}},
    {Column::CpuTotal, "CPU total", "cpu_total", {"cpu_time_total", "cpu_total_us", ""}},
    {Column::CpuAvg, "CPU time avg", "cpu_avg", {"cpu_time", "cpu_time_avg", ""}},
    {Column::SelfDevice, "Self CUDA", "self_device", {"self_cuda_time_total", "self_device_time_total", "self_cuda"}},
    {Column::SelfDevicePct, "Self CUDA %", "self_device_pct", {"self_cuda_pct", "", ""}},
    {Column::DeviceTotal, "CUDA total", "device_total", {"cuda_time_total", "device_time_total", "cuda_total"}},
    {Column::DeviceAvg, "CUDA time avg", "device_avg", {"cuda_time", "device_time", "cuda_avg"}},
    {Column::CpuMem, "CPU Mem", "cpu_mem", {"cpu_memory_usage", "cpu_mem_bytes", ""}},
    {Column::SelfCpuMem, "Self CPU Mem", "self_cpu_mem", {"self_cpu_memory_usage", "self_cpu_mem_bytes", ""}},
    {Column::DeviceMem, "CUDA Mem", "device_mem", {"cuda_memory_usage", "device_memory_usage", "cuda_mem"}},
    {Column::SelfDeviceMem,
     "Self CUDA Mem",
     "self_device_mem",
     {"self_cuda_memory_usage", "self_device_memory_usage", "self_cuda_mem"}},
    {Column::Calls, "# of Calls", "calls", {"count", "", ""}},
    {Column::InputShapes, "Input Shapes", "input_shapes", {"shapes", "", ""}},
};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string share(int64_t part, int64_t total) {
  if (total == 0) return "NaN";
  return formatPercent(static_cast<double>(part) * 100.0 / static_cast<double>(total));
}

std::string cellText(const KeyAverages& ka, const KeyAverageRow& r, Column c) {
  const double calls = r.calls ? static_cast<double>(r.calls) : 1.0;
  switch (c) {
    case Column::Name:
      return r.name;
    case Column::SelfCpuPct:
      return share(r.selfCpuNs, ka.sumSelfCpuNs);
    case Column::SelfCpu:
      return torchTimeText(us(r.selfCpuNs));
    case Column::CpuTotalPct:
      return share(r.cpuTotalNs, ka.sumSelfCpuNs);
    case Column::CpuTotal:
      return torchTimeText(us(r.cpuTotalNs));
    case Column::CpuAvg:
      return torchTimeText(us(r.cpuTotalNs) / calls);
    case Column::SelfDevice:
      return torchTimeText(us(r.selfDeviceNs));
    case Column::SelfDevicePct:
      return share(r.selfDeviceNs, ka.sumSelfDeviceNs);
    case Column::DeviceTotal:
      return torchTimeText(us(r.deviceTotalNs));
    case Column::DeviceAvg:
      return torchTimeText(us(r.deviceTotalNs) / calls);
    case Column::CpuMem:
      return formatMemory(r.cpuMemBytes);
    case Column::SelfCpuMem:
      return formatMemory(r.selfCpuMemBytes);
    case Column::DeviceMem:
      return formatMemory(r.deviceMemBytes);
    case Column::SelfDeviceMem:
      return formatMemory(r.selfDeviceMemBytes);
    case Column::Calls:
      return std::to_string(r.calls);
    case Column::InputShapes:
      return r.inputShapes;
    case Column::Count:
      break;
  }
  return {};
}

std::vector<Column> visibleColumns(const KeyAverages& ka) {
  std::vector<Column> cols;
  for (int i = 0; i < static_cast<int>(Column::Count); ++i) {
    const auto c = static_cast<Column>(i);
    if (c == Column::InputShapes && ka.groupBy != GroupBy::InputShape) continue;
    cols.push_back(c);
  }
  return cols;
}

std::string csvField(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"')
      out += "\"\"";
    else
      out.push_back(ch);
  }
  out += "\"";
  return out;
}

std::string mdEscape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|')
      out += "\\|";
    else if (ch == '\n')
      out += ' ';
    else
      out.push_back(ch);
  }
  return out;
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string pctNum(int64_t part, int64_t total) {
  if (total == 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(part) * 100.0 / static_cast<double>(total));
  return buf;
}

std::string renderText(const KeyAverages& ka, const std::vector<const KeyAverageRow*>& rows) {
  const auto cols = visibleColumns(ka);
  size_t nameW = 0, shapesW = 0;
  for (const auto* r : rows) {
    nameW = std::max(nameW, r->name.size() + 4);
    shapesW = std::max(shapesW, r->inputShapes.size() + 4);
  }
  nameW = std::min<size_t>(std::max<size_t>(nameW, 8), 55);
  shapesW = std::min<size_t>(std::max<size_t>(shapesW, 16), 80);
  auto width = [&](Column c) -> size_t {
    if (c == Column::Name) return nameW;
    if (c == Column::InputShapes) return shapesW;
    return 12;
  };
  auto pad = [](std::string s, size_t w) {
    if (s.size() < w) s.insert(0, w - s.size(), ' ');
    return s;
  };
  std::string sep, header;
  for (Column c : cols) {
    sep += std::string(width(c), '-') + "  ";
    header += pad(std::string(columnTitle(c)), width(c)) + "  ";
  }
  std::string out = sep + "\n" + header + "\n" + sep + "\n";
  for (const auto* r : rows) {
    std::string line;
    for (Column c : cols) {
      std::string t = cellText(ka, *r, c);
      if (c == Column::Name && t.size() >= nameW - 3) t = t.substr(0, nameW - 3) + "...";
      if (c == Column::InputShapes && t.size() > shapesW) t = t.substr(0, shapesW - 3) + "...";
      line += pad(std::move(t), width(c)) + "  ";
    }
    out += line + "\n";
  }
  out += sep + "\n";
  out += "Self CPU time total: " + torchTimeText(us(ka.sumSelfCpuNs)) + "\n";
  out += "Self CUDA time total: " + torchTimeText(us(ka.sumSelfDeviceNs)) + "\n";
  return out;
}

constexpr std::string_view kMachineColumns[] = {"name",
                                                "device_type",
                                                "family",
                                                "input_shapes",
                                                "calls",
                                                "self_cpu_us",
                                                "self_cpu_pct",
                                                "cpu_total_us",
                                                "cpu_total_pct",
                                                "cpu_avg_us",
                                                "self_device_us",
                                                "self_device_pct",
                                                "device_total_us",
                                                "device_avg_us",
                                                "cpu_mem_bytes",
                                                "self_cpu_mem_bytes",
                                                "device_mem_bytes",
                                                "self_device_mem_bytes"};

std::vector<std::string> machineValues(const KeyAverages& ka, const KeyAverageRow& r) {
  const double calls = r.calls ? static_cast<double>(r.calls) : 1.0;
  return {r.name,
          r.deviceType == DeviceType::Cpu ? "cpu" : "cuda",
          std::string(familyName(r.family)),
          r.inputShapes,
          std::to_string(r.calls),
          num(us(r.selfCpuNs)),
          pctNum(r.selfCpuNs, ka.sumSelfCpuNs),
          num(us(r.cpuTotalNs)),
          pctNum(r.cpuTotalNs, ka.sumSelfCpuNs),
          num(us(r.cpuTotalNs) / calls),
          num(us(r.selfDeviceNs)),
          pctNum(r.selfDeviceNs, ka.sumSelfDeviceNs),
          num(us(r.deviceTotalNs)),
          num(us(r.deviceTotalNs) / calls),
          std::to_string(r.cpuMemBytes),
          std::to_string(r.selfCpuMemBytes),
          std::to_string(r.deviceMemBytes),
          std::to_string(r.selfDeviceMemBytes)};
}

std::string renderCsv(const KeyAverages& ka, const std::vector<const KeyAverageRow*>& rows) {
  std::string out;
  bool first = true;
  for (auto c : kMachineColumns) {
    if (!first) out += ',';
    out += c;
    first = false;
  }
  out += '\n';
  for (const auto* r : rows) {
    const auto vals = machineValues(ka, *r);
    for (size_t i = 0; i < vals.size(); ++i) {
      if (i) out += ',';
      out += csvField(vals[i]);
    }
    out += '\n';
  }
  return out;
}

std::string renderJson(const KeyAverages& ka, const std::vector<const KeyAverageRow*>& rows) {
  std::string out = "{\"attribution\": ";
  out += ka.attribution == Attribution::Torch ? "\"torch\"" : "\"corrected\"";
  out += ", \"group_by\": ";
  out += ka.groupBy == GroupBy::Name ? "\"name\"" : "\"shape\"";
  out += ", \"columns\": [";
  bool first = true;
  for (auto c : kMachineColumns) {
    if (!first) out += ", ";
    appendJsonString(out, c);
    first = false;
  }
  out += "], \"self_cpu_total_us\": " + jsonNumber(us(ka.sumSelfCpuNs));
  out += ", \"self_device_total_us\": " + jsonNumber(us(ka.sumSelfDeviceNs));
  out += ", \"rows\": [";
  first = true;
  for (const auto* r : rows) {
    out += first ? "\n  {" : ",\n  {";
    first = false;
    out += "\"name\": ";
    appendJsonString(out, r->name);
    out += ", \"device_type\": ";
    out += r->deviceType == DeviceType::Cpu ? "\"cpu\"" : "\"cuda\"";
    out += ", \"family\": ";
    appendJsonString(out, familyName(r->family));
    out += ", \"input_shapes\": ";
    appendJsonString(out, r->inputShapes);
    out += ", \"calls\": " + std::to_string(r->calls);
    out += ", \"self_cpu_us\": " + jsonNumber(us(r->selfCpuNs));
    out += ", \"cpu_total_us\": " + jsonNumber(us(r->cpuTotalNs));
    out += ", \"self_device_us\": " + jsonNumber(us(r->selfDeviceNs));
    out += ", \"device_total_us\": " + jsonNumber(us(r->deviceTotalNs));
    out += ", \"cpu_mem_bytes\": " + std::to_string(r->cpuMemBytes);
    out += ", \"self_cpu_mem_bytes\": " + std::to_string(r->selfCpuMemBytes);
    out += ", \"device_mem_bytes\": " + std::to_string(r->deviceMemBytes);
    out += ", \"self_device_mem_bytes\": " + std::to_string(r->selfDeviceMemBytes);
    out += "}";
  }
  out += "\n]}\n";
  return out;
}

std::string renderMarkdown(const KeyAverages& ka, const std::vector<const KeyAverageRow*>& rows) {
  const auto cols = visibleColumns(ka);
  std::string out = "|";
  for (Column c : cols) out += " " + std::string(columnTitle(c)) + " |";
  out += "\n|";
  for (Column c : cols) out += c == Column::Name || c == Column::InputShapes ? " --- |" : " ---: |";
  out += "\n";
  for (const auto* r : rows) {
    out += "|";
    for (Column c : cols) out += " " + mdEscape(cellText(ka, *r, c)) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string_view columnTitle(Column c) { return kColumns[static_cast<int>(c)].title; }
std::string_view columnKey(Column c) { return kColumns[static_cast<int>(c)].key; }

std::optional<Column> parseColumn(std::string_view s) {
  for (const auto& ci : kColumns) {
    if (iequals(s, ci.key) || iequals(s, ci.title)) return ci.col;
    for (auto a : ci.aliases)
      if (!a.empty() && iequals(s, a)) return ci.col;
  }
  return std::nullopt;
}

double columnValue(const KeyAverages& ka, const KeyAverageRow& r, Column c) {
  const double calls = r.calls ? static_cast<double>(r.calls) : 1.0;
  auto pct = [](int64_t a, int64_t t) { return t ? static_cast<double>(a) * 100.0 / static_cast<double>(t) : 0.0; };
  switch (c) {
    case Column::SelfCpuPct:
      return pct(r.selfCpuNs, ka.sumSelfCpuNs);
    case Column::SelfCpu:
      return static_cast<double>(r.selfCpuNs);
    case Column::CpuTotalPct:
      return pct(r.cpuTotalNs, ka.sumSelfCpuNs);
    case Column::CpuTotal:
      return static_cast<double>(r.cpuTotalNs);
    case Column::CpuAvg:
      return static_cast<double>(r.cpuTotalNs) / calls;
    case Column::SelfDevice:
      return static_cast<double>(r.selfDeviceNs);
    case Column::SelfDevicePct:
      return pct(r.selfDeviceNs, ka.sumSelfDeviceNs);
    case Column::DeviceTotal:
      return static_cast<double>(r.deviceTotalNs);
    case Column::DeviceAvg:
      return static_cast<double>(r.deviceTotalNs) / calls;
    case Column::CpuMem:
      return static_cast<double>(r.cpuMemBytes);
    case Column::SelfCpuMem:
      return static_cast<double>(r.selfCpuMemBytes);
    case Column::DeviceMem:
      return static_cast<double>(r.deviceMemBytes);
    case Column::SelfDeviceMem:
      return static_cast<double>(r.selfDeviceMemBytes);
    case Column::Calls:
      return static_cast<double>(r.calls);
    case Column::Name:
    case Column::InputShapes:
    case Column::Count:
      break;
  }
  return 0.0;
}

std::vector<const KeyAverageRow*> sortedRows(const KeyAverages& ka, Column by, bool ascending) {
  std::vector<const KeyAverageRow*> rows;
  rows.reserve(ka.rows.size());
  for (const auto& r : ka.rows) rows.push_back(&r);
  if (by == Column::Name || by == Column::InputShapes) {
    std::stable_sort(rows.begin(), rows.end(), [&](const KeyAverageRow* a, const KeyAverageRow* b) {
      const std::string& x = by == Column::Name ? a->name : a->inputShapes;
      const std::string& y = by == Column::Name ? b->name : b->inputShapes;
      return ascending ? x < y : y < x;
    });
  } else {
    std::stable_sort(rows.begin(), rows.end(), [&](const KeyAverageRow* a, const KeyAverageRow* b) {
      const double x = columnValue(ka, *a, by), y = columnValue(ka, *b, by);
      return ascending ? x < y : y < x;
    });
  }
  return rows;
}

std::string renderTable(const KeyAverages& ka, const TableOptions& opt) {
  auto rows = sortedRows(ka, opt.sortBy, opt.ascending);
  if (opt.limit && rows.size() > opt.limit) rows.resize(opt.limit);
  switch (opt.format) {
    case TableFormat::Text:
      return renderText(ka, rows);
    case TableFormat::Csv:
      return renderCsv(ka, rows);
    case TableFormat::Json:
      return renderJson(ka, rows);
    case TableFormat::Markdown:
      return renderMarkdown(ka, rows);
  }
  return {};
}

std::string formatMemory(int64_t bytes) {
  constexpr double KB = 1024.0, MB = 1024.0 * KB, GB = 1024.0 * MB;
  const double a = std::fabs(static_cast<double>(bytes));
  char buf[64];
  if (a >= GB)
    std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(bytes) / GB);
  else if (a >= MB)
    std::snprintf(buf, sizeof buf, "%.2f MB", static_cast<double>(bytes) / MB);
  else if (a >= KB)
    std::snprintf(buf, sizeof buf, "%.2f KB", static_cast<double>(bytes) / KB);
  else
    return std::to_string(bytes) + " B";
  return buf;
}

std::string formatPercent(double pct) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f%%", pct);
  return buf;
}

}  // namespace attnscope
