// The Ranks window: a distributed job's traces read together (core/ranks). From the top: what costs
// the job most (the analysis's headline) and the job in one line; the rank x step heat map of time
// spent waiting for the last rank, the straggler outlined and named, beside the findings in words
// and the table of collectives with their arrival skew; under them the chosen ranks' timelines on
// the aligned clock. Clicking a cell selects that rank and step (its timeline shown, zoomed to the
// step); clicking a collective zooms the timelines to it. The analysis runs off the UI thread with
// progress and Cancel; a failure is said in the window.
#pragma once

#include <QStringList>
#include <QWidget>
#include <memory>

#include "core/ranks/job.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QTimer;

namespace attnscope {
struct LoadProgress;
}

namespace attnscope::ui {

class CollectivesModel;
class JobHeatMap;
class RankTimelines;

class RanksView : public QWidget {
  Q_OBJECT

 public:
  explicit RanksView(QWidget* parent = nullptr);
  ~RanksView() override;

  // Reads PATHS (a folder, or one trace per rank) and analyses them off the UI thread; jobShown() or
  // jobFailed() follows (or jobCancelled() after cancel()). The job shown before stays until then.
  void openJob(const QStringList& paths);
  void cancel();
  bool busy() const { return busy_; }

  const std::shared_ptr<const ranks::JobReport>& report() const { return report_; }
  JobHeatMap* heatMap() const { return heatMap_; }
  QTableView* collectivesView() const { return table_; }
  CollectivesModel* collectives() const { return model_; }
  QSortFilterProxyModel* collectivesProxy() const { return proxy_; }
  RankTimelines* timelines() const { return timelines_; }
  QTabWidget* sideTabs() const { return side_; }
  QSplitter* splitter() const { return split_; }
  QString headlineText() const;
  QString findingsText() const;  // plain text
  QString errorText() const;     // "" when no error is shown
  QString selectionText() const;
  qint64 selectedRank() const { return selectedRank_; }
  QString selectedStep() const { return selectedStep_; }

 signals:
  void jobShown();
  void jobFailed(const QString& message);
  void jobCancelled();
  void openTraceRequested(const QString& path);

 private:
  void showReport(std::shared_ptr<const ranks::JobReport> report, const QStringList& warnings);
  void showError(const QString& message);
  void onCellSelected(qint64 rank, const QString& step);
  void onCollectiveChosen();
  void pollProgress();
  void fitSplit();

  QLabel* headline_ = nullptr;
  QLabel* subtitle_ = nullptr;
  QWidget* busyRow_ = nullptr;
  QLabel* busyText_ = nullptr;
  QProgressBar* progressBar_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QLabel* error_ = nullptr;
  JobHeatMap* heatMap_ = nullptr;
  QLabel* selection_ = nullptr;
  QTabWidget* side_ = nullptr;
  QTextBrowser* findings_ = nullptr;
  QTableView* table_ = nullptr;
  CollectivesModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  RankTimelines* timelines_ = nullptr;
  QSplitter* split_ = nullptr;  // the map and words above, the timelines below
  QTimer* poll_ = nullptr;

  std::shared_ptr<const ranks::JobReport> report_;
  std::shared_ptr<LoadProgress> progress_;
  quint64 generation_ = 0;
  bool busy_ = false;
  qint64 startedMs_ = 0;
  quint64 totalBytes_ = 0, doneBytes_ = 0, lastBytes_ = 0, lastTotal_ = 0;
  int files_ = 0, fileNow_ = 0;
  qint64 selectedRank_ = -1;
  QString selectedStep_;
};

}  // namespace attnscope::ui
