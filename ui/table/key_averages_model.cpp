#include "ui/table/key_averages_model.h"
#include "ui/common/text.h"

#include <QApplication>
#include <QColor>
#include <QFont>
#include <QFontMetrics>
#include <QPainter>
#include <QPalette>
#include <cmath>

namespace attnscope::ui {
namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// torch's FunctionEventAvg: total / count (a row always has count >= 1).
double average(int64_t totalNs, uint64_t calls) {
  return us(totalNs) / (calls == 0 ? 1.0 : static_cast<double>(calls));
}

// A share of a zero total (no GPU time at all: a CPU run) is not a number: the
// table shows a dash where torch's printed table says "NaN" (the CLI's text keeps torch's).
QString share(int64_t ns, int64_t totalNs) {
  if (totalNs == 0) return QStringLiteral("—");
  return qs(formatPercent(static_cast<double>(ns) * 100.0 / static_cast<double>(totalNs)));
}

const char* headerHelp(Column c) {
  switch (c) {
    case Column::Name:
      return "Event name (op, record_function scope, kernel, runtime call)";
    case Column::SelfCpuPct:
      return "Self CPU time as a share of the sum of all Self CPU times";
    case Column::SelfCpu:
      return "CPU time spent in this row's events, excluding child ops";
    case Column::CpuTotalPct:
      return "CPU total time as a share of the sum of all Self CPU times";
    case Column::CpuTotal:
      return "CPU time spent in this row's events, including child ops";
    case Column::CpuAvg:
      return "CPU total / # of Calls";
    case Column::SelfDevice:
      return "Device time of this row's own GPU work (torch counts a "
             "gpu_user_annotation span here too)";
    case Column::SelfDevicePct:
      return "Self CUDA as a share of the sum of Self CUDA over device rows";
    case Column::DeviceTotal:
      return "Device time of the GPU work launched by this row and its children";
    case Column::DeviceAvg:
      return "CUDA total / # of Calls";
    case Column::CpuMem:
      return "CPU memory allocated (minus freed) inside this row's events";
    case Column::SelfCpuMem:
      return "CPU memory allocated (minus freed), excluding child ops";
    case Column::DeviceMem:
      return "CUDA memory allocated (minus freed) inside this row's events";
    case Column::SelfDeviceMem:
      return "CUDA memory allocated (minus freed), excluding child ops";
    case Column::Calls:
      return "Number of events grouped into this row";
    case Column::InputShapes:
      return "torch's str(input_shapes) (record_shapes=True)";
    case Column::Count:
      break;
  }
  return "";
}

QPixmap makeBadge(const QString& text, const QColor& fill, const QColor& ink, bool draw) {
  QFont font = QApplication::font();
  font.setBold(true);
  font.setPointSizeF(std::max(6.0, font.pointSizeF() * 0.72));
  const QFontMetrics fm(font);
  const int w = fm.horizontalAdvance(text) + 8;
  const int h = fm.height() + 2;
  QPixmap pm(w, h);
  pm.fill(Qt::transparent);
  if (draw) {
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(fill);
    p.drawRoundedRect(QRectF(0.5, 0.5, w - 1.0, h - 1.0), 3, 3);
    p.setPen(ink);
    p.setFont(font);
    p.drawText(QRect(0, 0, w, h), Qt::AlignCenter, text);
  }
  return pm;
}

const QColor kDeviceColor(0x2e, 0x7d, 0x32);  // green: NVIDIA-ish, readable on light and dark

}  // namespace

KeyAveragesModel::KeyAveragesModel(QObject* parent) : TableModelBase(parent) {}

bool KeyAveragesModel::isDeviceRow(const KeyAverageRow& r) {
  return r.deviceType == DeviceType::Cuda || isGpuFamily(r.family);
}

void KeyAveragesModel::setData(std::shared_ptr<const KeyAverages> averages) {
  beginResetModel();
  averages_ = std::move(averages);
  endResetModel();
}

const KeyAverageRow* KeyAveragesModel::rowAt(int row) const {
  if (!averages_ || row < 0 || static_cast<size_t>(row) >= averages_->rows.size()) return nullptr;
  return &averages_->rows[static_cast<size_t>(row)];
}

int KeyAveragesModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !averages_) return 0;
  return static_cast<int>(averages_->rows.size());
}

int KeyAveragesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(Column::Count);
}

QVariant KeyAveragesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) {
    return TableModelBase::headerData(section, orientation, role);
  }
  const Column c = columnAt(section);
  switch (role) {
    case Qt::DisplayRole:
      return qs(columnTitle(c));
    case Qt::ToolTipRole:
      return QStringLiteral("%1: %2").arg(qs(columnTitle(c)), QString::fromUtf8(headerHelp(c)));
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment((isNumeric(c) ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter));
    default:
      return {};
  }
}

QString KeyAveragesModel::displayText(const KeyAverages& ka, const KeyAverageRow& r, Column c) {
  switch (c) {
    case Column::Name:
      return qs(r.name);
    case Column::SelfCpuPct:
      return share(r.selfCpuNs, ka.sumSelfCpuNs);
    case Column::SelfCpu:
      return qs(torchTimeText(us(r.selfCpuNs)));
    case Column::CpuTotalPct:
      return share(r.cpuTotalNs, ka.sumSelfCpuNs);
    case Column::CpuTotal:
      return qs(torchTimeText(us(r.cpuTotalNs)));
    case Column::CpuAvg:
      return qs(torchTimeText(average(r.cpuTotalNs, r.calls)));
    case Column::SelfDevice:
      return qs(torchTimeText(us(r.selfDeviceNs)));
    case Column::SelfDevicePct:
      return share(r.selfDeviceNs, ka.sumSelfDeviceNs);
    case Column::DeviceTotal:
      return qs(torchTimeText(us(r.deviceTotalNs)));
    case Column::DeviceAvg:
      return qs(torchTimeText(average(r.deviceTotalNs, r.calls)));
    case Column::CpuMem:
      return qs(formatMemory(r.cpuMemBytes));
    case Column::SelfCpuMem:
      return qs(formatMemory(r.selfCpuMemBytes));
    case Column::DeviceMem:
      return qs(formatMemory(r.deviceMemBytes));
    case Column::SelfDeviceMem:
      return qs(formatMemory(r.selfDeviceMemBytes));
    case Column::Calls:
      return QString::number(r.calls);
    case Column::InputShapes:
      return qs(r.inputShapes);
    case Column::Count:
      break;
  }
  return {};
}

QVariant KeyAveragesModel::sortValue(const KeyAverageRow& r, Column c) const {
  switch (c) {
    case Column::Name:
      return qs(r.name);
    case Column::InputShapes:
      return qs(r.inputShapes);
    case Column::Calls:
      return static_cast<qlonglong>(r.calls);
    default: {
      const double v = columnValue(*averages_, r, c);
      return std::isfinite(v) ? v : 0.0;  // NaN would make the order undefined
    }
  }
}

QString KeyAveragesModel::toolTip(const KeyAverageRow& r) const {
  QString tip = qs(r.name);
  tip += isDeviceRow(r) ? QStringLiteral("\nGPU (device-side): ") : QStringLiteral("\nCPU (host-side): ");
  tip += qs(familyName(r.family));
  if (r.userAnnotation) tip += QStringLiteral(", record_function scope");
  if (!r.inputShapes.empty()) tip += QStringLiteral("\nInput shapes: ") + qs(r.inputShapes);
  tip += QStringLiteral("\nCalls: %1").arg(r.calls);
  return tip;
}

QString KeyAveragesModel::badgeText(const KeyAverageRow& r) {
  switch (r.family) {
    case Family::CpuOp:
      return QStringLiteral("op");
    case Family::UserAnnotation:
      return QStringLiteral("scope");
    case Family::GpuUserAnnotation:
      return QStringLiteral("GPU span");
    case Family::Kernel:
      return QStringLiteral("kernel");
    case Family::GpuMemcpy:
    case Family::GpuMemset:
      return QStringLiteral("copy");
    case Family::CudaRuntime:
    case Family::CudaDriver:
    case Family::CudaSync:
      return QStringLiteral("runtime");
    case Family::Overhead:
      return QStringLiteral("profiler");
    case Family::Memory:
      return QStringLiteral("memory");
    default:
      return QStringLiteral("other");
  }
}

