// Runs the engine as a child process: exactly `attnscope-cli run --progress
// json ...` (arguments from a RunConfig through toRunArgs), never blocking
// the UI. Reports progress from the JSON lines on stdout, keeps stderr, and
// says in words how the run ended (done, failed with exit code N, out of
// memory, killed by signal, crashed, cancelled, could not start). Also
// probes what the engine can do here (built with the engine? a GPU?).
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

#include "core/run/record_config.h"
#include "core/run/run_config.h"

class QTimer;

namespace attnscope::ui {

enum class RunStatus { Running, Done, Failed, OutOfMemory, Killed, Crashed, Cancelled, NotStarted, Opened };
QString runStatusText(RunStatus s);

struct RunOutcome {
  RunStatus status = RunStatus::Failed;
  int exitCode = 0;    // exit code, or the signal number when killed/crashed
  QString message;     // one sentence: what happened
  QString stderrText;  // the engine's stderr (capped)
  QString outPath;     // the trace it wrote (Done; or a recorded script's partial trace)
  qint64 elapsedMs = 0;
};

struct EngineAvailability {
  bool probed = false;
  bool cliFound = false;
  bool engineBuilt = false;
  bool gpu = false;
  QString program;
  QString reason;  // why something is unavailable, in words
};

class EngineRunner : public QObject {
  Q_OBJECT

 public:
  explicit EngineRunner(QObject* parent = nullptr);
  ~EngineRunner() override;

  // $ATTNSCOPE_CLI when set, else attnscope-cli next to this executable.
  static QString defaultProgram();
  void setProgram(const QString& program) { program_ = program; }
  const QString& program() const { return program_; }

  // The exact argument list after the program: "run", toRunArgs(cfg) with
  // --out outPath and --progress json.
  static QStringList runArguments(const RunConfig& cfg, const QString& outPath);
  // For display: program and arguments, shell-quoted where needed.
  static QString commandLine(const QString& program, const QStringList& args);

  // `record`, toRecordArgs(cfg) with --out outPath and --progress json: the user's script.
  static QStringList recordArguments(const RecordConfig& cfg, const QString& outPath);

  // Starts a run; false (and finished() is not emitted) when one is running.
  bool start(const RunConfig& cfg, const QString& outPath);
  // Starts `attnscope-cli record` on the user's script (outPath: the trace, or with several
  // ranks the folder of their traces).
  bool startRecord(const RecordConfig& cfg, const QString& outPath);
  // Asks the run to stop (SIGTERM to its process group, SIGKILL after
  // `graceMs`); finished() follows with status Cancelled.
  void cancel(int graceMs = 3000);
  bool isRunning() const;
  qint64 pid() const;

  // Asynchronous: availabilityChanged() follows.
  void probe();
  const EngineAvailability& availability() const { return avail_; }

  // Classifies a finished process (public for tests).
  static RunOutcome classify(QProcess::ExitStatus status, int exitCode, bool cancelled, const QString& stderrText,
                             const QString& outPath);
  // The same for `record`: exit 3 (the script failed) keeps the partial trace it wrote; 2 is what
  // record refused (no such script, a Python without torch); 4 a script with its own profiler.
  static RunOutcome classifyRecord(QProcess::ExitStatus status, int exitCode, bool cancelled, const QString& stderrText,
                                   const QString& outPath, int ranks);

 signals:
  void started(const QString& commandLine);
  void progress(int percent, const QString& message);
  void finished(const attnscope::ui::RunOutcome& outcome);
  void availabilityChanged(const attnscope::ui::EngineAvailability& availability);

 private:
  bool launch(const QStringList& args, const QString& outPath);
  void readStdout();
  void onFinished(int exitCode, QProcess::ExitStatus status);
  void onError(QProcess::ProcessError error);
  void finish(const RunOutcome& o);

  QString program_;
  QProcess* proc_ = nullptr;
  QProcess* probe_ = nullptr;
  QTimer* killTimer_ = nullptr;
  QByteArray stdoutBuf_;
  QByteArray stderrBuf_;
  QString outPath_;
  int total_ = 1;
  bool recording_ = false;  // a `record` run (else the engine's `run`)
  int ranks_ = 1;
  int done_ = 0;
  bool cancelled_ = false;
  bool reported_ = false;
  QElapsedTimer clock_;
  EngineAvailability avail_;
};

}  // namespace attnscope::ui

Q_DECLARE_METATYPE(attnscope::ui::RunOutcome)
Q_DECLARE_METATYPE(attnscope::ui::EngineAvailability)
