// MainWindow: opening a distributed job (File > Open Job…, a drop of a folder or several traces) in
// the Ranks window (ui/ranks/ranks_view.h), a window of its own beside the main one: a job is many
// traces, and its heat map, findings and timelines need the room.
#include <QAction>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QPushButton>
#include <QStatusBar>

#include "ui/common/screen_fit.h"
#include "ui/ranks/ranks_view.h"
#include "ui/shell/main_window.h"

namespace attnscope::ui {

void MainWindow::buildJobActions() {
  openJobAct_ = new QAction(tr("Open &Job…"), this);
  openJobAct_->setObjectName(QStringLiteral("openJobAction"));
  openJobAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
  openJobAct_->setStatusTip(
      tr("A distributed job's traces read together (a folder, or one trace per rank): "
         "who waits for whom, the straggler and why, the clocks aligned"));
  connect(openJobAct_, &QAction::triggered, this, &MainWindow::chooseJob);
  showRanksAct_ = new QAction(tr("Ran&ks Window"), this);
  showRanksAct_->setObjectName(QStringLiteral("showRanksAction"));
  showRanksAct_->setEnabled(false);
  connect(showRanksAct_, &QAction::triggered, this, [this] {
    if (!ranks_) return;
    ranks_->show();
    ranks_->raise();
    ranks_->activateWindow();
  });
}

void MainWindow::chooseJob() {
  // Several files chosen at once, or the folder shown with "Open Whole Folder" (Qt's own dialog: a
  // native one cannot take a folder and files alike).
  QFileDialog dialog(this, tr("Open job: one trace per rank, or a folder of them"), lastDir_,
                     tr("Traces (*.json *.json.gz *.gz);;All files (*)"));
  dialog.setObjectName(QStringLiteral("openJobDialog"));
  dialog.setOption(QFileDialog::DontUseNativeDialog);
  dialog.setFileMode(QFileDialog::ExistingFiles);
  dialog.setAcceptMode(QFileDialog::AcceptOpen);
  QStringList chosen;
  if (auto* box = dialog.findChild<QDialogButtonBox*>()) {
    QPushButton* folder = box->addButton(tr("Open Whole Folder"), QDialogButtonBox::ActionRole);
    folder->setObjectName(QStringLiteral("openWholeFolder"));
    folder->setToolTip(tr("Every trace in the folder shown, one per rank"));
    connect(folder, &QPushButton::clicked, &dialog, [&dialog, &chosen] {
      chosen = {dialog.directory().absolutePath()};
      dialog.reject();  // closes it; `chosen` says it was a choice
    });
  }
  const bool accepted = dialog.exec() == QDialog::Accepted;
  if (accepted && chosen.isEmpty()) chosen = dialog.selectedFiles();
  if (chosen.isEmpty()) return;
  lastDir_ = QFileInfo(chosen.front()).absolutePath();
  openJob(chosen);
}

void MainWindow::openJob(const QStringList& paths) {
  if (!ranks_) {
    ranks_ = new RanksView(this);
    ranks_->setWindowFlag(Qt::Window);
    // A laptop's size, inside the screen with its title bar (ui/common/screen_fit.h).
    fitToScreen(ranks_, QSize(1280, 800));
    keepInsideScreen(ranks_);
    connect(ranks_, &RanksView::openTraceRequested, this, [this](const QString& path) {
      openTrace(path);
      raise();
      activateWindow();
    });
    connect(ranks_, &RanksView::jobFailed, this,
            [this](const QString& message) { statusBar()->showMessage(tr("Job: %1").arg(message), 8000); });
    showRanksAct_->setEnabled(true);
  }
  ranks_->show();
  ranks_->raise();
  ranks_->openJob(paths);
}

}  // namespace attnscope::ui
