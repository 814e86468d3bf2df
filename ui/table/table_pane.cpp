#include "ui/table/table_pane.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QResizeEvent>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/common/export.h"
#include "ui/common/loaded_trace.h"
#include "ui/common/text.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/sort_header_view.h"
#include "ui/table/two_line_header_view.h"

namespace attnscope::ui {
namespace {

// Name and Input Shapes widths (pixels): never narrower than the minimum,
// and not given more than the "want" cap while the other one is short.
constexpr int kMinNameWidth = 200;
constexpr int kMaxNameWant = 460;
constexpr int kMinShapesWidth = 150;
constexpr int kMaxShapesWant = 420;

}  // namespace

TablePane::TablePane(QWidget* parent)
    : QWidget(parent),
      model_(new KeyAveragesModel(this)),
      proxy_(new KeyAveragesProxy(this)),
      columnChoice_(static_cast<size_t>(Column::Count), -1) {
  setObjectName(QStringLiteral("tablePane"));
  proxy_->setSourceModel(model_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addWidget(buildControls());

  view_ = new QTableView(this);
  view_->setObjectName(QStringLiteral("keyAveragesTable"));
  view_->setHorizontalHeader(new TwoLineHeaderView(view_));
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  useSortableTable(view_);
  view_->setAlternatingRowColors(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setWordWrap(false);
  view_->setTextElideMode(Qt::ElideRight);
  view_->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 8);
  auto* header = view_->horizontalHeader();
  header->setSectionsMovable(true);
  header->setHighlightSections(false);
  header->setMinimumSectionSize(40);
  header->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(header, &QHeaderView::customContextMenuRequested, this, &TablePane::showHeaderMenu);
  view_->sortByColumn(KeyAveragesModel::columnOf(Column::SelfDevice), Qt::DescendingOrder);
  // Only the sorted column keeps room for the arrow: refit when it moves.
  connect(header, &QHeaderView::sortIndicatorChanged, this, [this] { fitColumns(); });
  view_->viewport()->installEventFilter(this);
  view_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(view_, &QWidget::customContextMenuRequested, this, &TablePane::showRowMenu);
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this] { emit currentRowChanged(currentRow()); });
  connect(proxy_, &QAbstractItemModel::modelReset, this, [this] { emit currentRowChanged(currentRow()); });
  layout->addWidget(view_, 1);

  connect(proxy_, &QAbstractItemModel::rowsInserted, this, &TablePane::updateRowCount);
  connect(proxy_, &QAbstractItemModel::rowsRemoved, this, &TablePane::updateRowCount);
  connect(proxy_, &QAbstractItemModel::modelReset, this, &TablePane::updateRowCount);
  connect(proxy_, &QAbstractItemModel::layoutChanged, this, &TablePane::updateRowCount);
  updateRowCount();
}

