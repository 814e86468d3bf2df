#include "ui/run/engine_runner.h"

#include <signal.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTimer>

#include "core/run/timing_methods.h"

namespace attnscope::ui {
namespace {

constexpr qsizetype kStderrCap = 256 * 1024;

QString signalName(int sig) {
  switch (sig) {
    case SIGKILL:
      return QStringLiteral("SIGKILL");
    case SIGTERM:
      return QStringLiteral("SIGTERM");
    case SIGSEGV:
      return QStringLiteral("SIGSEGV");
    case SIGABRT:
      return QStringLiteral("SIGABRT");
    case SIGBUS:
      return QStringLiteral("SIGBUS");
    case SIGFPE:
      return QStringLiteral("SIGFPE");
    case SIGILL:
      return QStringLiteral("SIGILL");
    case SIGINT:
      return QStringLiteral("SIGINT");
    default:
      return QStringLiteral("signal %1").arg(sig);
  }
}

QString lastLine(const QString& text) {
  const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  return lines.isEmpty() ? QString() : lines.back().trimmed();
}

}  // namespace

QString runStatusText(RunStatus s) {
  switch (s) {
    case RunStatus::Running:
      return QStringLiteral("running");
    case RunStatus::Done:
      return QStringLiteral("done");
    case RunStatus::Failed:
      return QStringLiteral("failed");
    case RunStatus::OutOfMemory:
      return QStringLiteral("out of memory");
    case RunStatus::Killed:
      return QStringLiteral("killed");
    case RunStatus::Crashed:
      return QStringLiteral("crashed");
    case RunStatus::Cancelled:
      return QStringLiteral("cancelled");
    case RunStatus::NotStarted:
      return QStringLiteral("did not start");
    case RunStatus::Opened:
      return QStringLiteral("opened");
  }
  return {};
}

EngineRunner::EngineRunner(QObject* parent)
    : QObject(parent), program_(defaultProgram()), killTimer_(new QTimer(this)) {
  qRegisterMetaType<RunOutcome>();
  qRegisterMetaType<EngineAvailability>();
  killTimer_->setSingleShot(true);
  connect(killTimer_, &QTimer::timeout, this, [this] {
    if (proc_ && proc_->state() != QProcess::NotRunning) {
      const qint64 pid = proc_->processId();
      if (pid > 0) ::kill(-static_cast<pid_t>(pid), SIGKILL);
      proc_->kill();
    }
  });
}

EngineRunner::~EngineRunner() {
  // Never leave an engine running behind the window.
  for (QProcess* p : {proc_, probe_}) {
    if (p && p->state() != QProcess::NotRunning) {
      p->disconnect(this);
      const qint64 pid = p->processId();
      if (pid > 0) ::kill(-static_cast<pid_t>(pid), SIGKILL);
      p->kill();
      p->waitForFinished(2000);
    }
  }
}

QString EngineRunner::defaultProgram() {
  const QString env = qEnvironmentVariable("ATTNSCOPE_CLI");
  if (!env.isEmpty()) return env;
  return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("attnscope-cli"));
}

QStringList EngineRunner::runArguments(const RunConfig& cfg, const QString& outPath) {
  RunConfig c = cfg;
  c.out = outPath.toStdString();
  c.progressJson = true;
  c.pass.clear();
  c.passOut.clear();
  QStringList args{QStringLiteral("run")};
  for (const std::string& a : toRunArgs(c)) args << QString::fromStdString(a);
  return args;
}

QString EngineRunner::commandLine(const QString& program, const QStringList& args) {
  auto quote = [](const QString& s) {
    static const QString safe = QStringLiteral("-_./,=:+@%");
    bool plain = !s.isEmpty();
    for (QChar ch : s)
      if (!ch.isLetterOrNumber() && !safe.contains(ch)) plain = false;
    if (plain) return s;
    QString q = s;
    q.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + q + QLatin1Char('\'');
  };
  QStringList parts{quote(program)};
  for (const QString& a : args) parts << quote(a);
  return parts.join(QLatin1Char(' '));
}

bool EngineRunner::isRunning() const { return proc_ != nullptr; }
qint64 EngineRunner::pid() const { return proc_ ? proc_->processId() : 0; }

QStringList EngineRunner::recordArguments(const RecordConfig& cfg, const QString& outPath) {
  RecordConfig c = cfg;
  c.out = outPath.toStdString();
  c.progressJson = true;
  QStringList args{QStringLiteral("record")};
  for (const std::string& a : toRecordArgs(c)) args << QString::fromStdString(a);
  return args;
}

