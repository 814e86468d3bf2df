// The desktop app as the fault tests drive it: the main window (default
// layout, settings neither read nor written, no engine probe), shown
// offscreen, with a trace opened.
#pragma once

#include <QSignalSpy>
#include <QString>

#include "ui/shell/main_window.h"

struct OpenWindow {
  attnscope::ui::MainWindow window{attnscope::ui::MainWindowOptions{false, false, false}};
  QSignalSpy shown{&window, &attnscope::ui::MainWindow::traceShown};

  OpenWindow() {
    window.resize(1280, 800);
    window.show();
  }
  // Opens `path` and waits until it is on screen.
  bool open(const QString& path, int timeoutMs = 30000) {
    const qsizetype before = shown.size();
    window.openTrace(path);
    return shown.size() > before || shown.wait(timeoutMs);
  }
};
