// The run panel (a dock): every option of `attnscope-cli run` as a widget,
// three presets, the exact command line it will run, Run / Cancel with a
// progress bar, and what went wrong (exit code, stderr) when a run fails.
// What the engine cannot do here (not built, no GPU) is disabled with the
// reason shown; CPU runs stay available.
#pragma once

#include <QWidget>
#include <functional>

#include "core/run/run_config.h"
#include "ui/run/engine_runner.h"
#include "ui/run/script_form.h"

class QBoxLayout;
class QCheckBox;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace attnscope::ui {

enum class RunPreset { WrapSoftmaxOnly, SyncAtEnd, WrapEveryStep };

class RunPanel : public QWidget {
  Q_OBJECT

 public:
  explicit RunPanel(QWidget* parent = nullptr);

  // The workload: the attention block (the engine's `run`) or the user's own script (`record`).
  bool scriptWorkload() const;
  void setScriptWorkload(bool script);
  ScriptForm* scriptForm() const { return scriptForm_; }
  RecordConfig recordConfig() const;

  RunConfig config() const;
  void setConfig(const RunConfig& cfg);
  static RunConfig presetConfig(RunPreset p, const RunConfig& base);
  void applyPreset(RunPreset p);

  // Where runs write their traces (run-N-<time>.json): a folder given, else the one `make` returns
  // when the first run starts (the window's temporary folder, made only when a run needs it).
  void setOutputDir(const QString& dir) { outDir_ = dir; }
  void setOutputDirMaker(std::function<QString()> make) { makeDir_ = std::move(make); }
  // Says, under the finished run's status, which collection it lacks.
  void noteMissingCollection(const QString& text);
  QString nextOutputPath() const;
  // What Run will execute (program, then arguments) for this output path.
  QStringList commandArguments(const QString& outPath) const;

  EngineRunner* runner() const { return runner_; }
  void setAvailability(const EngineAvailability& a);

  // Starts a run with the panel's settings; false if one is running or
  // the settings cannot run here.
  bool startRun();
  void cancelRun();

 protected:
  bool event(QEvent* e) override;
  bool eventFilter(QObject* watched, QEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

 signals:
  void configChanged();
  void runStarted(const attnscope::RunConfig& cfg, const QString& outPath);
  void runFinished(const attnscope::RunConfig& cfg, const attnscope::ui::RunOutcome& outcome);
  // A "Your script" run started: its summary ("train.py --epochs 1, wrap children, ...") and trace.
  void recordStarted(const QString& summary, const QString& outPath);

 private:
  void updatePreview();
  void updateEnabled();
  // The timing boxes follow the device: on the CPU the GPU-only methods are
  // unticked and greyed out, saying why; the last ticked box cannot be unticked.
  void updateTimingBoxes();
  bool runsOnCpu() const;
  void onFinished(const RunOutcome& o);
  void setEditorsEnabled(bool on);

  void updateColumns();
  static constexpr int kWideWidth = 700;  // side by side from this width

  EngineRunner* runner_;
  QBoxLayout* columns_ = nullptr;
  QComboBox* workload_ = nullptr;
  QWidget* engineA_ = nullptr;
  QWidget* engineB_ = nullptr;
  ScriptForm* scriptForm_ = nullptr;
  EngineAvailability avail_;
  QString outDir_;
  std::function<QString()> makeDir_;
  int runCounter_ = 0;
  RunConfig running_;
  bool loading_ = false;

  QCheckBox* wrap_[kStepCount] = {};
  QCheckBox* wrapFull_ = nullptr;
  QCheckBox* shapes_ = nullptr;
  QComboBox* sync_ = nullptr;
  QComboBox* scale_ = nullptr;
  QSpinBox* shape_[4] = {};
  QComboBox* dtype_ = nullptr;
  QComboBox* device_ = nullptr;
  QSpinBox* warmup_ = nullptr;
  QSpinBox* iters_ = nullptr;
  QSpinBox* ranks_ = nullptr;     // --ranks (1: one process)
  QComboBox* backend_ = nullptr;  // --backend gloo|nccl
  QCheckBox* timing_[kTimingMethodCount] = {};
  QLabel* availability_ = nullptr;
  QLabel* estimate_ = nullptr;
  QPlainTextEdit* preview_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QPlainTextEdit* stderr_ = nullptr;
};

}  // namespace attnscope::ui
