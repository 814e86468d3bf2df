#include "ui/panels/compare_view.h"

#include <QApplication>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPalette>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextDocumentFragment>
#include <QVBoxLayout>
#include <cmath>
#include <functional>

#include "core/tables/table_format.h"
#include "core/text/duration.h"
#include "ui/common/background.h"
#include "ui/common/screen_fit.h"
#include "ui/common/text.h"
#include "ui/panels/timeline_diff.h"
#include "ui/table/sort_header_view.h"

namespace attnscope::ui {
namespace {

QString fmt(double v, bool time) {
  if (!time) return QString::number(static_cast<qlonglong>(std::llround(v)));
  return qs(torchTimeText(v / 1000.0));
}

QString fmtDelta(double d, bool time) {
  const QString sign = d > 0 ? QStringLiteral("+") : d < 0 ? QStringLiteral("−") : QString();
  return sign + fmt(std::fabs(d), time);
}

QColor mix(const QColor& base, const QColor& tint, double a) {
  return QColor::fromRgbF(static_cast<float>(base.redF() * (1 - a) + tint.redF() * a),
                          static_cast<float>(base.greenF() * (1 - a) + tint.greenF() * a),
                          static_cast<float>(base.blueF() * (1 - a) + tint.blueF() * a));
}

template <class T, class F>
QVector<std::optional<double>> values(const std::optional<T>& side, const QVector<F>& getters) {
  QVector<std::optional<double>> out;
  for (const auto& g : getters) out << (side ? std::optional<double>(g(*side)) : std::nullopt);
  return out;
}

template <class T, class F>
QVector<CompareLine> joinLines(const std::vector<Pair<T>>& pairs, const QVector<F>& getters) {
  QVector<CompareLine> lines;
  for (const auto& p : pairs) {
    CompareLine l;
    l.key = qs(p.key);
    l.inA = p.a.has_value();
    l.inB = p.b.has_value();
    l.a = values(p.a, getters);
    l.b = values(p.b, getters);
    lines << l;
  }
  return lines;
}

}  // namespace

CompareModel::CompareModel(QObject* parent) : TableModelBase(parent) {}

void CompareModel::setLines(QString keyTitle, QVector<Metric> metrics, QVector<CompareLine> lines) {
  beginResetModel();
  keyTitle_ = std::move(keyTitle);
  metrics_ = std::move(metrics);
  lines_ = std::move(lines);
  endResetModel();
}

void CompareModel::setFromRows(const Comparison& c) {
  using G = std::function<double(const KeyAverageRow&)>;
  const QVector<G> getters = {
      [](const KeyAverageRow& r) { return static_cast<double>(r.calls); },
      [](const KeyAverageRow& r) { return static_cast<double>(r.selfCpuNs); },
      [](const KeyAverageRow& r) { return static_cast<double>(r.cpuTotalNs); },
      [](const KeyAverageRow& r) { return static_cast<double>(r.selfDeviceNs); },
      [](const KeyAverageRow& r) { return static_cast<double>(r.deviceTotalNs); },
  };
  const QVector<CompareLine> lines = joinLines(c.rows, getters);
  setLines(tr("Name"),
           {{tr("Calls"), false},
            {tr("Self CPU"), true},
            {tr("CPU total"), true},
            {tr("Self CUDA"), true},
            {tr("CUDA total"), true}},
           lines);
}

void CompareModel::setFromSteps(const Comparison& c) {
  using G = std::function<double(const StepReport&)>;
  const QVector<G> getters = {
      [](const StepReport& s) { return static_cast<double>(s.hostEndNs - s.hostStartNs); },
      [](const StepReport& s) { return static_cast<double>(s.gpuAttributedNs); },
      [](const StepReport& s) { return static_cast<double>(s.gpuBusyInHostWindowNs); },
      [](const StepReport& s) { return static_cast<double>(s.launches.size()); },
  };
  const QVector<CompareLine> lines = joinLines(c.steps, getters);
  setLines(tr("Step"),
           {{tr("Host window"), true},
            {tr("GPU launched"), true},
            {tr("GPU busy in window"), true},
            {tr("Launches"), false}},
           lines);
}

int CompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(lines_.size());
}
int CompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : 1 + 3 * static_cast<int>(metrics_.size());
}

