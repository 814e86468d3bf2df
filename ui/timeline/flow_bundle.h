// Flow arrows bundled at the current zoom, as the lanes fold events narrower than a few pixels: arrows
// whose two ends fall in the same cells (one row each) are drawn once, with the number they stand
// for. The cells start a few pixels wide and double until no more than a budget of arrows is left,
// so a selected training step with thousands of launches reads as a few dozen counted bundles
// instead of a solid block.
#pragma once

#include <QPointF>
#include <cstddef>
#include <vector>

namespace attnscope::ui {

struct FlowArrow {
  QPointF from;  // the bundle's ends: the mean of its arrows' (a launch's corner, its GPU work's corner)
  QPointF to;
  int count = 1;  // arrows this one stands for
};

class FlowBundler {
 public:
  static constexpr double kCellPixels = 8.0;  // the finest cell
  static constexpr std::size_t kMaxArrows = 60;

  void add(QPointF from, QPointF to) { raw_.push_back({from, to, 1}); }
  int added() const { return static_cast<int>(raw_.size()); }
  // The bundles, at the finest cell width (kCellPixels, doubled as needed) that leaves at most
  // maxArrows, in the order their first arrow came; the bundler is empty afterwards.
  std::vector<FlowArrow> take(std::size_t maxArrows = kMaxArrows, double cellPixels = kCellPixels);

 private:
  std::vector<FlowArrow> raw_;
};

}  // namespace attnscope::ui