QWidget* TablePane::buildControls() {
  // Two rows, each control with its label: what the table shows (grouping, attribution, unit, top N,
  // columns), then which rows (filter, regex, count, legend). One row did not fit beside the side
  // panels at 1280 px.
  auto* bar = new QWidget(this);
  auto* rows = new QVBoxLayout(bar);
  rows->setContentsMargins(0, 0, 0, 0);
  rows->setSpacing(3);
  auto* row = new QHBoxLayout;
  row->setSpacing(6);
  auto* row2 = new QHBoxLayout;
  row2->setSpacing(6);
  rows->addLayout(row);
  rows->addLayout(row2);

  auto* groupLabel = new QLabel(tr("&Group by:"), bar);
  groupBy_ = new QComboBox(bar);
  groupBy_->setObjectName(QStringLiteral("groupBy"));
  groupBy_->addItem(tr("Name"), static_cast<int>(GroupBy::Name));
  groupBy_->addItem(tr("Input shape"), static_cast<int>(GroupBy::InputShape));
  groupBy_->setToolTip(tr("key_averages() or key_averages(group_by_input_shape=True)"));
  groupLabel->setBuddy(groupBy_);
  connect(groupBy_, &QComboBox::currentIndexChanged, this, &TablePane::applyTable);

  auto* attributionLabel = new QLabel(tr("&Attribution:"), bar);
  attribution_ = new QComboBox(bar);
  attribution_->setObjectName(QStringLiteral("attribution"));
  attribution_->addItem(tr("torch attribution"), static_cast<int>(Attribution::Torch));
  attribution_->addItem(tr("corrected attribution"), static_cast<int>(Attribution::Corrected));
  attribution_->setToolTip(
      tr("torch: exactly torch's key_averages(). corrected: every kernel is Self CUDA of "
         "the op that launched it; no double counting"));
  attributionLabel->setBuddy(attribution_);
  connect(attribution_, &QComboBox::currentIndexChanged, this, &TablePane::applyTable);

  auto* unitLabel = new QLabel(tr("&Unit:"), bar);
  timeUnit_ = new QComboBox(bar);
  timeUnit_->setObjectName(QStringLiteral("timeUnit"));
  timeUnit_->addItem(tr("auto (torch)"), static_cast<int>(KeyAveragesModel::TimeUnit::Auto));
  timeUnit_->addItem(QStringLiteral("µs"), static_cast<int>(KeyAveragesModel::TimeUnit::Us));
  timeUnit_->addItem(QStringLiteral("ms"), static_cast<int>(KeyAveragesModel::TimeUnit::Ms));
  timeUnit_->addItem(QStringLiteral("s"), static_cast<int>(KeyAveragesModel::TimeUnit::S));
  timeUnit_->setToolTip(tr("Unit of the time columns"));
  unitLabel->setBuddy(timeUnit_);
  connect(timeUnit_, &QComboBox::currentIndexChanged, this, [this] {
    model_->setTimeUnit(timeUnit());
    for (int c = 0; c < model_->columnCount(); ++c)
      if (KeyAveragesModel::isTime(KeyAveragesModel::columnAt(c))) view_->resizeColumnToContents(c);
  });

  auto* topLabel = new QLabel(tr("Sho&w:"), bar);
  topN_ = new QSpinBox(bar);
  topN_->setObjectName(QStringLiteral("topN"));
  topN_->setRange(0, 100000);
  topN_->setSpecialValueText(tr("all rows"));
  topN_->setPrefix(tr("top "));
  topN_->setToolTip(tr("Show only the first N rows by the current sort (0: all)"));
  topLabel->setBuddy(topN_);
  connect(topN_, &QSpinBox::valueChanged, this, [this](int n) { proxy_->setTopN(n); });

  auto* columns = new QToolButton(bar);
  columns->setObjectName(QStringLiteral("columns"));
  columns->setText(tr("Columns"));
  columns->setToolTip(tr("Choose the table's columns (also: right-click a column header)"));
  connect(columns, &QToolButton::clicked, this, [this] {
    // The header's own menu is the column chooser.
    auto* header = view_->horizontalHeader();
    showHeaderMenu(QPoint(header->sectionViewportPosition(0) + 4, header->height() / 2));
  });

  auto* filterLabel = new QLabel(tr("&Filter:"), bar);
  filter_ = new QLineEdit(bar);
  filter_->setObjectName(QStringLiteral("filter"));
  filter_->setClearButtonEnabled(true);
  filter_->setPlaceholderText(tr("Name contains… (Regex: e.g. ^aten::)"));
  filter_->setMinimumWidth(120);
  filterLabel->setBuddy(filter_);
  regex_ = new QCheckBox(tr("Rege&x"), bar);
  regex_->setObjectName(QStringLiteral("regex"));
  connect(filter_, &QLineEdit::textChanged, this, &TablePane::applyFilter);
  connect(regex_, &QCheckBox::toggled, this, &TablePane::applyFilter);

  rowCount_ = new QLabel(bar);
  rowCount_->setObjectName(QStringLiteral("rowCount"));

  auto* legend = new QLabel(bar);
  legend->setToolTip(
      tr("Rows whose events ran on the GPU timeline: kernels, memcpy/memset and "
         "the device-side span (gpu_user_annotation) of a record_function scope."));
  legend->setTextFormat(Qt::RichText);
  legend->setText(
      tr("<span style=\"background:#2e7d32; color:white; font-weight:bold;\">&nbsp;GPU&nbsp;</span>"
         "&nbsp;device-side row"));
  legend->setMinimumWidth(1);  // a narrow window cuts the legend, not the controls

  row->addWidget(groupLabel);
  row->addWidget(groupBy_);
  row->addSpacing(4);
  row->addWidget(attributionLabel);
  row->addWidget(attribution_);
  row->addSpacing(4);
  row->addWidget(unitLabel);
  row->addWidget(timeUnit_);
  row->addSpacing(4);
  row->addWidget(topLabel);
  row->addWidget(topN_);
  row->addWidget(columns);
  row->addStretch(1);
  row2->addWidget(filterLabel);
  row2->addWidget(filter_, 1);
  row2->addWidget(regex_);
  row2->addSpacing(8);
  row2->addWidget(rowCount_);
  row2->addSpacing(8);
  row2->addWidget(legend);
  return bar;
}

