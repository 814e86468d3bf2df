// attnscope --load-probe TRACE [--cancel-after S] [--shoot-at S --screenshot FILE]
// (for docs/performance.md): shows the bundled sample, then opens TRACE the
// way File > Open does and measures how long the UI thread is ever kept from
// its event loop meanwhile (a 10 ms timer: each gap past 10 ms is a stall),
// until TRACE is on screen and painted, or the load failed or was
// cancelled (by clicking the status bar's Cancel button at S seconds). At
// --shoot-at S it saves the window (the progress bar) as a PNG. Prints one
// line of key=value pairs and quits.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <vector>

class QTimer;

namespace attnscope::ui {
class MainWindow;
}

class LoadProbe : public QObject {
 public:
  LoadProbe(attnscope::ui::MainWindow* window, QString trace, double cancelAfterS, double shootAtS, QString shotPath);

 private:
  void startLoad();
  void tick();
  void finish(const char* outcome);

  attnscope::ui::MainWindow* window_;
  QString trace_, shotPath_;
  double cancelAfterS_, shootAtS_;
  QTimer* timer_;
  QElapsedTimer clock_, sinceTick_;
  std::vector<double> stallsMs_;
  bool loading_ = false, shot_ = false, cancelClicked_ = false;
  QString progressText_;
};
