// attnscope --startup-probe (for attnscope-bench start): prints, on
// CLOCK_MONOTONIC in nanoseconds, when main() began, when the window first
// painted, and when the timeline first painted with the trace shown, then
// quits. A frame counts once the event that painted it has returned.
#pragma once

#include <QObject>

namespace attnscope::ui {
class MainWindow;
}

class StartupProbe : public QObject {
 public:
  StartupProbe(attnscope::ui::MainWindow* window, long long mainNs);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void finish();
  attnscope::ui::MainWindow* window_;
  long long mainNs_;
  long long firstFrameNs_ = 0;
  long long traceShownNs_ = 0;
  long long traceFrameNs_ = 0;
  bool traceShown_ = false;
  bool pending_ = false;
};

// CLOCK_MONOTONIC now, in nanoseconds (the clock attnscope-bench reads too).
long long monotonicNs();