bool EngineRunner::start(const RunConfig& cfg, const QString& outPath) {
  if (proc_) return false;
  recording_ = false;
  ranks_ = cfg.ranks;  // several: outPath is the job's folder, rank 0's trace is opened
  int passes = 1;      // the trace (cupti) pass always runs
  for (int m = 1; m < kTimingMethodCount; ++m)
    if (cfg.timing[m] && !timingInfo(static_cast<TimingMethod>(m)).childProcess) ++passes;
  total_ = std::max(1, passes * (cfg.warmup + cfg.iters));
  return launch(runArguments(cfg, outPath), outPath);
}

bool EngineRunner::startRecord(const RecordConfig& cfg, const QString& outPath) {
  if (proc_) return false;
  recording_ = true;
  ranks_ = cfg.nproc;
  total_ = std::max(1, cfg.wait + cfg.warmup + cfg.active);
  return launch(recordArguments(cfg, outPath), outPath);
}

bool EngineRunner::launch(const QStringList& args, const QString& outPath) {
  proc_ = new QProcess(this);
  // Its own process group, so Cancel reaches the per-method children too.
  proc_->setChildProcessModifier([] { ::setpgid(0, 0); });
  stdoutBuf_.clear();
  stderrBuf_.clear();
  outPath_ = outPath;
  cancelled_ = false;
  reported_ = false;
  done_ = 0;
  connect(proc_, &QProcess::readyReadStandardOutput, this, &EngineRunner::readStdout);
  connect(proc_, &QProcess::readyReadStandardError, this, [this] {
    stderrBuf_ += proc_->readAllStandardError();
    if (stderrBuf_.size() > kStderrCap) stderrBuf_ = stderrBuf_.right(kStderrCap);
  });
  connect(proc_, &QProcess::finished, this, &EngineRunner::onFinished);
  connect(proc_, &QProcess::errorOccurred, this, &EngineRunner::onError);
  clock_.start();
  emit started(commandLine(program_, args));
  emit progress(0, tr("starting %1").arg(QFileInfo(program_).fileName()));
  proc_->start(program_, args, QIODevice::ReadOnly);
  return true;
}

void EngineRunner::cancel(int graceMs) {
  if (!proc_ || cancelled_) return;
  cancelled_ = true;
  const qint64 pid = proc_->processId();
  if (pid > 0) ::kill(-static_cast<pid_t>(pid), SIGTERM);
  proc_->terminate();
  killTimer_->start(graceMs);
}

void EngineRunner::readStdout() {
  stdoutBuf_ += proc_->readAllStandardOutput();
  qsizetype nl;
  while ((nl = stdoutBuf_.indexOf('\n')) >= 0) {
    const QByteArray line = stdoutBuf_.left(nl).trimmed();
    stdoutBuf_.remove(0, nl + 1);
    if (line.isEmpty()) continue;
    const QJsonObject o = QJsonDocument::fromJson(line).object();
    if (o.isEmpty()) continue;
    const QString phase = o.value(QStringLiteral("phase")).toString();
    const QString message = o.value(QStringLiteral("message")).toString();
    if (phase == QLatin1String("warmup") || phase == QLatin1String("measure")) ++done_;
    // record: the schedule's steps (the slowest rank's, with several), then the baseline.
    if (phase == QLatin1String("step"))
      done_ = std::max(done_, std::min(total_, o.value(QStringLiteral("step")).toInt()));
    int pct = std::min(99, done_ * 100 / total_);
    if (recording_) pct = std::min(95, pct);
    if (phase == QLatin1String("baseline")) pct = 97;
    if (phase == QLatin1String("done")) pct = 100;
    emit progress(pct, message.isEmpty() ? phase : message);
  }
}