QVariant CompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || section < 0 || section >= columnCount())
    return TableModelBase::headerData(section, o, role);
  if (role == Qt::DisplayRole) {
    if (section == 0) return keyTitle_;
    const Metric& m = metrics_[(section - 1) / 3];
    switch ((section - 1) % 3) {
      case 0:
        return tr("%1 A").arg(m.title);
      case 1:
        return tr("%1 B").arg(m.title);
      default:
        return tr("%1 Δ").arg(m.title);
    }
  }
  if (role == Qt::TextAlignmentRole)
    return QVariant::fromValue(Qt::Alignment((section == 0 ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter));
  return {};
}

bool CompareModel::changed(int row, int metric) const {
  const CompareLine& l = lines_[row];
  if (!l.inA || !l.inB) return true;
  const double a = l.a[metric].value_or(0), b = l.b[metric].value_or(0);
  const double d = std::fabs(b - a);
  const double floor = metrics_[metric].time ? 1000.0 : 0.5;  // 1 us, or any count change
  return d >= floor && d >= 0.10 * std::max(std::fabs(a), std::fabs(b));
}

QVariant CompareModel::cell(int row, int col, int role) const {
  const CompareLine& l = lines_[row];
  if (col == 0) {
    switch (role) {
      case Qt::DisplayRole:
        return l.key + (!l.inA ? tr("  (only in B)") : !l.inB ? tr("  (only in A)") : QString());
      case SortRole:
        return l.key;
      case Qt::ToolTipRole:
        return l.key;
      case ChangedRole:
        return !l.inA || !l.inB;
      case Qt::BackgroundRole:
        if (!l.inA || !l.inB) return mix(QApplication::palette().color(QPalette::Base), QColor(0xb2, 0x6a, 0x00), 0.18);
        return {};
      default:
        return {};
    }
  }
  const int m = (col - 1) / 3;
  const int which = (col - 1) % 3;
  const std::optional<double> a = l.a[m], b = l.b[m];
  std::optional<double> v = which == 0 ? a : which == 1 ? b : (a && b ? std::optional<double>(*b - *a) : std::nullopt);
  switch (role) {
    case Qt::DisplayRole:
      if (!v) return QStringLiteral("—");
      return which == 2 ? fmtDelta(*v, metrics_[m].time) : fmt(*v, metrics_[m].time);
    case SortRole:
      return v ? *v : 0.0;
    case ChangedRole:
      return which == 2 && changed(row, m);
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::FontRole:
      if (which == 2 && changed(row, m)) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    case Qt::BackgroundRole:
      if (which == 2 && v && changed(row, m)) {
        const QColor tint = *v > 0 ? QColor(0xc6, 0x28, 0x28) : QColor(0x2e, 0x7d, 0x32);
        return mix(QApplication::palette().color(QPalette::Base), tint, 0.20);
      }
      return {};
    default:
      return {};
  }
}

