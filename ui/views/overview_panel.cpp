// The Overview tab: where each step's time went (the diagnosis's causes as stacked bars), the
// overview table and the findings.
#include <QCursor>
#include <QGraphicsLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
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
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QValueAxis>
#endif

namespace attnscope::ui {

using namespace views_detail;

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
  computeInBackground([snap = trace_->snapshot] { return std::make_shared<const OverviewView>(overviewView(*snap)); },
                      [this](std::shared_ptr<const OverviewView> v) {
                        view_ = std::move(v);
                        fill();
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
  // Each bar labelled with its step and its wall time: as many bars as have room for their labels
  // (QtCharts elides a label to "..." once its bar is not about 1.8 lines tall), the first ones.
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.8);
  const int perBar = QFontMetrics(small).height() * 12 / 5 + 4;
  const QList<int> sizes = chartSplit_->sizes();
  const int height = sizes.size() == 2 && sizes[0] + sizes[1] > 0 ? sizes[0] + sizes[1] : 400;
  const int room = std::max(110, std::min(360, height * 7 / 10));
  const int all = static_cast<int>(dg.steps.size());
  const int n = std::clamp((room - 32) / perBar, 1, std::min(all, 30));
  QStringList cats;
  for (int i = n - 1; i >= 0; --i) {
    // "ProfilerStep#12" is "#12" on the axis: the names are in the table below.
    const StepWaits& st = dg.steps[static_cast<size_t>(i)];
    QString name = qs(st.name);
    if (name.startsWith(QLatin1String("ProfilerStep#"))) name = name.mid(12);
    if (name.size() > 14) name = name.left(13) + QStringLiteral("…");
    QString cat = QStringLiteral("%1  %2").arg(name, qs(durationText(st.spanNs())));
    while (cats.contains(cat)) cat += QChar(0x200B);  // the axis drops a repeated category
    cats << cat;
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
  y->setLabelsFont(small);
  x->setLabelsFont(small);
  chart->legend()->setFont(small);
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->setMargins(QMargins(0, 0, 0, 0));
  chart->layout()->setContentsMargins(0, 0, 0, 0);
  auto* cv = new QChartView(chart, chartHost_);
  cv->setObjectName(QStringLiteral("overviewChart"));
  cv->setRenderHint(QPainter::Antialiasing);
  // The bars are the diagnosis's windows: a step's wall time runs until the GPU work it launched ended,
  // which can be longer than its host span in the table.
  cv->setToolTip((n < all ? tr("Where each step's time went (the diagnosis): the first %1 of %2 steps, split by cause.")
                                .arg(n)
                                .arg(all)
                          : tr("Where each step's time went (the diagnosis): one bar per step, split by cause.")) +
                 tr(" Each label is the step's wall time, until the GPU work it launched ended."));
  chartHost_->layout()->addWidget(cv);
  // Each bar its room, the time axis about 30 px, the table the rest.
  const int chartHeight = std::clamp(n * perBar + 32, 110, room);
  y->setLabelsVisible(true);
  chartSplit_->setSizes({chartHeight, height - chartHeight});
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

}  // namespace attnscope::ui