const QPixmap& KeyAveragesModel::badge(const KeyAverageRow& r) const {
  const QString text = badgeText(r);
  auto it = badges_.find(text);
  if (it != badges_.end()) return it->second;
  // One width for every badge so the names line up.
  static const QStringList all = {QStringLiteral("op"),       QStringLiteral("scope"),  QStringLiteral("GPU span"),
                                  QStringLiteral("kernel"),   QStringLiteral("copy"),   QStringLiteral("runtime"),
                                  QStringLiteral("profiler"), QStringLiteral("memory"), QStringLiteral("other")};
  QString widest;
  for (const QString& t : all) widest = t.size() > widest.size() ? t : widest;
  QColor fill;
  if (text == QLatin1String("kernel"))
    fill = kDeviceColor;
  else if (text == QLatin1String("GPU span"))
    fill = QColor(0x6a, 0x1b, 0x9a);
  else if (text == QLatin1String("copy"))
    fill = QColor(0x00, 0x69, 0x5c);
  else if (text == QLatin1String("scope"))
    fill = QColor(0x15, 0x65, 0xc0);
  else if (text == QLatin1String("runtime"))
    fill = QColor(0xb2, 0x6a, 0x00);
  else if (text == QLatin1String("profiler"))
    fill = QColor(0xad, 0x14, 0x57);
  else
    fill = QColor(0x54, 0x6e, 0x7a);
  QPixmap pm = makeBadge(text, fill, Qt::white, true);
  const QPixmap room = makeBadge(widest, Qt::transparent, Qt::transparent, false);
  QPixmap padded(room.size());
  padded.fill(Qt::transparent);
  {
    QPainter p(&padded);
    p.drawPixmap(0, 0, pm);
  }
  return badges_.emplace(text, padded).first->second;
}

bool KeyAveragesModel::isTime(Column c) {
  switch (c) {
    case Column::SelfCpu:
    case Column::CpuTotal:
    case Column::CpuAvg:
    case Column::SelfDevice:
    case Column::DeviceTotal:
    case Column::DeviceAvg:
      return true;
    default:
      return false;
  }
}

void KeyAveragesModel::setTimeUnit(TimeUnit u) {
  if (u == timeUnit_) return;
  timeUnit_ = u;
  if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1), {Qt::DisplayRole});
}

QVariant KeyAveragesModel::cell(int row, int col, int role) const {
  const KeyAverageRow* r = rowAt(row);
  if (!r) return {};
  const Column c = columnAt(col);
  switch (role) {
    case Qt::DisplayRole:
      if (timeUnit_ != TimeUnit::Auto && isTime(c)) {
        const double v = columnValue(*averages_, *r, c) / 1000.0;  // ns -> us
        switch (timeUnit_) {
          case TimeUnit::Us:
            return QString::number(v, 'f', 3) + QStringLiteral("us");
          case TimeUnit::Ms:
            return QString::number(v / 1e3, 'f', 3) + QStringLiteral("ms");
          case TimeUnit::S:
            return QString::number(v / 1e6, 'f', 6) + QStringLiteral("s");
          case TimeUnit::Auto:
            break;
        }
      }
      return displayText(*averages_, *r, c);
    case FamilyRole:
      return static_cast<int>(r->family);
    case BadgeRole:
      return badgeText(*r);
    case SortRole:
      return sortValue(*r, c);
    case IsDeviceRole:
      return isDeviceRow(*r);
    case Qt::ToolTipRole:
      return toolTip(*r);
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment((isNumeric(c) ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter));
    case Qt::DecorationRole:
      if (c == Column::Name) return badge(*r);
      return {};
    case Qt::BackgroundRole:
      if (isDeviceRow(*r)) {
        // A light tint of the row colour, so it stays readable on dark palettes.
        QColor base = QApplication::palette().color(QPalette::Base);
        const double a = 0.12;
        return QColor::fromRgbF(static_cast<float>(base.redF() * (1 - a) + kDeviceColor.redF() * a),
                                static_cast<float>(base.greenF() * (1 - a) + kDeviceColor.greenF() * a),
                                static_cast<float>(base.blueF() * (1 - a) + kDeviceColor.blueF() * a));
      }
      return {};
    default:
      return {};
  }
}

}  // namespace attnscope::ui