void TablePane::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  trace_ = std::move(trace);
  // Grouping by input shape needs shapes: a trace recorded without them
  // (torch.profiler's record_shapes=False, our run's default) says so
  // instead of showing the by-name table under another title.
  // The by-shape table is built with the snapshot, off this thread.
  bool shapes = false;
  if (trace_ && trace_->snapshot && trace_->snapshot->torchByInputShape) {
    const auto& rows = trace_->snapshot->torchByInputShape->rows;
    shapes =
        std::any_of(rows.begin(), rows.end(), [](const KeyAverageRow& r) { return r.inputShapes != kNoInputShapes; });
  }
  if (auto* items = qobject_cast<QStandardItemModel*>(groupBy_->model())) {
    QStandardItem* item = items->item(groupBy_->findData(static_cast<int>(GroupBy::InputShape)));
    item->setEnabled(shapes);
    item->setText(shapes ? tr("Input shape") : tr("Input shape (none recorded)"));
    item->setToolTip(shapes ? QString()
                            : tr("This trace has no input shapes. Record them with torch.profiler(record_shapes=True), "
                                 "or tick Record input shapes in the Run panel (attnscope-cli run --record-shapes)."));
  }
  if (!shapes && groupBy() == GroupBy::InputShape) {
    const QSignalBlocker block(groupBy_);
    setGroupBy(GroupBy::Name);
  }
  applyTable();
}

void TablePane::setGroupBy(GroupBy g) { groupBy_->setCurrentIndex(groupBy_->findData(static_cast<int>(g))); }
GroupBy TablePane::groupBy() const { return static_cast<GroupBy>(groupBy_->currentData().toInt()); }

void TablePane::setAttribution(Attribution a) {
  attribution_->setCurrentIndex(attribution_->findData(static_cast<int>(a)));
}
Attribution TablePane::attribution() const { return static_cast<Attribution>(attribution_->currentData().toInt()); }

void TablePane::setTimeUnit(KeyAveragesModel::TimeUnit unit) {
  timeUnit_->setCurrentIndex(timeUnit_->findData(static_cast<int>(unit)));
}
KeyAveragesModel::TimeUnit TablePane::timeUnit() const {
  return static_cast<KeyAveragesModel::TimeUnit>(timeUnit_->currentData().toInt());
}

void TablePane::setTopN(int n) { topN_->setValue(n); }

void TablePane::setNameFilter(const QString& text, bool regex) {
  const QSignalBlocker block(regex_);
  regex_->setChecked(regex);
  filter_->setText(text);
  applyFilter();
}

void TablePane::focusFilter() {
  filter_->setFocus();
  filter_->selectAll();
}

void TablePane::applyTable() {
  if (!trace_) return;
  model_->setData(trace_->snapshot->table(attribution(), groupBy()));
  updateColumnVisibility();
  fitColumns();
  updateRowCount();
}

