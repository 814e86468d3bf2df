// torch's key_averages() table as a Qt model: one row per KeyAverageRow,
// columns in torch's order (attnscope::Column). Display text uses the same
// formatting helpers as the CLI, so the numbers match `attnscope-cli table`.
#pragma once

#include <QPixmap>
#include <map>
#include <memory>

#include "core/tables/key_averages.h"
#include "core/tables/table_format.h"
#include "ui/table/table_model_base.h"

namespace attnscope::ui {

class KeyAveragesModel : public TableModelBase {
  Q_OBJECT

 public:
  // true for device-side rows (kernels, memcpy/memset, gpu_user_annotation).
  static constexpr int IsDeviceRole = Qt::UserRole + 2;
  // The row's family (attnscope::Family as int) and its badge text.
  static constexpr int FamilyRole = Qt::UserRole + 3;
  static constexpr int BadgeRole = Qt::UserRole + 4;

  // Unit of the time columns: Auto is torch's (us, ms or s per value).
  enum class TimeUnit { Auto, Us, Ms, S };
  void setTimeUnit(TimeUnit u);
  TimeUnit timeUnit() const { return timeUnit_; }
  static bool isTime(Column c);
  // The badge a row gets: "op", "scope", "GPU span", "kernel", "copy",
  // "runtime", "profiler", "memory", "other".
  static QString badgeText(const KeyAverageRow& r);

  explicit KeyAveragesModel(QObject* parent = nullptr);

  // Replaces the whole table (snapshot semantics: the model keeps the
  // shared, immutable KeyAverages alive; nullptr clears it).
  using TableModelBase::setData;
  void setData(std::shared_ptr<const KeyAverages> averages);
  const std::shared_ptr<const KeyAverages>& averages() const { return averages_; }

  static Column columnAt(int col) { return static_cast<Column>(col); }
  static int columnOf(Column c) { return static_cast<int>(c); }
  static bool isNumeric(Column c) { return c != Column::Name && c != Column::InputShapes; }
  static bool isDeviceRow(const KeyAverageRow& r);

  // The text the table shows for one cell, formatted like torch.
  static QString displayText(const KeyAverages& ka, const KeyAverageRow& r, Column c);
  const KeyAverageRow* rowAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 protected:
  QVariant cell(int row, int col, int role) const override;

 private:
  QVariant sortValue(const KeyAverageRow& r, Column c) const;
  QString toolTip(const KeyAverageRow& r) const;
  const QPixmap& badge(const KeyAverageRow& r) const;

  std::shared_ptr<const KeyAverages> averages_;
  TimeUnit timeUnit_ = TimeUnit::Auto;
  mutable std::map<QString, QPixmap> badges_;
};

}  // namespace attnscope::ui
