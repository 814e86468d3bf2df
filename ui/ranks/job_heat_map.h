// The Ranks view's heat map: one row per rank, one column per step. A cell where the rank held the others
// up (a straggler's, JobReport's StepFigures::imposedNs) is filled dark and shows the wait it imposed on
// every other rank, so the culprit's row stands out; every other cell is coloured by the time that rank
// waited in the step's collectives for the last rank (StepFigures::waitForLastNs, on the aligned clock).
// A set of ranks late together is drawn as one: its cells of a step outlined as a block, its rows
// bracketed and named. The straggler is named above the map; a legend gives the colours in ms. Step labels
// are the steps' numbers (their shared prefix said once), turned upright when they do not fit. Hovering a
// cell says its rank, step, waits, step time and cause; clicking it selects that rank and step.
#pragma once

#include <QColor>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/ranks/job.h"

namespace attnscope::ui {

class JobHeatMap : public QWidget {
  Q_OBJECT

 public:
  explicit JobHeatMap(QWidget* parent = nullptr);

  void setReport(std::shared_ptr<const ranks::JobReport> report);

  // Rows are JobReport::ranks (in that order), columns the steps in the order they ran.
  int rows() const;
  int columns() const { return static_cast<int>(steps_.size()); }
  QString stepAt(int column) const { return column >= 0 && column < columns() ? steps_[column] : QString(); }
  int columnOf(const QString& step) const { return static_cast<int>(steps_.indexOf(step)); }
  int rowOfRank(int64_t rank) const;
  // The figures of a cell (nullptr: that rank has no such step).
  const ranks::StepFigures* figures(int row, int column) const;
  // Where a cell is drawn, and the cell under a point.
  QRect cellRect(int row, int column) const;
  std::optional<std::pair<int, int>> cellAt(QPoint pos) const;
  // A straggler's cell: filled with the wait it imposed, outlined.
  bool marked(int row, int column) const { return marked_.count({row, column}) > 0; }
  // The wait a marked cell's rank imposed on every other rank in that step (0: not a straggler's cell).
  int64_t imposedAt(int row, int column) const;
  // The sets of ranks late together (stragglers of two ranks or more): their rows, and their name.
  struct SetMark {
    std::vector<int> rows;
    std::vector<int> columns;
    QString name;
  };
  const std::vector<SetMark>& sets() const { return sets_; }
  // The colour of a straggler's cell.
  static QColor culpritColor();
  // Step labels are drawn upright (they do not fit across a column).
  bool uprightLabels() const;
  // A column's label as drawn ("16" under the caption "steps (ProfilerStep#…)").
  QString columnLabel(int column) const;
  // The line above the map naming the straggler and its steps ("" when there is none).
  QString stragglerTitle() const { return title_; }
  QString toolTipAt(QPoint pos) const;
  QColor colorOf(int64_t waitNs) const;
  int64_t scaleMaxNs() const { return maxNs_; }

  std::pair<int, int> selected() const { return selected_; }
  void select(int row, int column);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  // A cell clicked: its rank (the rank number, not the row) and step.
  void cellSelected(qint64 rank, const QString& step);

 protected:
  void paintEvent(QPaintEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  bool event(QEvent* e) override;

 private:
  struct Geometry {
    int left = 0, top = 0, cellW = 0, cellH = 0;
  };
  Geometry geometryNow() const;
  int headerHeight() const;
  int labelsHeight() const;
  int leftWidth() const;
  QString legendCaption() const;
  QString heldCaption() const;
  int legendWidth() const;

  std::shared_ptr<const ranks::JobReport> report_;
  QStringList steps_;
  QString stepPrefix_;  // shared by every step name ("ProfilerStep#"): shown once, the columns say the rest
  std::vector<std::vector<int>> cellFigures_;  // [row][column] -> index into figures[row], -1 none
  std::set<std::pair<int, int>> marked_;
  std::vector<SetMark> sets_;
  QString title_;
  int64_t maxNs_ = 0;
  std::pair<int, int> selected_{-1, -1};
};

}  // namespace attnscope::ui