void TablePane::applyFilter() {
  QString error;
  if (proxy_->setNameFilter(filter_->text(), regex_->isChecked(), &error)) {
    filter_->setStyleSheet({});
    filter_->setToolTip({});
  } else {
    filter_->setStyleSheet(QStringLiteral("QLineEdit { border: 1px solid #c62828; }"));
    filter_->setToolTip(error);
  }
  updateRowCount();
  if (!error.isEmpty()) rowCount_->setText(error);
}

void TablePane::updateRowCount() {
  const int total = model_->rowCount();
  const int shown = proxy_->rowCount();
  rowCount_->setText(shown == total ? tr("%1 rows").arg(total) : tr("%1 of %2 rows").arg(shown).arg(total));
}

const KeyAverageRow* TablePane::currentRow() const {
  const QModelIndex cur = view_->currentIndex();
  return cur.isValid() ? model_->rowAt(proxy_->mapToSource(cur).row()) : nullptr;
}

int TablePane::shownRowCount() const { return proxy_->rowCount(); }

QString TablePane::selectionText() const { return selectionAsTsv(*view_); }

bool TablePane::exportRows(const QString& path, QString* error, std::optional<TableFormat> format) const {
  const auto& ka = model_->averages();
  if (!ka) {
    if (error) *error = tr("no table to export");
    return false;
  }
  const auto fmt = format ? format : formatForPath(path);
  if (!fmt) {
    if (error) *error = tr("%1: unknown table format (use .csv, .json, .md or .txt)").arg(path);
    return false;
  }
  std::vector<const KeyAverageRow*> rows;
  for (int r = 0; r < proxy_->rowCount(); ++r) {
    if (const KeyAverageRow* row = model_->rowAt(proxy_->mapToSource(proxy_->index(r, 0)).row())) rows.push_back(row);
  }
  const int sortCol = proxy_->sortColumn();
  const Column by = sortCol >= 0 ? KeyAveragesModel::columnAt(sortCol) : Column::SelfDevice;
  const QByteArray text = renderRows(*ka, rows, *fmt, by, proxy_->sortOrder() == Qt::AscendingOrder);
  return writeFileAtomically(path, text, error);
}

void TablePane::updateColumnVisibility() {
  const auto& ka = model_->averages();
  auto anyNonZero = [&](auto field) {
    if (!ka) return false;
    return std::any_of(ka->rows.begin(), ka->rows.end(), [&](const KeyAverageRow& r) { return r.*field != 0; });
  };
  const bool memory = trace_ && trace_->store().meta().profileMemory;
  const bool cpuMem = memory || anyNonZero(&KeyAverageRow::cpuMemBytes) || anyNonZero(&KeyAverageRow::selfCpuMemBytes);
  const bool deviceMem = anyNonZero(&KeyAverageRow::deviceMemBytes) || anyNonZero(&KeyAverageRow::selfDeviceMemBytes);
  for (int col = 0; col < static_cast<int>(Column::Count); ++col) {
    const Column c = KeyAveragesModel::columnAt(col);
    bool show = true;
    switch (c) {
      case Column::InputShapes:
        show = groupBy() == GroupBy::InputShape;
        break;
      case Column::CpuMem:
      case Column::SelfCpuMem:
        show = cpuMem;
        break;
      case Column::DeviceMem:
      case Column::SelfDeviceMem:
        show = deviceMem;
        break;
      default:
        break;
    }
    const int choice = columnChoice_[static_cast<size_t>(col)];
    if (choice >= 0) show = choice == 1;
    view_->setColumnHidden(col, !show);
  }
}

// Numeric columns get their contents' width; Name and Input Shapes share
// what is left (both elide, with the full text in the tooltip).
void TablePane::fitColumns() {
  for (int col = 0; col < static_cast<int>(Column::Count); ++col) {
    const Column c = KeyAveragesModel::columnAt(col);
    if (view_->isColumnHidden(col)) continue;
    view_->resizeColumnToContents(col);
    if (c == Column::Name) nameWant_ = view_->columnWidth(col);
    if (c == Column::InputShapes) shapesWant_ = view_->columnWidth(col);
  }
  fitFlexibleColumns();
}

