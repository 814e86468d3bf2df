#include "ui/timeline/flow_bundle.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <map>

namespace attnscope::ui {

namespace {

std::vector<FlowArrow> bundle(const std::vector<FlowArrow>& raw, double cell) {
  const auto cellOf = [cell](double x) { return static_cast<int64_t>(std::floor(x / cell)); };
  std::map<std::array<int64_t, 4>, std::size_t> index;  // (from cell, from row, to cell, to row)
  std::vector<FlowArrow> out;
  std::vector<QPointF> sumFrom, sumTo;
  for (const FlowArrow& a : raw) {
    // Rows are whole pixels apart: y is compared rounded, x by cell.
    const std::array<int64_t, 4> key{cellOf(a.from.x()), static_cast<int64_t>(std::lround(a.from.y())),
                                     cellOf(a.to.x()), static_cast<int64_t>(std::lround(a.to.y()))};
    const auto [it, fresh] = index.try_emplace(key, out.size());
    if (fresh) {
      out.push_back(FlowArrow{a.from, a.to, 0});
      sumFrom.emplace_back(0, 0);
      sumTo.emplace_back(0, 0);
    }
    ++out[it->second].count;
    sumFrom[it->second] += a.from;
    sumTo[it->second] += a.to;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].from = sumFrom[i] / out[i].count;
    out[i].to = sumTo[i] / out[i].count;
  }
  return out;
}

}  // namespace

std::vector<FlowArrow> FlowBundler::take(std::size_t maxArrows, double cellPixels) {
  std::vector<FlowArrow> raw;
  raw.swap(raw_);
  if (raw.size() <= 1) return raw;
  double cell = cellPixels > 0 ? cellPixels : kCellPixels;
  std::vector<FlowArrow> out = bundle(raw, cell);
  // Doubling ends: at worst every arrow shares one cell per row pair.
  for (int i = 0; out.size() > maxArrows && i < 40; ++i) {
    cell *= 2;
    out = bundle(raw, cell);
  }
  return out;
}

}  // namespace attnscope::ui
