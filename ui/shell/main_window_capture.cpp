// MainWindow: File > Capture Running Job… (ui/capture/capture_dialog.h). A captured trace opens like
// any other, explained; a job's folder of ranks opens in the Ranks window.
#include <QAction>
#include <QDir>
#include <QStatusBar>

#include "ui/capture/capture_dialog.h"
#include "ui/shell/main_window.h"

namespace attnscope::ui {

void MainWindow::buildCaptureActions() {
  captureAct_ = new QAction(tr("Capture R&unning Job…"), this);
  captureAct_->setObjectName(QStringLiteral("captureJobAction"));
  captureAct_->setStatusTip(
      tr("Profile a torch job that is already running (started with KINETO_USE_DAEMON=1), now, without a "
         "restart: some optimizer steps or milliseconds, every rank on the same step"));
  connect(captureAct_, &QAction::triggered, this, &MainWindow::chooseCapture);
}

void MainWindow::chooseCapture() {
  const QString dir = lastDir_.isEmpty() || !QDir(lastDir_).exists() ? QDir::homePath() : lastDir_;
  auto* dialog = new CaptureDialog(dir, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &CaptureDialog::captured, this, [this](const QString& path, bool folder, const QString& summary) {
    statusBar()->showMessage(summary.isEmpty() ? tr("Captured: %1").arg(path) : summary, 15000);
    if (folder) {
      openJob({path});
    } else {
      openTrace(path);
      showDock(QStringLiteral("explainDock"));
    }
  });
  dialog->open();
}

}  // namespace attnscope::ui
