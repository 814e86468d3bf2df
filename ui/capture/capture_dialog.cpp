#include "ui/capture/capture_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <atomic>
#include <mutex>
#include <set>

#include "core/capture/capture_align.h"
#include "core/capture/capture_output.h"
#include "core/capture/capture_session.h"
#include "ui/common/background.h"
#include "ui/common/text.h"

namespace attnscope::ui {

using namespace attnscope::capture;

// What the worker tells the dialog while it captures; the dialog reads it on a timer.
struct CaptureShared {
  std::mutex mutex;
  std::string message;
  std::vector<std::pair<int, TargetPhase>> phases;
  std::atomic<int> cancel{0};
};

struct CaptureListing {
  std::vector<ProcessInfo> processes;  // one per row
  std::set<int> launchers;             // rows that launch other rows (torchrun's agent)
};

namespace {

enum Column { kPid, kState, kRank, kCommand, kColumns };

struct Finished {
  CaptureOutcome outcome;
  Placement placed;
  std::string workDir;
  bool workDirKept = false;
  std::vector<std::string> notes;
};

// "python3 train.py --lr 1" from "/venv/bin/python3 /home/me/proj/train.py --lr 1": the interpreter's
// and the script's folders left out (the tooltip has the whole line).
QString shortCommand(const std::string& command) {
  QStringList words = qs(command).split(QLatin1Char(' '), Qt::SkipEmptyParts);
  for (int i = 0; i < words.size() && i < 3; ++i)
    if (i == 0 || words[i].endsWith(QStringLiteral(".py"))) words[i] = words[i].section(QLatin1Char('/'), -1);
  return words.join(QLatin1Char(' '));
}

int phaseWeight(TargetPhase p) {
  switch (p) {
    case TargetPhase::Asked:
      return 1;
    case TargetPhase::Capturing:
      return 2;
    case TargetPhase::Written:
    case TargetPhase::Exited:
    case TargetPhase::TimedOut:
    case TargetPhase::Unmatched:
      return 3;
    default:
      return 0;
  }
}

}  // namespace

CaptureDialog::CaptureDialog(const QString& outDir, QWidget* parent)
    : QDialog(parent), listing_(std::make_unique<CaptureListing>()) {
  setObjectName(QStringLiteral("captureDialog"));
  setWindowTitle(tr("Capture Running Job"));
  auto* intro = new QLabel(
      tr("Profile a torch job that is already running, now, without restarting it. It must have been started "
         "with <b>KINETO_USE_DAEMON=1</b> in its environment: torch then polls every 5 s and runs unprofiled "
         "until asked. Pick one process, or the ranks of one job (they start on the same optimizer step)."),
      this);
  intro->setWordWrap(true);

  table_ = new QTableWidget(0, kColumns, this);
  table_->setObjectName(QStringLiteral("captureProcesses"));
  table_->setHorizontalHeaderLabels({tr("Process"), tr("Ready"), tr("Rank"), tr("Command")});
  table_->horizontalHeader()->setSectionResizeMode(kCommand, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(kState, QHeaderView::ResizeToContents);
  table_->verticalHeader()->hide();
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setWordWrap(false);
  connect(table_, &QTableWidget::itemChanged, this, [this] { updateButtons(); });
  fix_ = new QLabel(this);
  fix_->setObjectName(QStringLiteral("captureFix"));
  fix_->setWordWrap(true);
  fix_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  fix_->hide();

  auto* what = new QGroupBox(tr("What to capture"), this);
  bySteps_ = new QRadioButton(tr("&Optimizer steps:"), what);
  bySteps_->setObjectName(QStringLiteral("captureBySteps"));
  bySteps_->setChecked(true);
  steps_ = new QSpinBox(what);
  steps_->setObjectName(QStringLiteral("captureSteps"));
  steps_->setRange(1, kMaxIterations);
  steps_->setValue(3);
  byTime_ = new QRadioButton(tr("&Duration (ms):"), what);
  byTime_->setObjectName(QStringLiteral("captureByTime"));
  byTime_->setToolTip(tr("For a server, or a job that does not call optimizer.step()"));
  duration_ = new QSpinBox(what);
  duration_->setObjectName(QStringLiteral("captureDuration"));
  duration_->setRange(1, kMaxDurationMs);
  duration_->setValue(2000);
  roundup_ = new QSpinBox(what);
  roundup_->setObjectName(QStringLiteral("captureRoundup"));
  roundup_->setRange(0, kMaxRoundup);
  roundup_->setSpecialValueText(tr("automatic"));
  roundup_->setToolTip(
      tr("Start on an optimizer step that is a multiple of this (automatic: the next step for "
         "one process, a multiple of 20 for several, so that all ranks start on the same step)"));
  shapes_ = new QCheckBox(tr("Record input &shapes"), what);
  shapes_->setObjectName(QStringLiteral("captureShapes"));
  stack_ = new QCheckBox(tr("Record Python s&tacks"), what);
  stack_->setObjectName(QStringLiteral("captureStack"));
  auto* grid = new QFormLayout(what);
  grid->addRow(bySteps_, steps_);
  grid->addRow(byTime_, duration_);
  grid->addRow(tr("Start on a step that is a multiple of:"), roundup_);
  auto* flags = new QHBoxLayout;
  flags->addWidget(shapes_);
  flags->addWidget(stack_);
  flags->addStretch();
  grid->addRow(flags);

  outDir_ = new QLineEdit(outDir, this);
  outDir_->setObjectName(QStringLiteral("captureOutDir"));
  auto* browse = new QPushButton(tr("&Browse…"), this);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Save captures in"), outDir_->text());
    if (!d.isEmpty()) outDir_->setText(d);
  });
  auto* outRow = new QHBoxLayout;
  outRow->addWidget(new QLabel(tr("Save in:"), this));
  outRow->addWidget(outDir_, 1);
  outRow->addWidget(browse);

  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("captureProgress"));
  progress_->setTextVisible(false);
  progress_->hide();
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("captureStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* buttons = new QDialogButtonBox(this);
  refresh_ = buttons->addButton(tr("&Refresh"), QDialogButtonBox::ActionRole);
  refresh_->setObjectName(QStringLiteral("captureRefresh"));
  capture_ = buttons->addButton(tr("&Capture"), QDialogButtonBox::AcceptRole);
  capture_->setObjectName(QStringLiteral("captureStart"));
  cancel_ = buttons->addButton(tr("Cancel Capture"), QDialogButtonBox::ActionRole);
  cancel_->setObjectName(QStringLiteral("captureCancel"));
  QPushButton* close = buttons->addButton(QDialogButtonBox::Close);
  connect(refresh_, &QPushButton::clicked, this, &CaptureDialog::refresh);
  connect(capture_, &QPushButton::clicked, this, &CaptureDialog::startCapture);
  connect(cancel_, &QPushButton::clicked, this, &CaptureDialog::cancelCapture);
  connect(close, &QPushButton::clicked, this, &CaptureDialog::reject);

  auto* v = new QVBoxLayout(this);
  v->addWidget(intro);
  v->addWidget(table_, 1);
  v->addWidget(fix_);
  v->addWidget(what);
  v->addLayout(outRow);
  v->addWidget(progress_);
  v->addWidget(status_);
  v->addWidget(buttons);
  timer_ = new QTimer(this);
  timer_->setInterval(200);
  connect(timer_, &QTimer::timeout, this, &CaptureDialog::showProgress);
  resize(900, 560);
  updateButtons();
  refresh();
}

