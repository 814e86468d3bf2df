// Two runs side by side (core's compareTraces): table rows and steps joined
// by name, each metric as A, B and the delta, changes highlighted, and the
// perturbation summary (what wrapping changed, with numbers).
#pragma once

#include <QString>
#include <QVector>
#include <QWidget>
#include <memory>
#include <optional>

#include "core/explain/compare.h"
#include "core/snapshot/trace_snapshot.h"
#include "ui/table/table_model_base.h"

class QComboBox;
class QLabel;
class QPushButton;
class QTableView;
class QSortFilterProxyModel;

namespace attnscope::ui {

class ChangesModel;
class TimelineDiff;

struct CompareLine {
  QString key;
  bool inA = true, inB = true;
  QVector<std::optional<double>> a, b;  // one per metric
};

// Rows: joined entries. Columns: key, then per metric A, B, delta.
class CompareModel : public TableModelBase {
  Q_OBJECT

 public:
  struct Metric {
    QString title;
    bool time = true;  // nanoseconds (shown in us/ms); else a count
  };
  static constexpr int ChangedRole = Qt::UserRole + 30;  // bool: a notable change

  explicit CompareModel(QObject* parent = nullptr);
  void setLines(QString keyTitle, QVector<Metric> metrics, QVector<CompareLine> lines);
  void setFromRows(const Comparison& c);
  void setFromSteps(const Comparison& c);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  // Whether the delta of a metric on a line is notable (>= 10% and >= 1 us, or a side missing).
  bool changed(int row, int metric) const;

 protected:
  QVariant cell(int row, int col, int role) const override;

 private:
  QString keyTitle_;
  QVector<Metric> metrics_;
  QVector<CompareLine> lines_;
};

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);

  // Compares two loaded traces (asynchronously: reading their snapshots); compared() follows.
  void compare(const QString& labelA, std::shared_ptr<const TraceSnapshot> a, const QString& labelB,
               std::shared_ptr<const TraceSnapshot> b);
  void setMessage(const QString& text);
  CompareModel* rowsModel() const { return rows_; }
  CompareModel* stepsModel() const { return steps_; }
  const Comparison* comparison() const { return cmp_.get(); }
  QString perturbationText() const;
  // What the comparison comes to, first: "B is +37.856 ms a step" (the steps' median host time, A and
  // B with their spreads), or that the two differ by less than their noise. Plain text.
  QString headlineText() const;
  ChangesModel* changesModel() const { return changes_; }
  QTableView* changesView() const { return changesView_; }
  // The two timelines side by side (a window of its own), showing change `change` (-1: none).
  TimelineDiff* openTimelines(int change = -1);
  TimelineDiff* timelines() const { return diff_; }

 signals:
  void compared();
  void timelinesReady(attnscope::ui::TimelineDiff* diff);  // the side-by-side window has both traces

 private:
  void recompute();

  QLabel* title_;
  QLabel* headline_;
  QComboBox* attribution_;
  QComboBox* groupBy_;
  QLabel* perturbation_;
  CompareModel* rows_;
  CompareModel* steps_;
  QSortFilterProxyModel* rowsProxy_;
  QTableView* rowsView_;
  QTableView* stepsView_;
  ChangesModel* changes_;
  QSortFilterProxyModel* changesProxy_;
  QTableView* changesView_;
  QPushButton* openDiff_;
  TimelineDiff* diff_ = nullptr;
  QString labelA_, labelB_;
  std::shared_ptr<const TraceSnapshot> a_, b_;
  std::shared_ptr<const Comparison> cmp_;
  quint64 generation_ = 0;
};

}  // namespace attnscope::ui
