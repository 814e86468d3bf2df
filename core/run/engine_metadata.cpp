#include "core/run/engine_metadata.h"

#include <simdjson.h>

namespace attnscope {

std::optional<EngineMetadata> readEngineMetadata(const EventStore& store) {
  const std::string& text = store.meta().attnscopeJson;
  if (text.empty()) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc)) return std::nullopt;
  EngineMetadata m;
  std::string_view sv;
  if (!doc["config"]["args"].get_string().get(sv)) m.args = std::string(sv);
  simdjson::dom::array steps;
  if (doc["steps"].get_array().get(steps)) return std::nullopt;
  for (auto step : steps) {
    std::string_view name;
    bool wrapped = false;
    if (step["name"].get_string().get(name)) continue;
    if (step["wrapped"].get_bool().get(wrapped)) wrapped = false;
    simdjson::dom::array iters;
    if (step["iterations"].get_array().get(iters)) continue;
    for (auto it : iters) {
      int64_t i = 0, a = 0, b = 0;
      if (it["iteration"].get_int64().get(i) || it["host_start_ns"].get_int64().get(a) ||
          it["host_end_ns"].get_int64().get(b))
        continue;
      EngineStep w;
      w.name = i == 0 ? std::string(name) : std::string(name) + " #" + std::to_string(i + 1);
      w.wrapped = wrapped;
      w.hostStartNs = a;
      w.hostEndNs = b;
      m.windows.push_back(std::move(w));
    }
  }
  // Steps in time order (the metadata groups them by step).
  std::stable_sort(m.windows.begin(), m.windows.end(),
                   [](const EngineStep& x, const EngineStep& y) { return x.hostStartNs < y.hostStartNs; });
  simdjson::dom::object timing;
  if (!doc["timing"].get_object().get(timing)) {
    for (auto [method, v] : timing) {
      simdjson::dom::array rows;
      if (v["steps"].get_array().get(rows)) continue;
      auto& table = m.timing[std::string(method)];
      for (auto row : rows) {
        std::vector<int64_t> r;
        for (auto x : row) {
          int64_t n = -1;
          if (x.get_int64().get(n)) n = -1;
          r.push_back(n);
        }
        table.push_back(std::move(r));
      }
      std::string_view what;
      if (!v["measures"].get_string().get(what)) m.measures[std::string(method)] = std::string(what);
    }
  }
  auto c = doc["collection"];
  int64_t n = 0;
  if (!c["dropped_records"].get_int64().get(n)) m.droppedRecords = static_cast<uint64_t>(n);
  if (!c["cupti"].get_string().get(sv)) m.cupti = std::string(sv);
  if (c["nvtx_ranges_pushed"].get_int64().get(m.nvtxPushed)) m.nvtxPushed = 0;
  if (c["nvtx_ranges_seen"].get_int64().get(m.nvtxSeen)) m.nvtxSeen = 0;
  return m;
}

}  // namespace attnscope