void TablePane::fitFlexibleColumns() {
  const int nameCol = KeyAveragesModel::columnOf(Column::Name);
  const int shapesCol = KeyAveragesModel::columnOf(Column::InputShapes);
  auto* header = view_->horizontalHeader();
  int fixed = 0;
  for (int col = 0; col < header->count(); ++col) {
    if (col != nameCol && col != shapesCol && !header->isSectionHidden(col)) fixed += header->sectionSize(col);
  }
  const int avail = view_->viewport()->width() - fixed;
  if (header->isSectionHidden(shapesCol)) {
    header->resizeSection(nameCol, std::max(kMinNameWidth, avail));
    return;
  }
  const int nameWant = std::clamp(nameWant_, kMinNameWidth, kMaxNameWant);
  const int shapesWant = std::clamp(shapesWant_, kMinShapesWidth, kMaxShapesWant);
  int name = kMinNameWidth;
  int shapes = kMinShapesWidth;
  if (nameWant + shapesWant <= avail) {
    shapes = shapesWant;
    name = avail - shapes;  // the name takes any extra room
  } else if (kMinNameWidth + kMinShapesWidth < avail) {
    // Share the room above the minimums in proportion to what each wants.
    const int extra = avail - kMinNameWidth - kMinShapesWidth;
    const int wantExtraName = nameWant - kMinNameWidth;
    const int wantExtraShapes = shapesWant - kMinShapesWidth;
    const int toName =
        wantExtraName + wantExtraShapes == 0
            ? extra / 2
            : static_cast<int>(static_cast<qint64>(extra) * wantExtraName / (wantExtraName + wantExtraShapes));
    name += toName;
    shapes += extra - toName;
  }
  header->resizeSection(nameCol, name);
  header->resizeSection(shapesCol, shapes);
}

bool TablePane::eventFilter(QObject* watched, QEvent* event) {
  if (watched == view_->viewport() && event->type() == QEvent::Resize) {
    auto* re = static_cast<QResizeEvent*>(event);
    if (re->size().width() != re->oldSize().width()) fitFlexibleColumns();
  }
  return QWidget::eventFilter(watched, event);
}

void TablePane::showHeaderMenu(const QPoint& pos) {
  QMenu menu(this);
  const int column = view_->horizontalHeader()->logicalIndexAt(pos);
  if (column >= 0) {
    const QString title = model_->headerData(column, Qt::Horizontal).toString();
    menu.addAction(tr("Look up \"%1\" in the glossary").arg(title), this,
                   [this, title] { emit glossaryRequested(title, -1); });
    menu.addSeparator();
  }
  for (int col = 0; col < static_cast<int>(Column::Count); ++col) {
    if (KeyAveragesModel::columnAt(col) == Column::Name) continue;
    QAction* a = menu.addAction(model_->headerData(col, Qt::Horizontal).toString());
    a->setCheckable(true);
    a->setChecked(!view_->isColumnHidden(col));
    connect(a, &QAction::toggled, this, [this, col](bool on) {
      columnChoice_[static_cast<size_t>(col)] = on ? 1 : 0;
      updateColumnVisibility();
      fitColumns();
    });
  }
  menu.exec(view_->horizontalHeader()->mapToGlobal(pos));
}

void TablePane::showRowMenu(const QPoint& pos) {
  const QModelIndex idx = view_->indexAt(pos);
  QMenu menu(this);
  const KeyAverageRow* r = idx.isValid() ? model_->rowAt(proxy_->mapToSource(idx).row()) : nullptr;
  if (r) {
    const QString name = qs(r->name);
    const int family = static_cast<int>(r->family);
    menu.addAction(tr("Why is this zero? (%1)").arg(name.left(40)), this, [this] { emit whyRequested(); });
    menu.addAction(tr("Look up in the glossary"), this, [this, name, family] { emit glossaryRequested(name, family); });
    menu.addSeparator();
  }
  for (QAction* a : rowMenuActions_) menu.addAction(a);
  menu.exec(view_->viewport()->mapToGlobal(pos));
}

}  // namespace attnscope::ui
