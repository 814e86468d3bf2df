// Plots (Qt Charts, when the build has it): per-step bars across the timing
// methods of an engine run (how the "same" step measures under CUPTI, CUDA
// events, the host clock with and without a sync), and a histogram of the
// trace's kernel durations.
#pragma once

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

class PlotsPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PlotsPanel(QWidget* parent = nullptr);
  void setTrace(std::shared_ptr<const LoadedTrace> trace);
  // What the step chart shows: methods (series) and whether the trace had engine timing.
  QStringList stepSeries() const { return series_; }
  static bool chartsAvailable();

 private:
  QTabWidget* tabs_;
  QWidget* stepsTab_;
  QWidget* histTab_;
  QStringList series_;
};

}  // namespace attnscope::ui