CaptureDialog::~CaptureDialog() {
  if (shared_) shared_->cancel = 1;  // the worker stops within 200 ms; its result is dropped
}

void CaptureDialog::refresh() {
  status_->setText(tr("Looking for Python processes with torch loaded…"));
  refresh_->setEnabled(false);
  runInBackground(
      this, [] { return listTorchProcesses(); },
      [this](std::vector<ProcessInfo> ps) {
        listing_->processes = std::move(ps);
        listing_->launchers.clear();
        std::set<int> pids;
        for (const ProcessInfo& p : listing_->processes) pids.insert(p.pid);
        for (const ProcessInfo& p : listing_->processes)
          if (pids.count(p.ppid)) listing_->launchers.insert(p.ppid);
        const QSignalBlocker block(table_);
        table_->setRowCount(0);
        bool unready = false;
        for (const ProcessInfo& p : listing_->processes) {
          const int row = table_->rowCount();
          table_->insertRow(row);
          const bool launcher = listing_->launchers.count(p.pid) > 0;
          auto* pid = new QTableWidgetItem(QString::number(p.pid));
          const bool pickable = p.ready && !launcher;
          pid->setFlags(pickable ? Qt::ItemIsEnabled | Qt::ItemIsUserCheckable : Qt::NoItemFlags);
          if (pickable) pid->setCheckState(Qt::Unchecked);
          const QString state = launcher  ? tr("launcher (pick its ranks)")
                                : p.ready ? tr("ready")
                                          : tr("not ready: no KINETO_USE_DAEMON");
          auto* st = new QTableWidgetItem(state);
          st->setFlags(Qt::ItemIsEnabled);
          if (!p.ready) {
            st->setForeground(QColor(170, 60, 40));
            st->setToolTip(qs(readinessFix(p)));
            unready = true;
          }
          auto* rank = new QTableWidgetItem(p.rank >= 0 ? QString::number(p.rank) : QString());
          auto* cmd = new QTableWidgetItem(shortCommand(p.commandLine));
          cmd->setToolTip(qs(p.commandLine));
          for (QTableWidgetItem* it : {rank, cmd}) it->setFlags(pickable ? Qt::ItemIsEnabled : Qt::NoItemFlags);
          table_->setItem(row, kPid, pid);
          table_->setItem(row, kState, st);
          table_->setItem(row, kRank, rank);
          table_->setItem(row, kCommand, cmd);
        }
        fix_->setVisible(unready);
        if (unready && !listing_->processes.empty())
          fix_->setText(tr("Not ready: started without KINETO_USE_DAEMON=1. ") +
                        qs(readinessFix(listing_->processes.front())));
        status_->setText(listing_->processes.empty()
                             ? tr("No Python process with torch loaded runs on this host (among those this user may "
                                  "read). Start your job with KINETO_USE_DAEMON=1, then Refresh.")
                             : tr("%n process(es) with torch loaded. Tick the one to capture, or the ranks of one job.",
                                  nullptr, static_cast<int>(listing_->processes.size())));
        refresh_->setEnabled(true);
        updateButtons();
        emit listed();
      },
      [this](const QString& error) {
        status_->setText(tr("Could not list the processes: %1").arg(error));
        refresh_->setEnabled(true);
      });
}

