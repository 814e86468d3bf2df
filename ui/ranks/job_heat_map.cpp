#include "ui/ranks/job_heat_map.h"

#include <QHelpEvent>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <map>

#include "ui/common/text.h"

namespace attnscope::ui {

namespace {

constexpr int kMargin = 6;
constexpr int kMinCellW = 44, kMaxCellW = 140, kMinCellH = 18, kMaxCellH = 40;
const QColor kStragglerLine(20, 20, 20);
const QColor kSelectedLine(31, 111, 235);

// Light (no wait) to dark red (the longest wait): a sequential scale read at a glance.
const std::pair<double, QColor> kStops[] = {{0.0, QColor(0xf3, 0xf5, 0xf7)},
                                            {0.25, QColor(0xfd, 0xdb, 0x9c)},
                                            {0.5, QColor(0xf5, 0x9e, 0x55)},
                                            {0.75, QColor(0xd9, 0x4e, 0x35)},
                                            {1.0, QColor(0x86, 0x1c, 0x17)}};

QColor mix(const QColor& a, const QColor& b, double t) {
  auto m = [t](int x, int y) { return static_cast<int>(x + (y - x) * t + 0.5); };
  return QColor(m(a.red(), b.red()), m(a.green(), b.green()), m(a.blue(), b.blue()));
}

QString ms(int64_t ns) { return qs(spanDurationText(ns)); }

QString msNumber(int64_t ns) { return QString::number(static_cast<double>(ns) / 1e6, 'f', ns < 10'000'000 ? 1 : 0); }

QString stragglerCause(const ranks::Straggler& s) {
  if (s.cause == "slow_region")
    return QObject::tr("in %1 %2 (the others %3)").arg(qs(s.region), ms(s.regionNs), ms(s.othersRegionNs));
  if (s.cause == "slow_work")
    return QObject::tr("its work before arriving took %1x the others'").arg(s.workRatio, 0, 'f', 1);
  if (s.cause == "late_start") return QObject::tr("it started the step late");
  return {};
}

}  // namespace

JobHeatMap::JobHeatMap(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setObjectName(QStringLiteral("jobHeatMap"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void JobHeatMap::setReport(std::shared_ptr<const ranks::JobReport> report) {
  report_ = std::move(report);
  steps_.clear();
  cellFigures_.clear();
  marked_.clear();
  title_.clear();
  stepPrefix_.clear();
  maxNs_ = 0;
  selected_ = {-1, -1};
  if (report_) {
    const ranks::JobReport& r = *report_;
    // Columns: every step name of any rank, in the order they started (the earliest aligned start).
    std::map<std::string, int64_t> first;
    for (const auto& fs : r.figures)
      for (const ranks::StepFigures& f : fs) {
        auto [it, fresh] = first.emplace(f.step, f.startNs);
        if (!fresh) it->second = std::min(it->second, f.startNs);
      }
    std::vector<std::pair<int64_t, std::string>> order;
    for (const auto& [name, start] : first) order.emplace_back(start, name);
    std::sort(order.begin(), order.end());
    for (const auto& [start, name] : order) steps_ << qs(name);
    cellFigures_.assign(r.ranks.size(), std::vector<int>(steps_.size(), -1));
    for (size_t row = 0; row < r.figures.size() && row < r.ranks.size(); ++row)
      for (size_t k = 0; k < r.figures[row].size(); ++k) {
        const int col = columnOf(qs(r.figures[row][k].step));
        if (col >= 0) cellFigures_[row][static_cast<size_t>(col)] = static_cast<int>(k);
        maxNs_ = std::max(maxNs_, r.figures[row][k].waitForLastNs);
      }
    // "ProfilerStep#" once above the columns, "#5" in each.
    if (steps_.size() > 1) {
      QString p = steps_.front();
      for (const QString& s : steps_)
        while (!s.startsWith(p)) p.chop(1);
      const int hash = static_cast<int>(p.lastIndexOf(QLatin1Char('#')));
      stepPrefix_ = hash > 0 ? p.left(hash) : QString();
    }
    for (size_t si = 0; si < r.stragglers.size(); ++si) {
      const ranks::Straggler& s = r.stragglers[si];
      const int row = rowOfRank(s.rank);
      QStringList names;
      for (const std::string& st : s.steps) {
        names << qs(st);
        if (row >= 0 && columnOf(qs(st)) >= 0) marked_.insert({row, columnOf(qs(st))});
      }
      if (si > 0) continue;
      const QString cause = stragglerCause(s);
      title_ =
          tr("Straggler: rank %1 on %2, %3 late (median)%4%5")
              .arg(s.rank)
              .arg(names.join(QStringLiteral(", ")), ms(s.lateNs),
                   cause.isEmpty() ? QString() : QStringLiteral(", ") + cause,
                   r.stragglers.size() > 1 ? tr("; %1 more in the findings").arg(r.stragglers.size() - 1) : QString());
    }
    if (title_.isEmpty() && !r.hangs.empty()) {
      const ranks::Hang& h = r.hangs.front();
      QStringList missing, waiting;
      for (int64_t m : h.missingRanks) missing << QString::number(m);
      for (int64_t w : h.waitingRanks) waiting << QString::number(w);
      title_ = tr("No straggler, a hang: rank(s) %1 never issued %2; rank(s) %3 waited %4 in %5")
                   .arg(missing.join(QStringLiteral(", ")), qs(h.collective), waiting.join(QStringLiteral(", ")),
                        ms(h.waitedNs), qs(h.blockedIn));
    }
    if (title_.isEmpty() && !r.ranks.empty())
      title_ = r.matched.empty() ? tr("No collective matched across the ranks: no waiting to show.")
                                 : tr("No straggler: no rank kept the others waiting.");
  }
  updateGeometry();
  update();
}

int JobHeatMap::rows() const { return report_ ? static_cast<int>(report_->ranks.size()) : 0; }

int JobHeatMap::rowOfRank(int64_t rank) const {
  if (!report_) return -1;
  for (size_t i = 0; i < report_->ranks.size(); ++i)
    if (report_->ranks[i].rank == rank) return static_cast<int>(i);
  return -1;
}

const ranks::StepFigures* JobHeatMap::figures(int row, int column) const {
  if (!report_ || row < 0 || column < 0 || row >= rows() || column >= columns()) return nullptr;
  const int k = cellFigures_[static_cast<size_t>(row)][static_cast<size_t>(column)];
  return k < 0 ? nullptr : &report_->figures[static_cast<size_t>(row)][static_cast<size_t>(k)];
}

int JobHeatMap::headerHeight() const {
  const QFontMetrics fm(font());
  const int titleH =
      title_.isEmpty()
          ? 0
          : fm.boundingRect(QRect(0, 0, std::max(100, width() - 2 * kMargin), 1000), Qt::TextWordWrap, title_).height();
  return kMargin + titleH + 6 + fm.height() + 4 + fm.height() + 4;  // title, caption, column labels
}

JobHeatMap::Geometry JobHeatMap::geometryNow() const {
  const QFontMetrics fm(font());
  Geometry g;
  g.left = kMargin + fm.horizontalAdvance(QStringLiteral("rank 0000")) + 8;
  g.top = headerHeight();
  const int legendH = 3 * fm.height() + 26;
  const int cols = std::max(1, columns()), rws = std::max(1, rows());
  g.cellW = std::clamp((width() - g.left - kMargin) / cols, kMinCellW, kMaxCellW);
  g.cellH = std::clamp((height() - g.top - legendH - kMargin) / rws, kMinCellH, kMaxCellH);
  return g;
}

QRect JobHeatMap::cellRect(int row, int column) const {
  const Geometry g = geometryNow();
  return QRect(g.left + column * g.cellW, g.top + row * g.cellH, g.cellW, g.cellH);
}

std::optional<std::pair<int, int>> JobHeatMap::cellAt(QPoint pos) const {
  const Geometry g = geometryNow();
  if (pos.x() < g.left || pos.y() < g.top) return std::nullopt;
  const int col = (pos.x() - g.left) / g.cellW, row = (pos.y() - g.top) / g.cellH;
  if (row >= rows() || col >= columns()) return std::nullopt;
  return std::make_pair(row, col);
}

QColor JobHeatMap::colorOf(int64_t waitNs) const {
  const double t = maxNs_ > 0 ? std::clamp(static_cast<double>(waitNs) / static_cast<double>(maxNs_), 0.0, 1.0) : 0.0;
  for (size_t i = 1; i < std::size(kStops); ++i)
    if (t <= kStops[i].first)
      return mix(kStops[i - 1].second, kStops[i].second,
                 (t - kStops[i - 1].first) / (kStops[i].first - kStops[i - 1].first));
  return kStops[std::size(kStops) - 1].second;
}

QString JobHeatMap::toolTipAt(QPoint pos) const {
  const auto cell = cellAt(pos);
  if (!cell || !report_) return {};
  const auto [row, col] = *cell;
  const int64_t rank = report_->ranks[static_cast<size_t>(row)].rank;
  const ranks::StepFigures* f = figures(row, col);
  if (!f) return tr("rank %1 · %2: this rank has no such step").arg(rank).arg(steps_[col]);
  QStringList lines;
  lines << tr("<b>rank %1 · %2</b>").arg(rank).arg(steps_[col].toHtmlEscaped());
  lines << tr("waited %1 for the last rank to arrive (over %2 collective(s))")
               .arg(ms(f->waitForLastNs))
               .arg(f->collectives);
  if (f->arrivedLast > 0) lines << tr("arrived last, keeping the others waiting, in %1 of them").arg(f->arrivedLast);
  lines << tr("step %1 · compute %2 · communication %3 exposed, %4 overlapped")
               .arg(ms(f->stepNs), ms(f->computeNs), ms(f->exposedCommNs), ms(f->overlappedCommNs));
  if (!f->causeLabel.empty())
    lines << tr("its own top cause: %1 (%2)").arg(qs(f->causeLabel).toHtmlEscaped(), ms(f->causeNs));
  if (marked(row, col)) lines << tr("<i>straggler: the others waited for this rank here</i>");
  return lines.join(QStringLiteral("<br>"));
}

void JobHeatMap::select(int row, int column) {
  selected_ = {row, column};
  update();
  if (report_ && row >= 0 && row < rows() && column >= 0 && column < columns())
    emit cellSelected(report_->ranks[static_cast<size_t>(row)].rank, steps_[column]);
}

QSize JobHeatMap::sizeHint() const {
  const QFontMetrics fm(font());
  const int left = kMargin + fm.horizontalAdvance(QStringLiteral("rank 0000")) + 8;
  return QSize(std::max(left + std::max(1, columns()) * 80 + kMargin, legendWidth()),
               4 * fm.height() + 30 + std::max(1, rows()) * 28 + 3 * fm.height() + 26);
}

QSize JobHeatMap::minimumSizeHint() const {
  const QFontMetrics fm(font());
  const int left = kMargin + fm.horizontalAdvance(QStringLiteral("rank 0000")) + 8;
  return QSize(left + std::max(1, columns()) * kMinCellW + kMargin,
               headerHeight() + std::max(1, rows()) * kMinCellH + 3 * fm.height() + 26 + kMargin);
}

void JobHeatMap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  const QFontMetrics fm(font());
  if (!report_ || rows() == 0) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("Open a job (File > Open Job…) to see its ranks."));
    return;
  }
  const Geometry g = geometryNow();
  int y = kMargin;
  if (!title_.isEmpty()) {
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.setPen(report_->stragglers.empty() && report_->hangs.empty() ? palette().color(QPalette::Text)
                                                                   : QColor(0x86, 0x1c, 0x17));
    const QRect tr_(kMargin, y, width() - 2 * kMargin, 1000);
    const QRect used = p.boundingRect(tr_, Qt::TextWordWrap, title_);
    p.drawText(tr_, Qt::TextWordWrap, title_);
    y += used.height() + 6;
    p.setFont(font());
  }
  p.setPen(palette().color(QPalette::Text));
  const QString caption = stepPrefix_.isEmpty() ? tr("steps") : tr("steps (%1#)").arg(stepPrefix_);
  p.drawText(QRect(g.left, y, width() - g.left, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, caption);
  y += fm.height() + 4;
  for (int c = 0; c < columns(); ++c) {
    const QString label = stepPrefix_.isEmpty() ? steps_[c] : steps_[c].mid(stepPrefix_.size());
    p.drawText(QRect(g.left + c * g.cellW, y, g.cellW, fm.height()), Qt::AlignCenter,
               fm.elidedText(label, Qt::ElideMiddle, g.cellW - 4));
  }
  for (int r = 0; r < rows(); ++r) {
    const QRect lr(kMargin, g.top + r * g.cellH, g.left - kMargin - 6, g.cellH);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(lr, Qt::AlignRight | Qt::AlignVCenter, tr("rank %1").arg(report_->ranks[static_cast<size_t>(r)].rank));
    for (int c = 0; c < columns(); ++c) {
      const QRect cell = cellRect(r, c).adjusted(1, 1, -1, -1);
      const ranks::StepFigures* f = figures(r, c);
      if (!f) {
        p.fillRect(cell, QBrush(QColor(0xdd, 0xdd, 0xdd), Qt::BDiagPattern));
        continue;
      }
      const QColor fill = colorOf(f->waitForLastNs);
      p.fillRect(cell, fill);
      p.setPen(fill.lightnessF() < 0.5 ? Qt::white : QColor(0x20, 0x20, 0x20));
      const QString text = msNumber(f->waitForLastNs);
      if (fm.horizontalAdvance(text) + 4 < cell.width() && fm.height() <= cell.height())
        p.drawText(cell, Qt::AlignCenter, text);
    }
  }
  // Outlines over the fills: the straggler's cells, then the selection.
  p.setBrush(Qt::NoBrush);
  for (const auto& [r, c] : marked_) {
    p.setPen(QPen(kStragglerLine, 3));
    p.drawRect(cellRect(r, c).adjusted(2, 2, -2, -2));
  }
  if (selected_.first >= 0 && selected_.second >= 0) {
    p.setPen(QPen(kSelectedLine, 2, Qt::DashLine));
    p.drawRect(cellRect(selected_.first, selected_.second).adjusted(4, 4, -4, -4));
  }
  // The legend: what the colours mean, in milliseconds; then the outlines.
  int ly = g.top + rows() * g.cellH + 10;
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QPoint(kMargin, ly + fm.ascent()), legendCaption());
  ly += fm.height() + 6;
  int x = kMargin;
  const QString zero = QStringLiteral("0");
  p.drawText(QPoint(x, ly + fm.ascent()), zero);
  x += fm.horizontalAdvance(zero) + 4;
  const QRect bar(x, ly + 2, 160, fm.height() - 4);
  QLinearGradient grad(bar.topLeft(), bar.topRight());
  for (const auto& [at, colour] : kStops) grad.setColorAt(at, colour);
  p.fillRect(bar, grad);
  p.setPen(QColor(0x99, 0x99, 0x99));
  p.drawRect(bar);
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QPoint(bar.right() + 5, ly + fm.ascent()), tr("%1 ms").arg(msNumber(maxNs_)));
  ly += fm.height() + 6;
  x = kMargin;
  const QRect swatch(x, ly + 1, 22, fm.height() - 2);
  p.setPen(QPen(kStragglerLine, 3));
  p.drawRect(swatch.adjusted(1, 1, -1, -1));
  p.setPen(palette().color(QPalette::Text));
  x = swatch.right() + 6;
  const QString strag = tr("straggler: the others waited for it");
  p.drawText(QPoint(x, ly + fm.ascent()), strag);
  x += fm.horizontalAdvance(strag) + 18;
  const QRect sel(x, ly + 1, 22, fm.height() - 2);
  p.setPen(QPen(kSelectedLine, 2, Qt::DashLine));
  p.drawRect(sel.adjusted(1, 1, -1, -1));
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QPoint(sel.right() + 6, ly + fm.ascent()), tr("selected"));
}

QString JobHeatMap::legendCaption() const {
  return tr("Colour: how long each rank waited for the last rank to arrive in the step (ms)");
}

int JobHeatMap::legendWidth() const {
  const QFontMetrics fm(font());
  return kMargin +
         std::max(fm.horizontalAdvance(legendCaption()),
                  22 + 6 + fm.horizontalAdvance(tr("straggler: the others waited for it")) + 18 + 22 + 6 +
                      fm.horizontalAdvance(tr("selected"))) +
         kMargin;
}

void JobHeatMap::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return QWidget::mousePressEvent(e);
  if (const auto cell = cellAt(e->position().toPoint())) select(cell->first, cell->second);
}

bool JobHeatMap::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QString tip = toolTipAt(help->pos());
    if (tip.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), tip, this);
    return true;
  }
  return QWidget::event(e);
}

}  // namespace attnscope::ui
