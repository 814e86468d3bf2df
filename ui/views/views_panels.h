// The views next to the operator table (tabs under the timeline): Overview, Kernels, Memory and
// Modules, each computed from the trace's snapshot (core/views) off the UI thread the first time its
// tab is shown for a trace. Selecting a kernel or a module lights its events on the timeline;
// clicking the memory curve moves the timeline there.
#pragma once

#include <QVector>
#include <QWidget>
#include <memory>
#include <vector>

#include "core/store/event_store.h"
#include "core/views/views.h"
#include "ui/common/background.h"
#include "ui/table/table_model_base.h"

class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QSplitter;
class QStandardItemModel;
class QTableView;
class QTreeView;

namespace attnscope::ui {

struct LoadedTrace;

// A table of rows whose cells are numbers or text, each column with a kind that says how to show it.
class GridModel : public TableModelBase {
  Q_OBJECT

 public:
  enum class Kind { Text, Count, Time, Bytes, Percent, Number };
  struct Column {
    QString title;
    Kind kind = Kind::Text;
    QString tip;
  };
  static constexpr int EventRole = Qt::UserRole + 7;  // a row's event id, when it has one
  using TableModelBase::TableModelBase;
  void setRows(QVector<Column> columns, QVector<QVector<QVariant>> rows, QVector<EventId> events = {});
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 protected:
  QVariant cell(int row, int col, int role) const override;

 private:
  QVector<Column> cols_;
  QVector<QVector<QVariant>> rows_;
  QVector<EventId> events_;
};

// Shared by the four: a trace, a generation counter for background work, compute-once-when-shown.
class ViewPanel : public QWidget {
  Q_OBJECT

 public:
  // A minimum size of its own, so that what a view holds (a long kernel name, a wide chart) never
  // makes the window grow past the screen: the view squeezes, its tables scroll.
  explicit ViewPanel(QWidget* parent = nullptr) : QWidget(parent) { setMinimumSize(1, 1); }
  void setTrace(std::shared_ptr<const LoadedTrace> trace);
  bool computed() const { return computedFor_ != nullptr && computedFor_ == trace_.get(); }

 signals:
  void highlightRequested(std::vector<attnscope::EventId> events);  // light them on the timeline
  void timeRequested(qint64 ns);                                    // move the timeline there
  void ready();                                                     // the view is filled for the trace

 protected:
  void showEvent(QShowEvent* e) override;
  void computeIfShown();
  virtual void compute() = 0;  // starts the background work; calls done() on the UI thread when filled
  void done();
  // The background work threw: the view says so, with what went wrong, above its (empty) contents.
  void failed(const QString& what);
  // Runs `work` off the UI thread for the current trace; `apply(result)` then fills the view (unless
  // a newer trace came meanwhile) and done() follows; a throwing `work` reaches failed().
  template <class Work, class Apply>
  void computeInBackground(Work work, Apply apply) {
    const quint64 gen = generation_;
    runInBackground(
        this, std::move(work),
        [this, gen, apply = std::move(apply)](auto result) mutable {
          if (gen != generation_) return;
          apply(std::move(result));
          done();
        },
        [this, gen](const QString& what) {
          if (gen == generation_) failed(what);
        });
  }
  std::shared_ptr<const LoadedTrace> trace_;
  quint64 generation_ = 0;

 private:
  const LoadedTrace* computedFor_ = nullptr;
  QLabel* failure_ = nullptr;
};

class OverviewPanel : public ViewPanel {
  Q_OBJECT

 public:
  explicit OverviewPanel(QWidget* parent = nullptr);
  QTableView* table() const { return table_; }
  const OverviewView* view() const { return view_.get(); }

 protected:
  void compute() override;

 private:
  void fill();
  QWidget* chartHost_;
  QSplitter* chartSplit_ = nullptr;
  QTableView* table_;
  GridModel* model_;
  QLabel* findings_;
  std::shared_ptr<const OverviewView> view_;
};

class KernelsPanel : public ViewPanel {
  Q_OBJECT

 public:
  explicit KernelsPanel(QWidget* parent = nullptr);
  QTableView* table() const { return table_; }
  QComboBox* grouping() const { return grouping_; }
  const KernelView* view() const { return view_.get(); }
  // Writes the shown rows (their current order) as CSV or JSON, atomically.
  bool exportTo(const QString& path, QString* error) const;

 protected:
  void compute() override;

 private:
  void fill();
  QComboBox* grouping_;
  QTableView* table_;
  GridModel* model_;
  QSortFilterProxyModel* proxy_;
  QLabel* summary_;
  std::shared_ptr<const KernelView> view_;
};

class MemoryPanel : public ViewPanel {
  Q_OBJECT

 public:
  explicit MemoryPanel(QWidget* parent = nullptr);
  QComboBox* device() const { return device_; }
  QTableView* liveTable() const { return live_; }
  QTableView* allocationsTable() const { return allocs_; }
  QWidget* chart() const { return chartHost_; }
  const MemoryView* view() const { return view_.get(); }
  // The trace time under a point of the chart (what a click there moves the timeline to); -1 outside.
  qint64 timeAtChartPoint(QPoint p) const;

 protected:
  void compute() override;
  bool eventFilter(QObject* o, QEvent* e) override;

 private:
  void fill();
  void showDevice(int index);
  QComboBox* device_;
  QLabel* summary_;
  QWidget* chartHost_;
  QWidget* chartView_ = nullptr;
  QObject* chartViewport_ = nullptr;
  QTableView* live_;
  QTableView* allocs_;
  GridModel* liveModel_;
  GridModel* allocModel_;
  QSortFilterProxyModel* liveProxy_;
  QSortFilterProxyModel* allocProxy_;
  std::shared_ptr<const MemoryView> view_;
};

class ModulesPanel : public ViewPanel {
  Q_OBJECT

 public:
  explicit ModulesPanel(QWidget* parent = nullptr);
  QTreeView* tree() const { return tree_; }
  const ModuleView* view() const { return view_.get(); }

 protected:
  void compute() override;

 private:
  void fill();
  QLabel* summary_;
  QTreeView* tree_;
  QStandardItemModel* model_;
  std::shared_ptr<const ModuleView> view_;
};

}  // namespace attnscope::ui
