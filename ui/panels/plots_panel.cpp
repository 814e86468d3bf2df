#include "ui/panels/plots_panel.h"

#include <QCursor>
#include <QLabel>
#include <QScrollArea>
#include <QTabWidget>
#include <QToolTip>
#include <QVBoxLayout>
#include <cmath>

#include "core/run/timing_methods.h"
#include "ui/common/loaded_trace.h"
#include "ui/common/text.h"

#ifdef ATTNSCOPE_HAVE_CHARTS
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QBoxPlotSeries>
#include <QtCharts/QBoxSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegend>
#include <QtCharts/QValueAxis>
#endif

namespace attnscope::ui {
namespace {

void replaceContent(QWidget* tab, QWidget* content) {
  auto* layout = static_cast<QVBoxLayout*>(tab->layout());
  while (layout->count()) {
    QLayoutItem* item = layout->takeAt(0);
    delete item->widget();
    delete item;
  }
  layout->addWidget(content);
}

QLabel* message(const QString& text) {
  auto* l = new QLabel(text);
  l->setWordWrap(true);
  l->setAlignment(Qt::AlignCenter);
  return l;
}

#ifdef ATTNSCOPE_HAVE_CHARTS
QChartView* chartView(QChart* chart) {
  chart->setBackgroundVisible(false);
  chart->setMargins(QMargins(8, 6, 8, 6));  // room for the axis titles (2 px clipped the y title)
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setAnimationOptions(QChart::NoAnimation);
  auto* v = new QChartView(chart);
  v->setRenderHint(QPainter::Antialiasing);
  v->setMinimumHeight(160);
  return v;
}

void paletteAxis(QAbstractAxis* axis, const QPalette& pal) {
  axis->setLabelsColor(pal.color(QPalette::WindowText));
  axis->setTitleBrush(pal.color(QPalette::WindowText));
  axis->setGridLineColor(pal.color(QPalette::Mid));
  axis->setLinePenColor(pal.color(QPalette::Mid));
}

// A chart with category (x) and value (y) axes, in the palette's colours;
// series are added with addCategorySeries.
QChart* categoryChart(const QStringList& categories, const QString& xTitle, const QString& yTitle,
                      const QPalette& pal) {
  auto* chart = new QChart;
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  x->setTitleText(xTitle);
  auto* y = new QValueAxis;
  y->setTitleText(yTitle);
  y->setLabelFormat(QStringLiteral("%.0f"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  paletteAxis(x, pal);
  paletteAxis(y, pal);
  chart->legend()->setLabelColor(pal.color(QPalette::WindowText));
  return chart;
}

void addCategorySeries(QChart* chart, QAbstractSeries* series) {
  chart->addSeries(series);
  for (QAbstractAxis* axis : chart->axes()) series->attachAxis(axis);
}

QValueAxis* valueAxis(QChart* chart) { return qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).value(0)); }

// A bar chart over categories, in the palette's colours.
QChart* barChart(QBarSeries* series, const QStringList& categories, const QString& xTitle, const QString& yTitle,
                 const QString& title, const QPalette& pal) {
  QChart* chart = categoryChart(categories, xTitle, yTitle, pal);
  addCategorySeries(chart, series);
  valueAxis(chart)->applyNiceNumbers();
  chart->setTitle(title);
  chart->setTitleBrush(pal.color(QPalette::WindowText));
  return chart;
}
#endif

}  // namespace

namespace {

QVector<HistogramBin> histogramOf(const EventStore& store, std::span<const EventId> ids) {
  // bin 0: < 1 us; bin k: [2^(k-1), 2^k) us
  QVector<int> counts(40, 0);
  for (EventId id : ids) {
    const Event& e = store.event(id);
    if (e.family != Family::Kernel) continue;
    const double us = static_cast<double>(e.dur) / 1000.0;
    int k = us < 1.0 ? 0 : 1 + static_cast<int>(std::floor(std::log2(us)));
    counts[std::clamp(k, 0, 39)]++;
  }
  int first = 0, last = static_cast<int>(counts.size()) - 1;
  while (first <= last && counts[first] == 0) ++first;
  while (last >= first && counts[last] == 0) --last;
  QVector<HistogramBin> bins;
  for (int k = first; k <= last; ++k) {
    HistogramBin b;
    b.loUs = k == 0 ? 0.0 : std::ldexp(1.0, k - 1);
    b.hiUs = std::ldexp(1.0, k);
    b.count = counts[k];
    bins << b;
  }
  return bins;
}

}  // namespace

QVector<HistogramBin> kernelHistogram(const EventStore& store, const ActivityIndex& index) {
  return histogramOf(store, index.gpuWorkByStart());
}

QVector<HistogramBin> kernelHistogram(const EventStore& store, const std::vector<EventId>& kernels) {
  return histogramOf(store, kernels);
}

QVector<PlotsPanel::StepBox> PlotsPanel::stepBoxes() const {
  QVector<StepBox> out;
#ifdef ATTNSCOPE_HAVE_CHARTS
  const auto* chart = qobject_cast<const QChart*>(stepChart_);
  if (!chart) return out;
  for (QAbstractSeries* s : chart->series()) {
    const auto* box = qobject_cast<const QBoxPlotSeries*>(s);
    if (!box) continue;
    for (const QBoxSet* set : box->boxSets())
      out.push_back({box->name(), set->label(), set->property("tip").toString(), set->at(QBoxSet::LowerExtreme),
                     set->at(QBoxSet::LowerQuartile), set->at(QBoxSet::Median), set->at(QBoxSet::UpperQuartile),
                     set->at(QBoxSet::UpperExtreme)});
  }
#endif
  return out;
}

bool PlotsPanel::chartsAvailable() {
#ifdef ATTNSCOPE_HAVE_CHARTS
  return true;
#else
  return false;
#endif
}

PlotsPanel::PlotsPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("plotsPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  tabs_ = new QTabWidget(this);
  stepsTab_ = new QWidget(tabs_);
  stepsTab_->setLayout(new QVBoxLayout);
  histTab_ = new QWidget(tabs_);
  histTab_->setLayout(new QVBoxLayout);
  tabs_->addTab(stepsTab_, tr("Steps by timing method"));
  tabs_->addTab(histTab_, tr("Kernel durations"));
  layout->addWidget(tabs_);
  setTrace(nullptr);
}

void PlotsPanel::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  series_.clear();
  stepChart_ = nullptr;
  trace_ = trace;
#ifndef ATTNSCOPE_HAVE_CHARTS
  (void)trace;
  replaceContent(stepsTab_, message(tr("This build has no Qt Charts (install qt6-charts-dev and rebuild).")));
  replaceContent(histTab_, message(tr("This build has no Qt Charts (install qt6-charts-dev and rebuild).")));
#else
  if (!trace) {
    replaceContent(stepsTab_, message(tr("No trace.")));
    replaceContent(histTab_, message(tr("No trace.")));
    return;
  }
  const QPalette pal = palette();
  const EventStore& store = trace->store();
  const std::optional<EngineRun>& meta = trace->snapshot->engine;
  if (!meta || meta->timing.empty()) {
    replaceContent(stepsTab_, message(tr("This trace has no per-method step timings: they come from engine "
                                         "runs (the Run panel), which time each step with CUPTI, CUDA events "
                                         "and the host clock.")));
  } else {
    // One box per step and method: the box spans p10-p90 of the iterations,
    // the whiskers min-max, the line is the median (one iteration: a line).
    std::vector<const TimingSeries*> shown;
    for (const TimingSeries& t : meta->timing)
      if (timingMeaningful(t.method, meta->device.isCpu())) shown.push_back(&t);  // no CUDA events on a CPU run
    QStringList cats;
    // Two-word names on two lines: a category is as wide as a quarter of the chart.
    for (const RunStepRecord& st : meta->steps)
      cats << qs(st.name).replace(QLatin1Char(' '), QLatin1Char('\n')) + (st.wrapped ? QStringLiteral("*") : QString());
    QChart* chart = categoryChart(cats, QString(), tr("µs"), pal);
    double top = 0;
    for (const TimingSeries* t : shown) {
      auto* series = new QBoxPlotSeries;
      series->setName(qs(t->method));
      const std::vector<StepSpread> spread = t->spread();
      for (size_t k = 0; k < spread.size() && k < meta->steps.size(); ++k) {
        const StepSpread& sp = spread[k];
        const auto us = [&](double ns) { return sp.n == 0 ? 0.0 : ns / 1000.0; };
        auto* set = new QBoxSet(us(sp.minNs), us(sp.p10Ns), us(sp.medianNs), us(sp.p90Ns), us(sp.maxNs),
                                qs(meta->steps[k].name));
        set->setProperty(
            "tip", sp.n == 0
                       ? tr("%1, %2: no figure").arg(qs(meta->steps[k].name), qs(t->method))
                       : tr("%1, %2: median %3 µs over %4 iteration(s)\np10-p90 %5-%6 µs, min-max %7-%8 µs")
                             .arg(qs(meta->steps[k].name), qs(t->method), QString::number(us(sp.medianNs), 'f', 1))
                             .arg(sp.n)
                             .arg(us(sp.p10Ns), 0, 'f', 1)
                             .arg(us(sp.p90Ns), 0, 'f', 1)
                             .arg(us(sp.minNs), 0, 'f', 1)
                             .arg(us(sp.maxNs), 0, 'f', 1));
        top = std::max(top, us(sp.maxNs));
        series->append(set);
      }
      QObject::connect(series, &QBoxPlotSeries::hovered, series, [](bool on, QBoxSet* set) {
        if (on && set)
          QToolTip::showText(QCursor::pos(), set->property("tip").toString());
        else
          QToolTip::hideText();
      });
      addCategorySeries(chart, series);
      series_ << qs(t->method);
    }
    QValueAxis* y = valueAxis(chart);
    y->setRange(0, top > 0 ? top * 1.05 : 1);
    y->applyNiceNumbers();
    y->setTickCount(3);  // labels that stay legible in a small dock (more are elided to "...")
    stepChart_ = chart;
    // No chart title: the tab names it, and a small dock needs the height.
    auto* box = new QWidget;
    auto* bl = new QVBoxLayout(box);
    bl->setContentsMargins(0, 0, 0, 0);
    bl->addWidget(chartView(chart), 1);
    QString legend =
        tr("The same four steps, timed each way (* = wrapped). Each box spans the 10th to 90th percentile of the "
           "iterations, its whiskers the fastest "
           "and slowest, its line the median; point at a box for its figures.<br>");
    for (const TimingSeries* t : shown)
      legend += QStringLiteral("<b>%1</b>: %2<br>").arg(qs(t->method).toHtmlEscaped(), qs(t->measures).toHtmlEscaped());
    auto* l = new QLabel(legend);
    l->setWordWrap(true);
    l->setTextFormat(Qt::RichText);
    // The words scroll, so the chart keeps its height in a small dock.
    auto* scroll = new QScrollArea;
    scroll->setWidget(l);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMaximumHeight(90);
    bl->addWidget(scroll);
    replaceContent(stepsTab_, box);
  }
  showHistogram(kernelHistogram(store, trace->snapshot->index),
                tr("%1 kernels").arg(store.familyCount(Family::Kernel)));
#endif
}

