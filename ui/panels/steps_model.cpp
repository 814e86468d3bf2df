#include "ui/panels/steps_model.h"

#include "ui/common/text.h"

namespace attnscope::ui {

void StepsModel::setExplanation(std::shared_ptr<const Explanation> explanation) {
  beginResetModel();
  explanation_ = std::move(explanation);
  // Each row's step in the diagnosis (same window), found once here, not on every paint.
  waits_.clear();
  if (explanation_)
    for (const StepReport& st : explanation_->steps)
      waits_.push_back(diagnosedStep(explanation_->diagnosis, st.hostStartNs, st.hostEndNs));
  endResetModel();
}

bool StepsModel::costMostSaysNothing() const {
  for (const StepWaits* w : waits_)
    if (w && topCause(*w) != Cause::CpuOnly) return false;
  return true;
}

int StepsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !explanation_ ? 0 : static_cast<int>(explanation_->steps.size());
}

int StepsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant StepsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case Step:
        return tr("Step");
      case Host:
        return tr("Host time");
      case CostMost:
        return tr("Cost it most");
      case Gpu:
        return tr("GPU work launched");
      case Busy:
        return tr("GPU busy");
      case Idle:
        return tr("GPU idle");
      case SyncWait:
        return tr("Sync wait");
      case Communication:
        return tr("Communication");
      case SpillOut:
        return tr("Spill out");
      case SpillIn:
        return tr("Spill in");
      default:
        return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case Host:
        return tr("How long the step ran on the CPU (its host window)");
      case CostMost:
        return tr("The cause that held most of the step's wall time (the diagnosis's split of it)");
      case Gpu:
        return tr("GPU time of the kernels, copies and memsets the step launched (by correlation, any thread)");
      case Busy:
        return tr("Share of the host window in which the GPU ran anything (anyone's work)");
      case Idle:
        return tr("Time inside the host window in which the GPU ran nothing");
      case SyncWait:
        return tr("Host time in calls that wait for the GPU (cudaStreamSynchronize, blocking copies, ...)");
      case Communication:
        return tr("GPU time of the NCCL/RCCL kernels the step launched");
      case SpillOut:
        return tr("GPU time of the step's work that ran after its host window closed");
      case SpillIn:
        return tr("GPU time inside the host window of work launched before the step");
      default:
        return {};
    }
  }
  return {};
}

QVariant StepsModel::cell(int row, int col, int role) const {
  const StepReport& st = explanation_->steps[static_cast<size_t>(row)];
  const double busy = st.hostNs() > 0 ? double(st.gpuBusyInHostWindowNs) / double(st.hostNs()) : 0.0;
  int64_t ns = 0;
  switch (col) {
    case Host:
      ns = st.hostNs();
      break;
    case Gpu:
      ns = st.gpuAttributedNs;
      break;
    case Idle:
      ns = st.idleNs;
      break;
    case SyncWait:
      ns = st.syncWaitNs;
      break;
    case Communication:
      ns = st.communicationNs;
      break;
    case SpillOut:
      ns = st.spillOutNs;
      break;
    case SpillIn:
      ns = st.spillInNs;
      break;
    default:
      break;
  }
  if (col == CostMost) {
    const StepWaits* waits = waits_[static_cast<size_t>(row)];
    if (!waits)
      return role == SortRole ? QVariant(qlonglong{-1})
                              : (role == Qt::DisplayRole ? QVariant(QStringLiteral("—")) : QVariant());
    const Cause top = topCause(*waits);
    ns = waits->parts[static_cast<int>(top)];
    if (role == Qt::DisplayRole) return QStringLiteral("%1 %2").arg(qs(causeLabel(top)), qs(spanDurationText(ns)));
    if (role == Qt::ToolTipRole) return qs(stepHeadline(*waits));
  }
  if (role == StepIndexRole) return row;
  if (role == Qt::TextAlignmentRole)
    return col == Step ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == SortRole) {
    if (col == Step) return row;  // the steps' own order (time)
    if (col == Busy) return busy;
    return static_cast<qlonglong>(ns);
  }
  if (role == Qt::ToolTipRole && col == Step) return qs(st.name);
  if (role != Qt::DisplayRole) return {};
  if (col == Step) return qs(st.name) + (st.wrapped ? QString() : tr(" (not wrapped)"));
  if (col == Busy) return st.hostNs() > 0 ? QStringLiteral("%1%").arg(100.0 * busy, 0, 'f', 0) : QStringLiteral("—");
  if ((col == Communication || col == SpillOut || col == SpillIn || col == SyncWait) && ns == 0)
    return QStringLiteral("—");
  return qs(spanDurationText(ns));
}

}  // namespace attnscope::ui
