#include "ui/views/views_panels.h"

#include <QComboBox>
#include <QCursor>
#include <QFileInfo>
#include <QGraphicsLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMouseEvent>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QToolTip>
#include <QTreeView>
#include <QVBoxLayout>
#include <cmath>

#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/text/duration.h"
#include "ui/common/background.h"
#include "ui/common/text.h"
#include "ui/shell/export.h"
#include "ui/shell/trace_loader.h"
#include "ui/table/sort_header_view.h"

#ifdef ATTNSCOPE_HAVE_CHARTS
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#endif

namespace attnscope::ui {

namespace {

QString bytesText(qint64 b) { return qs(attnscope::bytesText(b)); }

void setupTable(QTableView* v) {
  useSortableTable(v);
  // The model's own order until the user clicks a header.
  v->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  v->setSortingEnabled(true);
  v->setSelectionBehavior(QAbstractItemView::SelectRows);
  v->setSelectionMode(QAbstractItemView::SingleSelection);
  v->verticalHeader()->hide();
  v->verticalHeader()->setDefaultSectionSize(v->fontMetrics().height() + 6);
  v->setWordWrap(false);
  v->horizontalHeader()->setSectionsClickable(true);
  v->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
}

QSortFilterProxyModel* sortedProxy(QObject* parent, QAbstractItemModel* source) {
  auto* p = new QSortFilterProxyModel(parent);
  p->setSourceModel(source);
  p->setSortRole(TableModelBase::SortRole);
  return p;
}

}  // namespace

// ---- GridModel -------------------------------------------------------------------------

void GridModel::setRows(QVector<Column> columns, QVector<QVector<QVariant>> rows, QVector<EventId> events) {
  beginResetModel();
  cols_ = std::move(columns);
  rows_ = std::move(rows);
  events_ = std::move(events);
  endResetModel();
}

int GridModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int GridModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(cols_.size());
}

QVariant GridModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o == Qt::Horizontal && section >= 0 && section < cols_.size()) {
    if (role == Qt::DisplayRole) return cols_[section].title;
    if (role == Qt::ToolTipRole && !cols_[section].tip.isEmpty()) return cols_[section].tip;
  }
  return TableModelBase::headerData(section, o, role);
}

QVariant GridModel::cell(int row, int col, int role) const {
  const QVariant& v = rows_[row][col];
  const Kind k = cols_[col].kind;
  if (role == SortRole) return v;
  if (role == EventRole) return row < events_.size() ? QVariant::fromValue<qulonglong>(events_[row]) : QVariant();
  if (role == Qt::TextAlignmentRole && k != Kind::Text) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && k == Kind::Text) return v;
  if (role != Qt::DisplayRole) return {};
  if (!v.isValid()) return QStringLiteral("—");
  switch (k) {
    case Kind::Time:
      return qs(durationText(v.toLongLong()));
    case Kind::Bytes:
      return bytesText(v.toLongLong());
    case Kind::Percent:
      return QString::number(v.toDouble(), 'f', 1) + QStringLiteral(" %");
    case Kind::Number:
      return QString::number(v.toDouble(), 'f', 2);
    default:
      return v;
  }
}

// ---- ViewPanel -------------------------------------------------------------------------

void ViewPanel::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  trace_ = std::move(trace);
  ++generation_;
  computeIfShown();
}

void ViewPanel::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  computeIfShown();
}

void ViewPanel::computeIfShown() {
  if (!trace_ || !isVisible() || computed()) return;
  computedFor_ = trace_.get();  // once per trace, even while it runs
  compute();
}

void ViewPanel::done() { emit ready(); }

// ---- Overview --------------------------------------------------------------------------

