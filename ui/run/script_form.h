// The Run panel's second workload, "Your script": every option of `attnscope-cli record` as a
// widget (the script, its arguments, the Python, the working folder; the steps' schedule, module
// wrapping, sync, the baseline, torch.profiler's options, ranks). It edits a RecordConfig; the
// panel shows the exact command and runs it.
#pragma once

#include <QWidget>

#include "core/run/record_config.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace attnscope::ui {

class ScriptForm : public QWidget {
  Q_OBJECT

 public:
  explicit ScriptForm(QWidget* parent = nullptr);

  RecordConfig config() const;
  void setConfig(const RecordConfig& c);
  // Empty when the form can run; else what is missing, in words.
  QString problem() const;
  // Enables the pattern box only when wrapping by pattern (after the panel re-enables editors).
  void updateEnabled();

 signals:
  void changed();

 private:
  void browseScript();
  void browseFolder();

  QLineEdit* script_ = nullptr;
  QLineEdit* args_ = nullptr;
  QLineEdit* python_ = nullptr;
  QLineEdit* cwd_ = nullptr;
  QComboBox* wrap_ = nullptr;
  QLineEdit* wrapRegex_ = nullptr;
  QComboBox* sync_ = nullptr;
  QLineEdit* stepFn_ = nullptr;
  QSpinBox* wait_ = nullptr;
  QSpinBox* warmup_ = nullptr;
  QSpinBox* active_ = nullptr;
  QSpinBox* baseline_ = nullptr;
  QSpinBox* nproc_ = nullptr;
  QCheckBox* shapes_ = nullptr;
  QCheckBox* memory_ = nullptr;
  QCheckBox* stack_ = nullptr;
  bool loading_ = false;
};

// Splits an argument line the way a POSIX shell does for words and quotes ('...', "...", \x);
// no expansions. nullopt when a quote is left open.
std::optional<QStringList> splitArguments(const QString& line);

}  // namespace attnscope::ui