void PlotsPanel::showHistogram(const QVector<HistogramBin>& bins, const QString& title) {
  histTitle_ = title;
#ifdef ATTNSCOPE_HAVE_CHARTS
  const QPalette pal = palette();
  if (bins.isEmpty()) {
    replaceContent(histTab_, message(tr("This trace has no kernel records (no CUPTI, or a CPU run).")));
    return;
  }
  auto* set = new QBarSet(tr("kernels"));
  QStringList cats;
  for (const HistogramBin& b : bins) {
    *set << b.count;
    cats << (b.loUs == 0 ? QStringLiteral("<1") : QStringLiteral("%1–%2").arg(b.loUs).arg(b.hiUs));
  }
  auto* series = new QBarSeries;
  series->append(set);
  QChart* chart = barChart(series, cats, tr("kernel duration, µs"), tr("kernels"), title, pal);
  chart->legend()->hide();
  replaceContent(histTab_, chartView(chart));
#else
  Q_UNUSED(bins);
#endif
}

void PlotsPanel::showKernel(const std::vector<EventId>& calls) {
  if (!trace_ || calls.empty()) return;
  const EventStore& s = trace_->store();
  if (s.event(calls.front()).family != Family::Kernel) return;
  QString name = qs(s.name(s.event(calls.front())));
  if (name.size() > 70) name = name.left(69) + QStringLiteral("…");
  showHistogram(kernelHistogram(s, calls), tr("%1: %2 calls").arg(name).arg(calls.size()));
  tabs_->setCurrentWidget(histTab_);
}

}  // namespace attnscope::ui