OverviewPanel::OverviewPanel(QWidget* parent)
    : ViewPanel(parent), chartHost_(new QWidget(this)), table_(new QTableView(this)), model_(new GridModel(this)) {
  setObjectName(QStringLiteral("overviewPanel"));
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* split = new QSplitter(Qt::Horizontal, this);
  // The chart over the table, split so the user can give either more room.
  auto* left = chartSplit_ = new QSplitter(Qt::Vertical, split);
  left->setObjectName(QStringLiteral("overviewChartSplit"));
  left->setChildrenCollapsible(false);
  auto* hostLayout = new QVBoxLayout(chartHost_);
  hostLayout->setContentsMargins(0, 0, 0, 0);
  left->addWidget(chartHost_);
  table_->setObjectName(QStringLiteral("overviewTable"));
  table_->setModel(sortedProxy(this, model_));
  setupTable(table_);
  left->addWidget(table_);
  left->setStretchFactor(0, 0);
  left->setStretchFactor(1, 1);
  findings_ = new QLabel(split);
  findings_->setObjectName(QStringLiteral("overviewFindings"));
  findings_->setWordWrap(true);
  findings_->setTextFormat(Qt::RichText);
  findings_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  findings_->setMinimumWidth(220);
  split->addWidget(left);
  split->addWidget(findings_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  layout->addWidget(split);
}

void OverviewPanel::compute() {
  const quint64 gen = generation_;
  runInBackground(
      this, [snap = trace_->snapshot] { return std::make_shared<const OverviewView>(overviewView(*snap)); },
      [this, gen](std::shared_ptr<const OverviewView> v) {
        if (gen != generation_) return;
        view_ = std::move(v);
        fill();
        done();
      });
}

void OverviewPanel::fill() {
  const OverviewView& v = *view_;
  QVector<GridModel::Column> cols{{tr("Step"), GridModel::Kind::Text, {}}, {tr("Span"), GridModel::Kind::Time, {}}};
  for (int p = 0; p < kOverviewParts; ++p)
    cols.push_back({qs(overviewPartLabel(static_cast<OverviewPart>(p))), GridModel::Kind::Time, {}});
  cols.push_back({tr("GPU utilization"), GridModel::Kind::Percent, tr("GPU work (any kind) / the step's span")});
  cols.push_back({tr("SM efficiency (est.)"), GridModel::Kind::Percent,
                  tr("Kernel-time-weighted min(blocks per SM, 1), from the trace's kernel records")});
  cols.push_back({tr("Achieved occupancy (est.)"), GridModel::Kind::Percent,
                  tr("Kernel-time-weighted est. achieved occupancy %, from the trace's kernel records")});
  QVector<QVector<QVariant>> rows;
  auto row = [&](const OverviewStep& o) {
    QVector<QVariant> r{qs(o.name), QVariant::fromValue<qlonglong>(o.spanNs())};
    for (int p = 0; p < kOverviewParts; ++p) r.push_back(QVariant::fromValue<qlonglong>(o.parts[p]));
    r.push_back(o.gpuUtilizationPct);
    r.push_back(o.smEfficiencyPct < 0 ? QVariant() : QVariant(o.smEfficiencyPct));
    r.push_back(o.occupancyPct < 0 ? QVariant() : QVariant(o.occupancyPct));
    rows.push_back(r);
  };
  for (const OverviewStep& o : v.steps) row(o);
  if (v.steps.size() > 1) row(v.whole);
  model_->setRows(cols, rows);
  table_->resizeColumnsToContents();
  // Beside it, what cost the steps most (the diagnosis, as `explain` says it), then the top findings.
  const Diagnosis& dg = trace_->explanation().diagnosis;
  QString html = tr("<b>%1 step(s)</b> (%2). Each moment of a step goes to the first part that applies, so the "
                    "parts add up to the step.")
                     .arg(v.steps.size())
                     .arg(v.stepSource == "profiler_steps" ? tr("ProfilerStep#N") : qs(v.stepSource));
  if (!dg.causes.empty()) {
    html += tr("<p><b>What costs the most</b></p><ol style=\"margin-left:-20px\">");
    for (const DiagnosedCause& c : dg.causes)
      html += QStringLiteral("<li><b>%1</b>: %2 (%3%)</li>")
                  .arg(qs(c.label).toHtmlEscaped(), qs(spanDurationText(c.totalNs)))
                  .arg(100.0 * c.share, 0, 'f', 0);
    html += QStringLiteral("</ol>");
  }
  html += tr("<p><b>Findings</b></p><ol style=\"margin-left:-20px\">");
  int shown = 0;
  for (const Verdict& f : trace_->explanation().verdicts) {
    if (f.kind == "glossary" || shown >= 3) continue;
    ++shown;
    QString t = qs(f.text);
    if (t.size() > 260) t = t.left(257) + QStringLiteral("…");
    html += QStringLiteral("<li>%1</li>").arg(t.toHtmlEscaped());
  }
  html += QStringLiteral("</ol>");
  findings_->setText(html);
#ifdef ATTNSCOPE_HAVE_CHARTS
  // One horizontal stacked bar per step of the diagnosis (at most 30: the first ones): where its wall
  // time went, by cause, the same split `explain` ranks (the table below says what ran).
  delete chartHost_->findChild<QChartView*>();
  auto* chart = new QChart;
  // No title and the legend at the side: on a laptop the chart has little height, and QtCharts
  // elides every step's label to "..." once its bar is shorter than the label. The title is the
  // chart's tooltip.
  auto* series = new QHorizontalStackedBarSeries;
  static const QColor colors[kCauseCount] = {
      QColor(0x2e, 0x8b, 0x57), QColor(0x8e, 0x44, 0xad), QColor(0xe0, 0x80, 0x30), QColor(0xc6, 0x28, 0x28),
      QColor(0xb0, 0x70, 0x40), QColor(0x20, 0xa0, 0xb0), QColor(0x3d, 0x7b, 0xd9), QColor(0x90, 0xa8, 0xc8),
      QColor(0xa0, 0x60, 0xa0), QColor(0x70, 0x70, 0x70), QColor(0x60, 0x90, 0x60), QColor(0xd8, 0xd8, 0xd8)};
  const int n = std::min<int>(static_cast<int>(dg.steps.size()), 30);
  QStringList cats;
  for (int i = n - 1; i >= 0; --i) {
    // "ProfilerStep#12" is "#12" on the axis: the names are in the table below.
    QString name = qs(dg.steps[static_cast<size_t>(i)].name);
    if (name.startsWith(QLatin1String("ProfilerStep#"))) name = name.mid(12);
    if (name.size() > 14) name = name.left(13) + QStringLiteral("…");
    cats << name;
  }
  for (int p = 0; p < kCauseCount; ++p) {
    double total = 0;
    for (int i = 0; i < n; ++i) total += static_cast<double>(dg.steps[static_cast<size_t>(i)].parts[p]);
    if (total <= 0) continue;  // a legend entry only for what holds time
    auto* set = new QBarSet(qs(causeLabel(static_cast<Cause>(p))));
    set->setProperty("cause", p);
    set->setColor(colors[p]);
    for (int i = n - 1; i >= 0; --i) *set << static_cast<double>(dg.steps[static_cast<size_t>(i)].parts[p]) / 1e6;
    series->append(set);
  }
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis;
  y->append(cats);
  auto* x = new QValueAxis;
  // The unit in the labels, not a title: the short chart has no height to spare for one, and
  // QtCharts elides every label to "..." when the labels and the title do not fit.
  x->setLabelFormat(QStringLiteral("%.0f ms"));
  // Round steps (0, 200, 400 ms ...) that fit: QtCharts' default five ticks over the raw maximum give
  // labels too long for the width, which it elides to "...".
  x->setTickCount(5);
  chart->addAxis(y, Qt::AlignLeft);
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(y);
  series->attachAxis(x);
  x->applyNiceNumbers();
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.8);
  y->setLabelsFont(small);
  x->setLabelsFont(small);
  chart->legend()->setFont(small);
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->setMargins(QMargins(0, 0, 0, 0));
  chart->layout()->setContentsMargins(0, 0, 0, 0);
  auto* cv = new QChartView(chart, chartHost_);
  cv->setObjectName(QStringLiteral("overviewChart"));
  cv->setRenderHint(QPainter::Antialiasing);
  cv->setToolTip(tr("Where each step's time went (the diagnosis): one bar per step, split by cause"));
  chartHost_->layout()->addWidget(cv);
  // Each step's bar gets room for its label (QtCharts elides a label to "..." once the bar is not
  // about 1.8 lines tall), the time axis about 30 px, the table the rest. Where that does not fit
  // (many steps, a short window) the bars go unlabelled: hovering one names its step and cause.
  const int perBar = QFontMetrics(small).height() * 9 / 5 + 2;
  const QList<int> sizes = chartSplit_->sizes();
  const int total = sizes.size() == 2 && sizes[0] + sizes[1] > 0 ? sizes[0] + sizes[1] : 400;
  const int want = n * perBar + 32;
  const int chartHeight = std::clamp(want, 110, std::max(110, std::min(360, total * 7 / 10)));
  y->setLabelsVisible(chartHeight >= want);
  chartSplit_->setSizes({chartHeight, total - chartHeight});
  connect(series, &QHorizontalStackedBarSeries::hovered, cv,
          [cv, steps = dg.steps, n](bool on, int index, QBarSet* set) {
            const int step = n - 1 - index;  // the bars run bottom-up
            if (!on || step < 0 || step >= static_cast<int>(steps.size())) {
              QToolTip::hideText();
              return;
            }
            const int cause = set ? set->property("cause").toInt() : -1;
            QString tip = qs(steps[static_cast<size_t>(step)].name);
            if (cause >= 0 && cause < kCauseCount)
              tip += QStringLiteral(": %1 %2").arg(qs(causeLabel(static_cast<Cause>(cause))),
                                                   qs(durationText(steps[static_cast<size_t>(step)].parts[cause])));
            QToolTip::showText(QCursor::pos(), tip, cv);
          });
#endif
}

