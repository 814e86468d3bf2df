#include "ui/run/runs_model.h"

#include <QApplication>
#include <QColor>
#include <QFileInfo>
#include <QPalette>

namespace attnscope::ui {

QString RunsModel::configSummary(const RunConfig& c) {
  return QString::fromStdString(runSummary(c)) +
         QStringLiteral(", %1").arg(QString::fromLatin1(deviceName(c.device).data()));
}

int RunsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RunsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return TableModelBase::headerData(section, o, role);
  switch (section) {
    case Id:
      return tr("#");
    case Time:
      return tr("Started");
    case Summary:
      return tr("Run");
    case Status:
      return tr("Status");
    case Duration:
      return tr("Took");
    default:
      return {};
  }
}

int RunsModel::addRun(RunEntry e) {
  e.id = nextId_++;
  if (!e.started.isValid()) e.started = QDateTime::currentDateTime();
  const int row = static_cast<int>(runs_.size());
  beginInsertRows({}, row, row);
  runs_.push_back(std::move(e));
  endInsertRows();
  return runs_.back().id;
}

void RunsModel::finishRun(int id, const RunOutcome& o) {
  const int row = rowOfId(id);
  if (row < 0) return;
  RunEntry& e = runs_[static_cast<size_t>(row)];
  e.status = o.status;
  e.message = o.message;
  e.stderrText = o.stderrText;
  e.exitCode = o.exitCode;
  e.elapsedMs = o.elapsedMs;
  if (!o.outPath.isEmpty()) e.path = o.outPath;  // Done, or a script's partial trace kept
  emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void RunsModel::markSaved(int id, const QString& path) {
  const int row = rowOfId(id);
  if (row < 0) return;
  runs_[static_cast<size_t>(row)].saved = true;
  runs_[static_cast<size_t>(row)].message = tr("Saved to %1").arg(path);
  emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void RunsModel::setMissing(int id, const QString& missing) {
  const int row = rowOfId(id);
  if (row < 0) return;
  runs_[static_cast<size_t>(row)].missing = missing;
  emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

const RunEntry* RunsModel::entry(int row) const {
  return row >= 0 && row < rowCount() ? &runs_[static_cast<size_t>(row)] : nullptr;
}

const RunEntry* RunsModel::byId(int id) const { return entry(rowOfId(id)); }

int RunsModel::rowOfId(int id) const {
  for (size_t i = 0; i < runs_.size(); ++i)
    if (runs_[i].id == id) return static_cast<int>(i);
  return -1;
}

int RunsModel::rowOfPath(const QString& path) const {
  for (size_t i = runs_.size(); i-- > 0;)
    if (!runs_[i].path.isEmpty() && runs_[i].path == path) return static_cast<int>(i);
  return -1;
}

QVariant RunsModel::cell(int row, int col, int role) const {
  const RunEntry& e = runs_[static_cast<size_t>(row)];
  const bool ok = e.status == RunStatus::Done || e.status == RunStatus::Opened;
  switch (role) {
    case Qt::DisplayRole:
      switch (col) {
        case Id:
          return e.id;
        case Time:
          return e.started.toString(QStringLiteral("HH:mm:ss"));
        case Summary:
          return e.summary;
        case Status:
          return runStatusText(e.status) + (e.missing.isEmpty() ? QString() : tr(", no CUPTI")) +
                 (e.saved ? tr(", saved") : QString());
        case Duration:
          return e.engine && e.status != RunStatus::Running
                     ? QStringLiteral("%1 s").arg(QString::number(e.elapsedMs / 1000.0, 'f', 1))
                     : QString();
      }
      return {};
    case SortRole:
      switch (col) {
        case Id:
          return e.id;
        case Time:
          return e.started.toMSecsSinceEpoch();
        case Duration:
          return e.elapsedMs;
        default:
          return cell(row, col, Qt::DisplayRole);
      }
    case StatusRole:
      return static_cast<int>(e.status);
    case Qt::ToolTipRole: {
      QString tip = e.summary;
      if (!e.path.isEmpty()) tip += QStringLiteral("\n") + e.path;
      if (!e.message.isEmpty()) tip += QStringLiteral("\n") + e.message;
      if (!e.missing.isEmpty()) tip += QStringLiteral("\n") + e.missing;
      return tip;
    }
    case Qt::ForegroundRole:
      if (col == Status && !ok && e.status != RunStatus::Running) return QColor(0xc6, 0x28, 0x28);
      return {};
    case Qt::TextAlignmentRole:
      if (col == Id || col == Duration) return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
      return {};
    default:
      return {};
  }
}

}  // namespace attnscope::ui
