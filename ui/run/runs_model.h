// Every run of the session (engine runs and traces opened from files), in
// the order they started: what it ran (config summary), when, how it
// ended. The runs list dock shows it; selecting one shows its trace.
#pragma once

#include <QDateTime>
#include <optional>
#include <vector>

#include "core/run/run_config.h"
#include "ui/run/engine_runner.h"
#include "ui/table/table_model_base.h"

namespace attnscope::ui {

struct RunEntry {
  int id = 0;
  QDateTime started;
  bool engine = false;              // an engine run (else a trace opened from a file)
  std::optional<RunConfig> config;  // for engine runs and engine traces
  QString summary;                  // config summary or file name
  RunStatus status = RunStatus::Running;
  QString message;
  QString stderrText;
  QString path;  // the trace file ("" until a run has written it)
  int exitCode = 0;
  qint64 elapsedMs = 0;
  QString missing;     // a collection the engine could not make (missingCollection), if any
  bool saved = false;  // written somewhere the user chose
  bool bundled = false;
};

class RunsModel : public TableModelBase {
  Q_OBJECT

 public:
  enum Col { Id, Time, Summary, Status, Duration, ColumnCount };
  static constexpr int StatusRole = Qt::UserRole + 10;  // RunStatus as int

  using TableModelBase::TableModelBase;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  // Adds a run; returns its id.
  int addRun(RunEntry e);
  void finishRun(int id, const RunOutcome& o);
  void markSaved(int id, const QString& path);
  void setMissing(int id, const QString& missing);
  const RunEntry* entry(int row) const;
  const RunEntry* byId(int id) const;
  int rowOfId(int id) const;
  // The most recent entry whose trace is `path`, or -1.
  int rowOfPath(const QString& path) const;
  const std::vector<RunEntry>& entries() const { return runs_; }

  static QString configSummary(const RunConfig& c);

 protected:
  QVariant cell(int row, int col, int role) const override;

 private:
  std::vector<RunEntry> runs_;
  int nextId_ = 1;
};

}  // namespace attnscope::ui