// ---- Kernels ---------------------------------------------------------------------------

KernelsPanel::KernelsPanel(QWidget* parent)
    : ViewPanel(parent), grouping_(new QComboBox(this)), table_(new QTableView(this)), model_(new GridModel(this)) {
  setObjectName(QStringLiteral("kernelsPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  grouping_->setObjectName(QStringLiteral("kernelGrouping"));
  grouping_->addItem(tr("by kernel name"), static_cast<int>(KernelGrouping::Name));
  grouping_->addItem(tr("by kernel and the op that launched it"), static_cast<int>(KernelGrouping::NameAndOp));
  grouping_->addItem(tr("by kernel, grid and block"), static_cast<int>(KernelGrouping::NameAndLaunch));
  bar->addWidget(new QLabel(tr("Group:"), this));
  bar->addWidget(grouping_);
  summary_ = new QLabel(this);
  bar->addWidget(summary_, 1);
  layout->addLayout(bar);
  proxy_ = sortedProxy(this, model_);
  table_->setObjectName(QStringLiteral("kernelsTable"));
  table_->setModel(proxy_);
  setupTable(table_);
  layout->addWidget(table_, 1);
  connect(grouping_, &QComboBox::currentIndexChanged, this, [this] {
    ++generation_;
    if (trace_) compute();
  });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (!cur.isValid() || !view_) return;
    const int row = proxy_->mapToSource(cur).row();
    if (row >= 0 && static_cast<size_t>(row) < view_->rows.size())
      emit highlightRequested(view_->rows[static_cast<size_t>(row)].events);
  });
}