QString CaptureDialog::selectionText() const {
  QStringList pids;
  for (int r = 0; r < table_->rowCount(); ++r)
    if (table_->item(r, kPid)->checkState() == Qt::Checked) pids << table_->item(r, kPid)->text();
  return pids.join(QStringLiteral(", "));
}

void CaptureDialog::updateButtons() {
  const bool any = !selectionText().isEmpty();
  capture_->setEnabled(any && !running_);
  cancel_->setVisible(running_);
  refresh_->setEnabled(!running_);
  table_->setEnabled(!running_);
}

void CaptureDialog::startCapture() {
  std::vector<ProcessInfo> targets;
  for (int r = 0; r < table_->rowCount(); ++r)
    if (table_->item(r, kPid)->checkState() == Qt::Checked)
      targets.push_back(listing_->processes[static_cast<size_t>(r)]);
  if (targets.empty() || running_) return;
  CaptureSpec spec;
  if (bySteps_->isChecked())
    spec.iterations = steps_->value();
  else
    spec.durationMs = duration_->value();
  const bool automatic = roundup_->value() == 0;
  spec.roundup = !automatic ? roundup_->value() : (targets.size() > 1 ? 20 : 1);
  spec.recordShapes = shapes_->isChecked() || targets.size() > 1;
  spec.withStack = stack_->isChecked();
  const std::string outDir = outDir_->text().toStdString();
  if (!QDir(outDir_->text()).exists()) {
    status_->setText(tr("The folder %1 does not exist: choose another with Browse…").arg(outDir_->text()));
    return;
  }
  // The processes may have changed since they were listed: probe them again.
  for (ProcessInfo& t : targets) {
    t = probeProcess(t.pid);
    if (!t.problem.empty()) {
      status_->setText(qs(t.problem));
      return;
    }
  }
  auto shared = std::make_shared<CaptureShared>();
  shared_ = shared;
  running_ = true;
  progress_->setRange(0, 0);
  progress_->show();
  QString starting = tr("Capturing %1 of %2…").arg(qs(specSummary(spec)), selectionText());
  for (const std::string& w : pendingRequestsFor(targets)) starting += QStringLiteral("\n") + qs(w);
  status_->setText(starting);
  updateButtons();
  timer_->start();
  runInBackground(
      this,
      [shared, targets, spec, outDir, automatic] {
        Finished f;
        std::string why;
        f.workDir = prepareWorkDir(targets, &why);
        if (f.workDir.empty()) {
          f.outcome.failure = why;
          return f;
        }
        CaptureOptions o;
        o.spec = spec;
        o.workDir = f.workDir;
        o.cancel = &shared->cancel;
        o.onProgress = [shared](const CaptureProgress& p) {
          const std::lock_guard<std::mutex> lock(shared->mutex);
          shared->message = p.message;
          shared->phases.clear();
          for (const TargetStatus& t : *p.targets) shared->phases.emplace_back(t.process.pid, t.phase);
        };
        f.outcome = captureJob(targets, o, automatic, &f.notes);
        if (!f.outcome.cancelled && f.outcome.failure.empty() && f.outcome.written() > 0)
          f.placed = placeTraces(f.outcome, defaultCaptureOut(targets, outDir, unixMs()),
                                 "attnscope (File > Capture Running Job)");
        markPendingRequests(f.outcome, f.workDir);
        f.workDirKept = !removeWorkDir(f.outcome, f.workDir);
        return f;
      },
      [this, shared](Finished f) {
        if (shared_ == shared) shared_.reset();
        running_ = false;
        timer_->stop();
        progress_->hide();
        updateButtons();
        const CaptureOutcome& o = f.outcome;
        QStringList lines;
        if (!o.failure.empty()) {
          lines << tr("Could not capture: %1").arg(qs(o.failure));
        } else if (o.cancelled) {
          lines << (o.anyAsked() ? tr("Cancelled. The job keeps running and was told nothing more; it had already "
                                      "taken the request (Kineto cannot withdraw one), so its trace will still be "
                                      "written to %1 when its capture ends.")
                                       .arg(qs(f.workDir))
                                 : tr("Cancelled before the job was asked anything: it keeps running, untouched."));
        } else if (!f.placed.error.empty()) {
          lines << tr("The trace could not be written: %1").arg(qs(f.placed.error));
        } else if (o.written() == 0) {
          lines << tr("Nothing was captured:");
        }
        for (const TargetStatus& t : o.targets)
          if (t.phase != TargetPhase::Written && !t.detail.empty())
            lines << tr("process %1: %2").arg(t.process.pid).arg(qs(t.detail));
        if (!lines.isEmpty() || f.placed.traces.empty()) {
          status_->setText(lines.join(QLatin1Char('\n')));
          return;
        }
        QStringList said{tr("Captured: %1").arg(qs(f.placed.out))};
        for (const std::string& n : f.notes) said << qs(n);
        for (const std::string& n : f.placed.notes) said << qs(n);
        if (f.placed.folder)
          if (const Alignment a = placedAlignment(f.placed); a.known) said << qs(a.text);
        status_->setText(said.join(QLatin1Char('\n')));
        emit captured(qs(f.placed.out), f.placed.folder, said.join(QStringLiteral("; ")));
        accept();
      },
      [this, shared](const QString& error) {
        if (shared_ == shared) shared_.reset();
        running_ = false;
        timer_->stop();
        progress_->hide();
        updateButtons();
        status_->setText(tr("The capture failed: %1").arg(error));
      });
}