RunOutcome EngineRunner::classify(QProcess::ExitStatus status, int exitCode, bool cancelled, const QString& stderrText,
                                  const QString& outPath) {
  RunOutcome o;
  o.exitCode = exitCode;
  o.stderrText = stderrText;
  const QString detail = lastLine(stderrText);
  if (cancelled) {
    o.status = RunStatus::Cancelled;
    o.message = tr("Cancelled: the engine was stopped before it finished; nothing was written.");
  } else if (status == QProcess::CrashExit) {
    const bool killed = exitCode == SIGKILL || exitCode == SIGTERM || exitCode == SIGINT;
    o.status = killed ? RunStatus::Killed : RunStatus::Crashed;
    o.message = killed ? tr("The engine was killed by %1 (from outside; SIGKILL is often the "
                            "kernel's out-of-memory killer).")
                             .arg(signalName(exitCode))
                       : tr("The engine crashed (%1).").arg(signalName(exitCode));
  } else if (exitCode == 0) {
    if (!QFileInfo(outPath).isFile()) {
      o.status = RunStatus::Failed;
      o.message = tr("The engine exited with 0 but wrote no trace to %1.").arg(outPath);
    } else {
      o.status = RunStatus::Done;
      o.outPath = outPath;
      o.message = tr("Done: wrote %1.").arg(outPath);
    }
  } else if (exitCode == 3) {
    o.status = RunStatus::OutOfMemory;
    o.message = tr("Out of memory (exit code 3): %1").arg(detail);
  } else {
    o.status = RunStatus::Failed;
    o.message = tr("The engine failed with exit code %1: %2").arg(exitCode).arg(detail);
  }
  return o;
}

RunOutcome EngineRunner::classifyRecord(QProcess::ExitStatus status, int exitCode, bool cancelled,
                                        const QString& stderrText, const QString& outPath, int ranks) {
  RunOutcome o;
  o.exitCode = exitCode;
  o.stderrText = stderrText;
  // The trace to open: the file, or with several ranks rank 0's in the folder.
  const QString trace = ranks > 1 ? QDir(outPath).filePath(QStringLiteral("rank-0.json")) : outPath;
  // What record said (its own lines start so); the script's last line otherwise.
  QString said;
  for (const QString& l : stderrText.split(QLatin1Char('\n'))) {
    for (const QLatin1String prefix : {QLatin1String("attnscope-cli: record: "), QLatin1String("attnscope-cli: ")})
      if (said.isEmpty() && l.startsWith(prefix)) said = l.mid(prefix.size()).trimmed();
  }
  if (said.isEmpty()) said = lastLine(stderrText);
  if ((cancelled || exitCode == 130) && stderrText.contains(QLatin1String("the trace is kept")) &&
      QFileInfo(trace).isFile()) {
    // Cancelled once the trace was written (while timing the baseline, or in the script's exit work):
    // the CLI kept it whole, and it is shown.
    o.status = RunStatus::Cancelled;
    o.outPath = trace;
    o.message = tr("Cancelled after the trace was written: %1.").arg(said);
  } else if (cancelled || exitCode == 130) {
    o.status = RunStatus::Cancelled;
    o.message = tr("Cancelled: your script was stopped (all its processes); no trace was kept.");
  } else if (status == QProcess::CrashExit) {
    o.status = RunStatus::Crashed;
    o.message = tr("attnscope-cli record crashed (%1).").arg(signalName(exitCode));
  } else if (exitCode == 0 && QFileInfo(trace).isFile()) {
    o.status = RunStatus::Done;
    o.outPath = trace;
    o.message = ranks > 1 ? tr("Done: recorded %1 ranks in %2.").arg(ranks).arg(outPath)
                          : tr("Done: recorded your script in %1.").arg(outPath);
  } else if (exitCode == 3 && QFileInfo(trace).isFile()) {
    o.status = RunStatus::Failed;
    o.outPath = trace;
    o.message = tr("Your script failed: %1. The steps it completed are kept, marked partial.").arg(said);
  } else if (exitCode == 2) {
    o.status = RunStatus::Failed;
    o.message = tr("Cannot record: %1").arg(said);
  } else if (exitCode == 4) {
    o.status = RunStatus::Failed;
    o.message = tr("Your script starts its own profiler: %1").arg(said);
  } else {
    o.status = RunStatus::Failed;
    o.message = tr("Recording failed with exit code %1: %2").arg(exitCode).arg(said);
  }
  return o;
}

void EngineRunner::onFinished(int exitCode, QProcess::ExitStatus status) {
  if (!proc_) return;
  stderrBuf_ += proc_->readAllStandardError();
  readStdout();
  RunOutcome o = recording_
                     ? classifyRecord(status, exitCode, cancelled_, QString::fromUtf8(stderrBuf_), outPath_, ranks_)
                     : classify(status, exitCode, cancelled_, QString::fromUtf8(stderrBuf_),
                                ranks_ > 1 ? QDir(outPath_).filePath(QStringLiteral("rank-0.json")) : outPath_);
  finish(o);
}