void KernelsPanel::compute() {
  const quint64 gen = generation_;
  const auto grouping = static_cast<KernelGrouping>(grouping_->currentData().toInt());
  runInBackground(
      this,
      [snap = trace_->snapshot, grouping] { return std::make_shared<const KernelView>(kernelView(*snap, grouping)); },
      [this, gen](std::shared_ptr<const KernelView> v) {
        if (gen != generation_) return;
        view_ = std::move(v);
        fill();
        done();
      });
}

void KernelsPanel::fill() {
  using K = GridModel::Kind;
  const auto grouping = static_cast<KernelGrouping>(grouping_->currentData().toInt());
  QVector<GridModel::Column> cols{{tr("Kind"), K::Text, {}}, {tr("Kernel"), K::Text, {}}};
  if (grouping == KernelGrouping::NameAndOp) cols.push_back({tr("Launched by"), K::Text, {}});
  if (grouping == KernelGrouping::NameAndLaunch) cols.push_back({tr("Launch shape"), K::Text, {}});
  cols += {{tr("Calls"), K::Count, {}},
           {tr("Total"), K::Time, {}},
           {tr("Mean"), K::Time, {}},
           {tr("Min"), K::Time, {}},
           {tr("Max"), K::Time, {}},
           {tr("Share of GPU time"), K::Percent, tr("Of the trace's kernels, copies and memsets")},
           {tr("Grid"), K::Text, {}},
           {tr("Block"), K::Text, {}},
           {tr("Registers/thread"), K::Text, {}},
           {tr("Shared memory"), K::Text, tr("Bytes per block, static and dynamic")},
           {tr("Blocks per SM"), K::Number, {}},
           {tr("Occupancy (est.)"), K::Percent, tr("Kineto's est. achieved occupancy, weighted by time")},
           {tr("Tensor Cores"), K::Text, tr("By the kernel's name (MMA families: xmma, hmma, gmma, h1688, ...)")},
           {tr("Ops that launched it"), K::Text, {}}};
  auto intCell = [](int32_t x) { return x == -1 ? QVariant() : x == -2 ? QVariant(tr("varies")) : QVariant(x); };
  QVector<QVector<QVariant>> rows;
  for (const KernelRow& r : view_->rows) {
    QVector<QVariant> row{r.family == Family::Kernel      ? tr("kernel")
                          : r.family == Family::GpuMemcpy ? tr("memcpy")
                          : r.family == Family::GpuMemset ? tr("memset")
                                                          : tr("sync (a wait)"),
                          qs(r.name)};
    if (grouping == KernelGrouping::NameAndOp) row.push_back(r.op.empty() ? tr("(none linked)") : qs(r.op));
    if (grouping == KernelGrouping::NameAndLaunch) row.push_back(qs(r.launch));
    QStringList ops;
    for (const auto& o : r.ops) ops << qs(o);
    row += {QVariant::fromValue<qulonglong>(r.calls),
            QVariant::fromValue<qlonglong>(r.totalNs),
            QVariant::fromValue<qlonglong>(std::llround(r.meanNs)),
            QVariant::fromValue<qlonglong>(r.minNs),
            QVariant::fromValue<qlonglong>(r.maxNs),
            r.sharePct,
            qs(r.grid),
            qs(r.block),
            intCell(r.registersPerThread),
            intCell(r.sharedMemory),
            r.blocksPerSm < 0 ? QVariant() : QVariant(r.blocksPerSm),
            r.occupancyPct < 0 ? QVariant() : QVariant(r.occupancyPct),
            r.family == Family::Kernel ? (r.tensorCores ? tr("yes") : tr("no")) : QVariant(),
            ops.join(QStringLiteral(", "))};
    rows.push_back(row);
  }
  model_->setRows(cols, rows);
  table_->setColumnWidth(1, 360);
  for (int c = 2; c < model_->columnCount(); ++c) table_->resizeColumnToContents(c);
  summary_->setText(tr("%1 rows · GPU work %2 (kernels, copies, memsets; sync records are waits, listed last). "
                       "Click a header to sort; select a kernel to light it on the timeline.")
                        .arg(view_->rows.size())
                        .arg(qs(spanDurationText(view_->gpuWorkNs))));
}