void CaptureDialog::showProgress() {
  if (!shared_) return;
  std::string message;
  std::vector<std::pair<int, TargetPhase>> phases;
  {
    const std::lock_guard<std::mutex> lock(shared_->mutex);
    message = shared_->message;
    phases = shared_->phases;
  }
  int done = 0;
  QStringList each;
  for (const auto& [pid, phase] : phases) {
    done += phaseWeight(phase);
    each << tr("%1: %2").arg(pid).arg(qs(phaseText(phase)));
  }
  // Busy until a process is asked (Kineto's polls come every 5 s), then a third per process per stage.
  if (done == 0) {
    progress_->setRange(0, 0);
  } else {
    progress_->setRange(0, static_cast<int>(phases.size()) * 3);
    progress_->setValue(done);
  }
  if (!message.empty())
    status_->setText(qs(message) +
                     (each.size() > 1 ? QStringLiteral("\n") + each.join(QStringLiteral(" · ")) : QString()));
}

void CaptureDialog::cancelCapture() {
  if (!shared_) return;
  shared_->cancel = 1;
  status_->setText(tr("Cancelling…"));
}

void CaptureDialog::reject() {
  if (running_) {
    cancelCapture();
    return;  // closes once the worker has stopped and said what it left
  }
  QDialog::reject();
}

}  // namespace attnscope::ui