void EngineRunner::onError(QProcess::ProcessError error) {
  if (!proc_ || error != QProcess::FailedToStart) return;  // others end in finished()
  RunOutcome o;
  o.status = RunStatus::NotStarted;
  o.exitCode = -1;
  o.message = tr("Could not start %1: %2").arg(program_, proc_->errorString());
  finish(o);
}

void EngineRunner::finish(const RunOutcome& outcome) {
  if (reported_) return;
  reported_ = true;
  killTimer_->stop();
  RunOutcome o = outcome;
  o.elapsedMs = clock_.elapsed();
  // Never a partial trace of the engine's; a recorded script's partial trace is kept, and said so.
  if (o.status != RunStatus::Done && o.outPath.isEmpty() && !recording_) QFile::remove(outPath_);
  QProcess* p = proc_;
  proc_ = nullptr;
  p->disconnect(this);
  p->deleteLater();
  emit finished(o);
}

void EngineRunner::probe() {
  if (probe_) return;
  avail_ = EngineAvailability{};
  avail_.program = program_;
  if (!QFileInfo(program_).isExecutable()) {
    avail_.probed = true;
    avail_.reason = tr("attnscope-cli not found at %1 (set ATTNSCOPE_CLI to its path)").arg(program_);
    emit availabilityChanged(avail_);
    return;
  }
  probe_ = new QProcess(this);
  probe_->setChildProcessModifier([] { ::setpgid(0, 0); });
  // Valid options that stop before any work: "no CUDA device" (engine, no
  // GPU), "cannot write" (engine and GPU), "built without the engine".
  const QStringList args{QStringLiteral("run"),
                         QStringLiteral("--device"),
                         QStringLiteral("cuda"),
                         QStringLiteral("--shape"),
                         QStringLiteral("1,1,1,1"),
                         QStringLiteral("--warmup"),
                         QStringLiteral("0"),
                         QStringLiteral("--timing"),
                         QStringLiteral("host"),
                         QStringLiteral("--out"),
                         QStringLiteral("/nonexistent-attnscope-probe/x.json")};
  auto done = [this](bool started) {
    const QString err = QString::fromUtf8(probe_->readAllStandardError());
    avail_.probed = true;
    avail_.cliFound = started;
    if (!started) {
      avail_.reason = tr("could not start %1: %2").arg(program_, probe_->errorString());
    } else if (err.contains(QLatin1String("without the engine")) ||
               err.contains(QLatin1String("unknown command 'run'"))) {
      // The CLI names the engine it looked for: "... without the engine (no PATH)".
      static const QRegularExpression kNoEngine(QStringLiteral("\\(no (/[^)]*attnscope-engine)\\)"));
      const QRegularExpressionMatch m = kNoEngine.match(err);
      const QString where = m.hasMatch() ? m.captured(1) : QFileInfo(program_).absolutePath() + "/attnscope-engine";
      avail_.reason = tr("no engine at %1: this build was made without LibTorch. In the source tree, "
                         "scripts/run builds it (it installs torch %2 from PyPI, about 2.7 GB) and opens "
                         "the app again")
                          .arg(where, QStringLiteral("2.11.0"));
    } else if (err.contains(QLatin1String("error while loading shared libraries"))) {
      // The engine is there but LibTorch or CUDA's runtime, which it links, is gone (torch uninstalled
      // or upgraded since the build).
      avail_.reason = tr("the engine next to %1 cannot start: %2. Reinstall what it was built against "
                         "and rebuild: scripts/run")
                          .arg(program_, lastLine(err));
    } else if (err.contains(QLatin1String("no CUDA device"))) {
      avail_.engineBuilt = true;
      avail_.reason = tr("no CUDA device or driver here: CPU runs only");
    } else if (err.contains(QLatin1String("cannot write"))) {
      avail_.engineBuilt = true;
      avail_.gpu = true;
    } else {
      avail_.engineBuilt = true;
      avail_.reason = tr("could not tell whether a GPU is present: %1").arg(lastLine(err));
    }
    probe_->deleteLater();
    probe_ = nullptr;
    emit availabilityChanged(avail_);
  };
  connect(probe_, &QProcess::finished, this, [done] { done(true); });
  connect(probe_, &QProcess::errorOccurred, this, [done](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) done(false);
  });
  probe_->start(program_, args, QIODevice::ReadOnly);
}

}  // namespace attnscope::ui