bool KernelsPanel::exportTo(const QString& path, QString* error) const {
  if (!view_) {
    if (error) *error = tr("the kernel view is not computed yet");
    return false;
  }
  // The rows in the order shown.
  KernelView shown;
  shown.gpuWorkNs = view_->gpuWorkNs;
  for (int r = 0; r < proxy_->rowCount(); ++r)
    shown.rows.push_back(view_->rows[static_cast<size_t>(proxy_->mapToSource(proxy_->index(r, 0)).row())]);
  const bool json = path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive);
  const std::string text = json ? kernelViewJson(shown) : kernelViewCsv(shown);
  return writeFileAtomically(path, QByteArray::fromStdString(text), error);
}

// ---- Memory ----------------------------------------------------------------------------

MemoryPanel::MemoryPanel(QWidget* parent)
    : ViewPanel(parent),
      device_(new QComboBox(this)),
      summary_(new QLabel(this)),
      chartHost_(new QWidget(this)),
      live_(new QTableView(this)),
      allocs_(new QTableView(this)),
      liveModel_(new GridModel(this)),
      allocModel_(new GridModel(this)) {
  setObjectName(QStringLiteral("memoryPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  device_->setObjectName(QStringLiteral("memoryDevice"));
  bar->addWidget(new QLabel(tr("Device:"), this));
  bar->addWidget(device_);
  summary_->setWordWrap(true);
  bar->addWidget(summary_, 1);
  layout->addLayout(bar);
  auto* split = new QSplitter(Qt::Horizontal, this);
  auto* hostLayout = new QVBoxLayout(chartHost_);
  hostLayout->setContentsMargins(0, 0, 0, 0);
  split->addWidget(chartHost_);
  auto* tabs = new QTabWidget(split);
  liveProxy_ = sortedProxy(this, liveModel_);
  allocProxy_ = sortedProxy(this, allocModel_);
  live_->setObjectName(QStringLiteral("memoryLive"));
  allocs_->setObjectName(QStringLiteral("memoryAllocations"));
  live_->setModel(liveProxy_);
  allocs_->setModel(allocProxy_);
  setupTable(live_);
  setupTable(allocs_);
  tabs->addTab(live_, tr("Live at the peak"));
  tabs->addTab(allocs_, tr("Allocations"));
  split->addWidget(tabs);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  chartHost_->setMinimumWidth(360);
  // Small when the window is: the tabs must not take the timeline's room at 1280x800.
  for (QWidget* w : {static_cast<QWidget*>(live_), static_cast<QWidget*>(allocs_), chartHost_}) w->setMinimumHeight(40);
  summary_->setMaximumHeight(summary_->fontMetrics().lineSpacing() * 2 + 4);
  split->setSizes({600, 400});
  layout->addWidget(split, 1);
  connect(device_, &QComboBox::currentIndexChanged, this, &MemoryPanel::showDevice);
  auto lightAllocation = [this](QSortFilterProxyModel* proxy, const QModelIndex& cur) {
    if (!cur.isValid()) return;
    const QVariant ev = proxy->index(cur.row(), 0).data(GridModel::EventRole);
    if (ev.isValid()) emit highlightRequested({static_cast<EventId>(ev.toULongLong())});
  };
  connect(live_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this, lightAllocation](const QModelIndex& c) { lightAllocation(liveProxy_, c); });
  connect(allocs_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this, lightAllocation](const QModelIndex& c) { lightAllocation(allocProxy_, c); });
}

