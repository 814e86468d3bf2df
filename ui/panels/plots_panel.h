// Plots (Qt Charts, when the build has it): per-step bars across the timing
// methods of an engine run (how the "same" step measures under CUPTI, CUDA
// events, the host clock with and without a sync), and a histogram of the
// trace's kernel durations.
#pragma once

#include <QPointer>
#include <QVector>
#include <QWidget>
#include <memory>

#include "core/store/activity_index.h"
#include "core/store/event_store.h"

class QLabel;
class QTabWidget;

namespace attnscope::ui {

struct LoadedTrace;

struct HistogramBin {
  double loUs = 0, hiUs = 0;
  int count = 0;
};
// Kernel durations in power-of-two microsecond bins (<1 us first), empty
// leading and trailing bins dropped.
QVector<HistogramBin> kernelHistogram(const EventStore& store, const ActivityIndex& index);
// The same for the given kernels only (one kernel's calls).
QVector<HistogramBin> kernelHistogram(const EventStore& store, const std::vector<EventId>& kernels);

class PlotsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PlotsPanel(QWidget* parent = nullptr);
  void setTrace(std::shared_ptr<const LoadedTrace> trace);
  // The duration histogram of one kernel's calls (the Kernels view's selection); shows that tab.
  void showKernel(const std::vector<EventId>& calls);
  QString histogramTitle() const { return histTitle_; }
  // What the step chart shows: methods (series) and whether the trace had engine timing.
  QStringList stepSeries() const { return series_; }
  // What the step chart draws, read back from its boxes (µs): one per
  // method and step, with the words its tooltip shows.
  struct StepBox {
    QString method, step, tip;
    double minUs = 0, p10Us = 0, medianUs = 0, p90Us = 0, maxUs = 0;
  };
  QVector<StepBox> stepBoxes() const;
  static bool chartsAvailable();

 private:
  QTabWidget* tabs_;
  QWidget* stepsTab_;
  QWidget* histTab_;
  QStringList series_;
  QPointer<QObject> stepChart_;  // the QChart of the steps tab (Qt Charts builds)
  QString histTitle_;
  std::shared_ptr<const LoadedTrace> trace_;
  void showHistogram(const QVector<HistogramBin>& bins, const QString& title);
};

}  // namespace attnscope::ui