CompareView::CompareView(QWidget* parent)
    : QWidget(parent),
      rows_(new CompareModel(this)),
      steps_(new CompareModel(this)),
      rowsProxy_(new QSortFilterProxyModel(this)) {
  // Its own minimum size: a long kernel name in a table must not grow the window (tables scroll).
  setMinimumSize(1, 1);
  setObjectName(QStringLiteral("compareView"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  // The answer first: how much B differs a step, with both runs' figures side by side.
  headline_ = new QLabel(this);
  headline_->setObjectName(QStringLiteral("compareHeadline"));
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::RichText);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  headline_->hide();
  layout->addWidget(headline_);
  title_ = new QLabel(tr("Select two runs in the Runs list and press Compare."), this);
  title_->setWordWrap(true);
  title_->setTextFormat(Qt::RichText);
  layout->addWidget(title_);
  auto* opts = new QHBoxLayout;
  auto* attributionLabel = new QLabel(tr("Attri&bution:"), this);
  attribution_ = new QComboBox(this);
  attribution_->addItem(tr("torch attribution"), static_cast<int>(Attribution::Torch));
  attribution_->addItem(tr("corrected attribution"), static_cast<int>(Attribution::Corrected));
  attributionLabel->setBuddy(attribution_);
  auto* groupLabel = new QLabel(tr("Grou&ping:"), this);
  groupBy_ = new QComboBox(this);
  groupBy_->addItem(tr("by name"), static_cast<int>(GroupBy::Name));
  groupBy_->addItem(tr("by input shape"), static_cast<int>(GroupBy::InputShape));
  groupLabel->setBuddy(groupBy_);
  opts->addWidget(attributionLabel);
  opts->addWidget(attribution_);
  opts->addWidget(groupLabel);
  opts->addWidget(groupBy_);
  opts->addStretch(1);
  openDiff_ = new QPushButton(tr("Timelines…"), this);
  openDiff_->setObjectName(QStringLiteral("openTimelineDiff"));
  openDiff_->setToolTip(tr("Both traces' timelines on one time axis, aligned at a step, with the ranked changes"));
  openDiff_->setEnabled(false);
  opts->addWidget(openDiff_);
  connect(openDiff_, &QPushButton::clicked, this, [this] {
    const QModelIndex cur = changesView_->currentIndex();
    openTimelines(cur.isValid() ? changesProxy_->mapToSource(cur).row() : -1);
  });
  layout->addLayout(opts);
  connect(attribution_, &QComboBox::currentIndexChanged, this, &CompareView::recompute);
  connect(groupBy_, &QComboBox::currentIndexChanged, this, &CompareView::recompute);

  perturbation_ = new QLabel(this);
  perturbation_->setObjectName(QStringLiteral("perturbation"));
  perturbation_->setWordWrap(true);
  perturbation_->setTextFormat(Qt::RichText);
  perturbation_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* tabs = new QTabWidget(this);
  auto setup = [](QTableView* v) {
    v->setSortingEnabled(true);
    useSortableTable(v);
    v->setSelectionBehavior(QAbstractItemView::SelectRows);
    v->verticalHeader()->hide();
    v->verticalHeader()->setDefaultSectionSize(v->fontMetrics().height() + 6);
    v->setWordWrap(false);
    v->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  };
  rowsProxy_->setSourceModel(rows_);
  rowsProxy_->setSortRole(TableModelBase::SortRole);
  rowsView_ = new QTableView(tabs);
  rowsView_->setModel(rowsProxy_);
  setup(rowsView_);
  stepsView_ = new QTableView(tabs);
  stepsView_->setModel(steps_);
  setup(stepsView_);
  stepsView_->setSortingEnabled(false);
  auto* summary = new QWidget(tabs);
  auto* sl = new QVBoxLayout(summary);
  sl->addWidget(perturbation_);
  sl->addStretch(1);
  changes_ = new ChangesModel(this);
  changesProxy_ = new QSortFilterProxyModel(this);
  changesProxy_->setSourceModel(changes_);
  changesProxy_->setSortRole(TableModelBase::SortRole);
  changesView_ = new QTableView(tabs);
  changesView_->setObjectName(QStringLiteral("compareChanges"));
  changesView_->setModel(changesProxy_);
  setup(changesView_);
  changesView_->horizontalHeader()->setStretchLastSection(true);
  changesView_->sortByColumn(ChangesModel::Rank, Qt::AscendingOrder);
  // A double click (or Enter) shows the change in both timelines.
  connect(changesView_, &QTableView::activated, this,
          [this](const QModelIndex& i) { openTimelines(changesProxy_->mapToSource(i).row()); });
  // Names elide at a fixed width (the whole name on pointing), so the figures beside them stay on
  // screen: a kernel's full name is thousands of pixels wide.
  for (auto [view, column] : {std::pair{changesView_, static_cast<int>(ChangesModel::What)}, std::pair{rowsView_, 0}}) {
    view->horizontalHeader()->setSectionResizeMode(column, QHeaderView::Interactive);
    view->setColumnWidth(column, 280);
    view->setTextElideMode(Qt::ElideMiddle);
  }
  tabs->addTab(summary, tr("Summary"));
  tabs->addTab(changesView_, tr("What changed"));
  tabs->addTab(stepsView_, tr("Steps"));
  tabs->addTab(rowsView_, tr("Table rows"));
  layout->addWidget(tabs, 1);
}

void CompareView::setMessage(const QString& text) { title_->setText(text); }

void CompareView::compare(const QString& labelA, std::shared_ptr<const TraceSnapshot> a, const QString& labelB,
                          std::shared_ptr<const TraceSnapshot> b) {
  labelA_ = labelA;
  labelB_ = labelB;
  a_ = std::move(a);
  b_ = std::move(b);
  recompute();
}

void CompareView::recompute() {
  if (!a_ || !b_) return;
  const quint64 gen = ++generation_;
  CompareOptions opt;
  opt.attribution = static_cast<Attribution>(attribution_->currentData().toInt());
  opt.groupBy = static_cast<GroupBy>(groupBy_->currentData().toInt());
  title_->setText(tr("Comparing…"));
  headline_->hide();
  auto work = [a = a_, b = b_, opt]() -> std::shared_ptr<const Comparison> {
    try {
      return std::make_shared<const Comparison>(compareTraces(*a, *b, opt));
    } catch (const std::exception&) {
      return nullptr;
    }
  };
  runInBackground(
      this, std::move(work),
      [this, gen](std::shared_ptr<const Comparison> c) {
        if (gen != generation_) return;
        cmp_ = c;
        if (!c) {
          title_->setText(tr("The comparison failed."));
          emit compared();
          return;
        }
        title_->setText(tr("<b>A</b> %1<br><b>B</b> %2").arg(labelA_.toHtmlEscaped(), labelB_.toHtmlEscaped()));
        changes_->setComparison(c);
        openDiff_->setEnabled(true);
        if (diff_ && diff_->isVisible()) diff_->setTraces(labelA_, a_, labelB_, b_, c);
        rows_->setFromRows(*c);
        steps_->setFromSteps(*c);
        // The headline: B's step against A's, with both sides' figures; then every per-step figure as
        // A | B | B - A, two narrow columns that stay in view in the side panel.
        const StepStat* host = nullptr;
        for (const StepStat& st : c->stepStats)
          if (st.metric == "host_ns") host = &st;
        auto nsFig = [](double ns) { return qs(spanDurationText(std::llround(ns))); };
        auto signedFig = [&](double ns) {
          return (ns >= 0 ? QStringLiteral("+") : QStringLiteral("−")) + nsFig(std::abs(ns));
        };
        QString stepRows;
        if (!host && !c->steps.empty()) {
          // Steps paired by name (the attention block's, an engine run's): their host time added up,
          // and each step's as A | B | B - A.
          double ta = 0, tb = 0, ga = 0, gb = 0;
          int paired = 0;
          for (const Pair<StepReport>& p : c->steps) {
            if (!p.a || !p.b) continue;
            ++paired;
            ta += static_cast<double>(p.a->hostNs()), tb += static_cast<double>(p.b->hostNs());
            ga += static_cast<double>(p.a->gpuAttributedNs), gb += static_cast<double>(p.b->gpuAttributedNs);
            stepRows += QStringLiteral(
                            "<tr><td>%1</td><td align=\"right\">%2</td><td align=\"right\">%3</td><td "
                            "align=\"right\">%4</td></tr>")
                            .arg(qs(p.key).toHtmlEscaped(), nsFig(static_cast<double>(p.a->hostNs())),
                                 nsFig(static_cast<double>(p.b->hostNs())),
                                 signedFig(static_cast<double>(p.b->hostNs() - p.a->hostNs())));
          }
          if (paired > 0) {
            headline_->setText(
                tr("<b>B is %1 over its %2 steps</b> (host time, A %3, B %4%5)")
                    .arg(signedFig(tb - ta))
                    .arg(paired)
                    .arg(nsFig(ta), nsFig(tb),
                         ga + gb > 0 ? tr("; GPU work launched A %1, B %2").arg(nsFig(ga), nsFig(gb)) : QString()));
            headline_->show();
          }
        }
        if (host) {
          headline_->setText((host->noise
                                  ? tr("<b>A and B take the same time a step</b>: %1 apart, inside both runs' spread")
                                        .arg(signedFig(host->deltaNs))
                                  : tr("<b>B is %1 a step</b>").arg(signedFig(host->deltaNs))) +
                             tr(" (host time per step, median: A %1 [p25–p75 %2–%3], B %4 [%5–%6])")
                                 .arg(nsFig(host->a.median), nsFig(host->a.p25), nsFig(host->a.p75),
                                      nsFig(host->b.median), nsFig(host->b.p25), nsFig(host->b.p75)));
          headline_->show();
        }
        QString table = tr("<table cellspacing=\"0\" cellpadding=\"2\"><tr><th align=\"left\">%1</th><th "
                           "align=\"right\">A</th><th align=\"right\">B</th><th align=\"right\">B − A</th></tr>")
                            .arg(stepRows.isEmpty() ? tr("per step (median)") : tr("host time"));
        table += stepRows;
        for (const StepStat& st : c->stepStats)
          table += QStringLiteral(
                       "<tr><td>%1</td><td align=\"right\">%2</td><td align=\"right\">%3</td><td "
                       "align=\"right\">%4%5</td></tr>")
                       .arg(qs(st.label).toHtmlEscaped(), nsFig(st.a.median), nsFig(st.b.median), signedFig(st.deltaNs),
                            st.noise ? tr(" (noise)") : QString());
        table += QStringLiteral("</table>");
        // Then where the time went in A and in B: the diagnosis's causes that moved most.
        QString html =
            table + (c->causesLine.empty() ? QString()
                                           : QStringLiteral("<p><b>%1</b></p>").arg(qs(c->causesLine).toHtmlEscaped()));
        if (c->perturbation.empty()) {
          html += tr("No perturbation found between the two.");
        } else {
          html += tr("<b>What changed between A and B</b><ul style=\"margin-left:-20px\">");
          for (const std::string& s : c->perturbation) html += QStringLiteral("<li>%1</li>").arg(qs(s).toHtmlEscaped());
          html += QStringLiteral("</ul>");
        }
        if (!c->engineTiming.empty()) {
          // Both are engine runs: each method's median per step, with its spread; a difference
          // inside both runs' spreads is noise, and one iteration cannot tell.
          html +=
              tr("<b>Measured by the engine</b> (median, p10–p90 over the iterations, A → B)<ul "
                 "style=\"margin-left:-20px\">");
          auto fig = [](const StepSpread& s) {
            const QString m = qs(usText(std::llround(s.medianNs)));
            return s.n > 1
                       ? tr("%1 (%2–%3)").arg(m, qs(usText(std::llround(s.p10Ns))), qs(usText(std::llround(s.p90Ns))))
                       : tr("%1 (one iteration)").arg(m);
          };
          for (const EngineTimingChange& t : c->engineTiming) {
            const QString verdict = t.verdict == "noise" ? tr("noise: inside both runs' spreads")
                                    : t.verdict == "one iteration"
                                        ? tr("cannot tell from noise: one iteration has no "
                                             "spread (run with more iterations)")
                                        : tr("a change: a median outside the other run's spread");
            const double d = t.deltaNs;
            html += QStringLiteral("<li>%1 · %2: %3 → %4 (%5%6) — %7</li>")
                        .arg(qs(t.step).toHtmlEscaped(), qs(timingMethodLabel(t.method)).toHtmlEscaped(), fig(t.a),
                             fig(t.b), d >= 0 ? QStringLiteral("+") : QStringLiteral("−"),
                             qs(usText(std::llround(std::abs(d)))), verdict);
          }
          html += QStringLiteral("</ul>");
        }
        int changedSteps = 0;
        for (int r = 0; r < steps_->rowCount(); ++r)
          for (int m = 0; m < 4; ++m)
            if (steps_->changed(r, m)) {
              ++changedSteps;
              break;
            }
        html += tr("<p>%1 of %2 steps and %3 table rows differ notably (≥ 10% and ≥ 1 us); they are "
                   "highlighted in the Steps and Table rows tabs (red: B is larger, green: B is smaller).</p>")
                    .arg(changedSteps)
                    .arg(steps_->rowCount())
                    .arg([this] {
                      int n = 0;
                      for (int r = 0; r < rows_->rowCount(); ++r)
                        for (int m = 0; m < 5; ++m)
                          if (rows_->changed(r, m)) {
                            ++n;
                            break;
                          }
                      return n;
                    }());
        perturbation_->setText(html);
        emit compared();
      },
      [this, gen](const QString& what) {
        if (gen != generation_) return;
        title_->setText(tr("The comparison failed: %1").arg(what.toHtmlEscaped()));
        emit compared();
      });
}

QString CompareView::perturbationText() const { return perturbation_->text(); }

QString CompareView::headlineText() const {
  return headline_->isHidden() ? QString() : QTextDocumentFragment::fromHtml(headline_->text()).toPlainText();
}

TimelineDiff* CompareView::openTimelines(int change) {
  if (!cmp_ || !a_ || !b_) return nullptr;
  if (!diff_) {
    diff_ = new TimelineDiff(this);
    diff_->setWindowFlag(Qt::Window);
    fitToScreen(diff_, QSize(1280, 800));  // inside the screen, title bar included
    keepInsideScreen(diff_);
    connect(diff_, &TimelineDiff::ready, this, [this] { emit timelinesReady(diff_); });
  }
  if (change >= 0)
    connect(
        diff_, &TimelineDiff::ready, diff_, [d = diff_, change] { d->selectChange(change); }, Qt::SingleShotConnection);
  diff_->setTraces(labelA_, a_, labelB_, b_, cmp_);
  diff_->show();
  diff_->raise();
  return diff_;
}

}  // namespace attnscope::ui