void MemoryPanel::compute() {
  const quint64 gen = generation_;
  runInBackground(
      this, [snap = trace_->snapshot] { return std::make_shared<const MemoryView>(memoryView(*snap)); },
      [this, gen](std::shared_ptr<const MemoryView> v) {
        if (gen != generation_) return;
        view_ = std::move(v);
        fill();
        done();
      });
}

void MemoryPanel::fill() {
  device_->blockSignals(true);
  device_->clear();
  for (const DeviceMemory& d : view_->devices) device_->addItem(qs(d.label));
  device_->blockSignals(false);
  if (view_->devices.empty()) {
    summary_->setText(tr("This trace has no memory events: record with torch.profiler.profile(profile_memory=True)."));
    liveModel_->setRows({}, {});
    allocModel_->setRows({}, {});
    delete chartView_;
    chartView_ = nullptr;
    chartViewport_ = nullptr;
    return;
  }
  showDevice(0);
}

void MemoryPanel::showDevice(int index) {
  if (!view_ || index < 0 || static_cast<size_t>(index) >= view_->devices.size()) return;
  const DeviceMemory& d = view_->devices[static_cast<size_t>(index)];
  const int64_t origin = view_->originNs;
  QString s = tr("Peak allocated <b>%1</b> at %2 from the trace's start; peak reserved %3.")
                  .arg(bytesText(d.peakAllocated), qs(spanDurationText(d.peakNs - origin)),
                       d.peakReserved < 0 ? tr("not in the trace") : bytesText(d.peakReserved));
  if (!d.addressesInTrace)
    s += tr(" This trace has no block addresses: what was live at the peak cannot be told.");
  else
    s += tr(" Live then: %1 allocations made in the trace (%2) and %3 allocated before the trace began.")
             .arg(d.liveAtPeak.size())
             .arg(bytesText(d.peakAllocated - d.allocatedBeforeTrace), bytesText(d.allocatedBeforeTrace));
  if (!d.totalsInTrace) s += tr(" (No Total Allocated in this trace: the curve is the net of what it saw.)");
  summary_->setText(s + tr(" Click the curve to move the timeline there."));
  using K = GridModel::Kind;
  auto eventsOf = [](const std::vector<Allocation>& list) {
    QVector<EventId> ev;
    for (const Allocation& a : list) ev.push_back(a.event);
    return ev;
  };
  auto rowsOf = [&](const std::vector<Allocation>& list) {
    QVector<QVector<QVariant>> rows;
    for (const Allocation& a : list) {
      QVector<QVariant> r{QVariant::fromValue<qlonglong>(a.bytes), a.op.empty() ? tr("(no op)") : qs(a.op),
                          QVariant::fromValue<qlonglong>(a.allocatedNs - origin),
                          a.freedNs < 0 ? QVariant() : QVariant::fromValue<qlonglong>(a.freedNs - origin),
                          a.freedNs < 0 ? QVariant() : QVariant::fromValue<qlonglong>(a.freedNs - a.allocatedNs)};
      rows.push_back(r);
    }
    return rows;
  };
  const QVector<GridModel::Column> cols{
      {tr("Size"), K::Bytes, {}},
      {tr("Allocated by"), K::Text, {}},
      {tr("Allocated at"), K::Time, tr("From the trace's start")},
      {tr("Freed at"), K::Time, tr("From the trace's start; — when not in the trace")},
      {tr("Lifetime"), K::Time, {}}};
  liveModel_->setRows(cols, rowsOf(d.liveAtPeak), eventsOf(d.liveAtPeak));
  allocModel_->setRows(cols, rowsOf(d.allocations), eventsOf(d.allocations));
  for (QTableView* t : {live_, allocs_})
    for (int c = 0; c < t->model()->columnCount(); ++c) t->resizeColumnToContents(c);
#ifdef ATTNSCOPE_HAVE_CHARTS
  delete chartView_;
  auto* chart = new QChart;
  auto* alloc = new QLineSeries;
  alloc->setName(tr("allocated"));
  auto* reserved = new QLineSeries;
  reserved->setName(tr("reserved"));
  const double mib = 1024.0 * 1024.0;
  bool haveReserved = false;
  // At most ~4000 points: a step function, decimated by keeping each bucket's extremes.
  const size_t n = d.curve.size();
  const size_t stride = std::max<size_t>(1, n / 2000);
  for (size_t i = 0; i < n; i += stride) {
    size_t hi = i, lo = i;
    for (size_t k = i; k < std::min(n, i + stride); ++k) {
      if (d.curve[k].allocated > d.curve[hi].allocated) hi = k;
      if (d.curve[k].allocated < d.curve[lo].allocated) lo = k;
    }
    for (size_t k : {std::min(lo, hi), std::max(lo, hi)}) {
      const double t = static_cast<double>(d.curve[k].t - origin) / 1e6;
      alloc->append(t, static_cast<double>(d.curve[k].allocated) / mib);
      if (d.curve[k].reserved >= 0)
        reserved->append(t, static_cast<double>(d.curve[k].reserved) / mib), haveReserved = true;
    }
  }
  chart->addSeries(alloc);
  if (haveReserved)
    chart->addSeries(reserved);
  else
    delete reserved;
  auto* peak = new QScatterSeries;
  peak->setName(tr("peak"));
  peak->setMarkerSize(9);
  peak->append(static_cast<double>(d.peakNs - origin) / 1e6, static_cast<double>(d.peakAllocated) / mib);
  chart->addSeries(peak);
  // The steps: a thin mark at each step's start, along the bottom.
  auto* steps = new QScatterSeries;
  steps->setName(tr("step starts"));
  steps->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  steps->setMarkerSize(6);
  for (const StepReport& st : trace_->explanation().steps)
    steps->append(static_cast<double>(st.hostStartNs - origin) / 1e6, 0.0);
  chart->addSeries(steps);
  chart->createDefaultAxes();
  if (auto axes = chart->axes(Qt::Horizontal); !axes.isEmpty())
    axes.front()->setTitleText(tr("ms from the trace's start"));
  if (auto axes = chart->axes(Qt::Vertical); !axes.isEmpty()) axes.front()->setTitleText(tr("MiB"));
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.8);
  for (QAbstractAxis* ax : chart->axes()) ax->setLabelsFont(small), ax->setTitleFont(small);
  chart->legend()->setFont(small);
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->setMargins(QMargins(0, 0, 0, 0));
  chart->layout()->setContentsMargins(0, 0, 0, 0);
  auto* cv = new QChartView(chart, chartHost_);
  cv->setObjectName(QStringLiteral("memoryChart"));
  cv->setRenderHint(QPainter::Antialiasing);
  cv->viewport()->installEventFilter(this);
  chartHost_->layout()->addWidget(cv);
  chartView_ = cv;
  chartViewport_ = cv->viewport();
