// The viewer's main window: torch's key_averages table of one trace, with
// File > Open, a Group-by choice, a name filter and a status line.
#pragma once

#include <QMainWindow>
#include <memory>
#include <vector>

#include "core/tables/key_averages.h"
#include "ui/shell/trace_loader.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QTableView;
class QFrame;

namespace attnscope::ui {

class KeyAveragesModel;
class KeyAveragesProxy;
class TimelinePanel;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Start an asynchronous load; traceShown() or loadFailed() follows. A
  // failed load keeps the trace shown before it.
  void openTrace(const QString& path);
  void openBundledSample();

  void setGroupBy(GroupBy g);
  GroupBy groupBy() const;
  // torch's key_averages or the corrected attribution (attribution.h).
  void setAttribution(Attribution a);
  Attribution attribution() const { return attribution_; }
  void setNameFilter(const QString& text, bool regex);

  const std::shared_ptr<const TraceSnapshot>& snapshot() const { return snapshot_; }
  QTableView* tableView() const { return view_; }
  TimelinePanel* timeline() const { return timeline_; }
  KeyAveragesModel* model() const { return model_; }
  KeyAveragesProxy* proxy() const { return proxy_; }

 signals:
  void traceShown();
  void loadFailed(const QString& message);
  // Emitted while the header's context menu is being built, before it
  // shows: receivers may add actions for `column` (a logical index).
  void headerMenuAboutToShow(QMenu* menu, int column);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  QWidget* buildControls();
  void showSnapshot(std::shared_ptr<const TraceSnapshot> snap);
  void showLoadError(const QString& message);
  void applyGroupBy();
  void applyFilter();
  void updateStatus();
  void updateRowCount();
  void updateColumnVisibility();
  void fitColumns();
  void fitFlexibleColumns();
  void showHeaderMenu(const QPoint& pos);
  void chooseFile();

  TraceLoader* loader_ = nullptr;
  KeyAveragesModel* model_ = nullptr;
  KeyAveragesProxy* proxy_ = nullptr;
  TimelinePanel* timeline_ = nullptr;
  QTableView* view_ = nullptr;
  QLabel* note_ = nullptr;
  QFrame* errorBar_ = nullptr;
  QLabel* errorText_ = nullptr;
  QComboBox* groupBy_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QCheckBox* regex_ = nullptr;
  QLabel* rowCount_ = nullptr;
  QLabel* summary_ = nullptr;
  QLabel* badEvents_ = nullptr;
  QString lastDir_;
  int nameWant_ = 0;  // contents width of Name / Input Shapes at the last fit
  int shapesWant_ = 0;
  QString loadingPath_;
  std::shared_ptr<const TraceSnapshot> snapshot_;
  Attribution attribution_ = Attribution::Torch;
  // Per column: -1 automatic, 0 hidden, 1 shown (set through the header menu).
  std::vector<int> columnChoice_;
};

}  // namespace attnscope::ui
