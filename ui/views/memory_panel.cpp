// The Memory tab: each device's allocated and reserved memory over time, and the allocations.
#include <QComboBox>
#include <QGraphicsLayout>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMouseEvent>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/text/duration.h"
#include "ui/common/background.h"
#include "ui/common/loaded_trace.h"
#include "ui/common/text.h"
#include "ui/table/sort_header_view.h"
#include "ui/views/views_detail.h"
#include "ui/views/views_panels.h"
#ifdef ATTNSCOPE_HAVE_CHARTS
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#endif

namespace attnscope::ui {

using namespace views_detail;

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
  auto* deviceLabel = new QLabel(tr("Device:"), this);
  deviceLabel->setBuddy(device_);
  bar->addWidget(deviceLabel);
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
  computeInBackground([snap = trace_->snapshot] { return std::make_shared<const MemoryView>(memoryView(*snap)); },
                      [this](std::shared_ptr<const MemoryView> v) {
                        view_ = std::move(v);
                        fill();
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

}  // namespace attnscope::ui