#endif
}

qint64 MemoryPanel::timeAtChartPoint(QPoint p) const {
#ifdef ATTNSCOPE_HAVE_CHARTS
  auto* cv = qobject_cast<QChartView*>(chartView_);
  if (!cv || !view_) return -1;
  QChart* chart = cv->chart();
  const QPointF scene = cv->mapToScene(p);
  const QPointF inChart = chart->mapFromScene(scene);
  if (!chart->plotArea().contains(inChart)) return -1;
  const QPointF value = chart->mapToValue(inChart);
  return view_->originNs + static_cast<qint64>(value.x() * 1e6);
#else
  Q_UNUSED(p);
  return -1;
#endif
}

bool MemoryPanel::eventFilter(QObject* o, QEvent* e) {
  if (o == chartViewport_ && chartViewport_ && e->type() == QEvent::MouseButtonPress) {
    const qint64 t = timeAtChartPoint(static_cast<QMouseEvent*>(e)->position().toPoint());
    if (t >= 0) emit timeRequested(t);
  }
  return ViewPanel::eventFilter(o, e);
}

// ---- Modules ---------------------------------------------------------------------------

ModulesPanel::ModulesPanel(QWidget* parent)
    : ViewPanel(parent), summary_(new QLabel(this)), tree_(new QTreeView(this)), model_(new QStandardItemModel(this)) {
  setObjectName(QStringLiteral("modulesPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  summary_->setWordWrap(true);
  layout->addWidget(summary_);
  tree_->setObjectName(QStringLiteral("modulesTree"));
  tree_->setModel(model_);
  tree_->setSortingEnabled(true);
  tree_->setUniformRowHeights(true);
  tree_->header()->setSectionsClickable(true);
  tree_->setSelectionBehavior(QAbstractItemView::SelectRows);
  model_->setSortRole(TableModelBase::SortRole);
  layout->addWidget(tree_, 1);
  connect(tree_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (!cur.isValid() || !view_) return;
    const QVariant node = cur.siblingAtColumn(0).data(Qt::UserRole + 7);
    if (node.isValid()) emit highlightRequested(view_->nodes[static_cast<size_t>(node.toInt())].events);
  });
}

void ModulesPanel::compute() {
  const quint64 gen = generation_;
  runInBackground(
      this, [snap = trace_->snapshot] { return std::make_shared<const ModuleView>(moduleView(*snap)); },
      [this, gen](std::shared_ptr<const ModuleView> v) {
        if (gen != generation_) return;
        view_ = std::move(v);
        fill();
        done();
      });
}

void ModulesPanel::fill() {
  model_->clear();
  model_->setHorizontalHeaderLabels({tr("Module"), tr("Calls"), tr("Host time"), tr("Self host time"),
                                     tr("GPU time launched"), tr("Self GPU time"), tr("GPU activities")});
  if (!view_->present) {
    summary_->setText(
        tr("This trace has no nn.Module events. Record with torch.profiler.profile(with_stack=True) "
           "(or with_modules=True) to see the module tree."));
    return;
  }
  summary_->setText(tr("%1 modules. GPU time is what each module launched while it ran (by correlation from its "
                       "thread's launches), so a module is not zero because it was not wrapped. Click a header to "
                       "sort; select a module to light its calls on the timeline.")
                        .arg(view_->nodes.size()));
  std::vector<QStandardItem*> items(view_->nodes.size(), nullptr);
  auto timeItem = [](int64_t ns) {
    auto* it = new QStandardItem(qs(durationText(ns)));
    it->setData(QVariant::fromValue<qlonglong>(ns), TableModelBase::SortRole);
    it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return it;
  };
  for (size_t i = 0; i < view_->nodes.size(); ++i) {
    const ModuleNode& m = view_->nodes[i];
    auto* name = new QStandardItem(qs(m.name));
    name->setData(qs(m.name), TableModelBase::SortRole);
    name->setData(static_cast<int>(i), Qt::UserRole + 7);
    name->setToolTip(qs(m.path));
    auto* calls = new QStandardItem(QString::number(m.calls));
    calls->setData(QVariant::fromValue<qulonglong>(m.calls), TableModelBase::SortRole);
    auto* acts = new QStandardItem(QString::number(m.gpuActivities));
    acts->setData(QVariant::fromValue<qulonglong>(m.gpuActivities), TableModelBase::SortRole);
    QList<QStandardItem*> row{
        name, calls, timeItem(m.hostNs), timeItem(m.selfHostNs), timeItem(m.gpuNs), timeItem(m.selfGpuNs), acts};
    for (auto* it : row) it->setEditable(false);
    if (m.parent < 0)
      model_->appendRow(row);
    else
      items[static_cast<size_t>(m.parent)]->appendRow(row);
    items[i] = name;
  }
  tree_->expandToDepth(2);
  tree_->header()->resizeSection(0, 320);
  for (int c = 1; c < model_->columnCount(); ++c) tree_->resizeColumnToContents(c);
}

}  // namespace attnscope::ui
