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
const QColor kCulprit(0x3b, 0x1f, 0x8f);  // a straggler's cell: the wait it imposed

// Light (no wait) to red (the longest wait): a sequential scale read at a glance, never as dark as a
// straggler's cell, so that the rank the others waited for is the darkest row, not its victims.
const std::pair<double, QColor> kStops[] = {{0.0, QColor(0xf3, 0xf5, 0xf7)},
                                            {0.25, QColor(0xfd, 0xe3, 0xb0)},
                                            {0.5, QColor(0xf8, 0xb8, 0x7a)},
                                            {0.75, QColor(0xf0, 0x8a, 0x5b)},
                                            {1.0, QColor(0xdc, 0x5a, 0x40)}};

QColor mix(const QColor& a, const QColor& b, double t) {
  auto m = [t](int x, int y) { return static_cast<int>(x + (y - x) * t + 0.5); };
  return QColor(m(a.red(), b.red()), m(a.green(), b.green()), m(a.blue(), b.blue()));
}

QString ms(int64_t ns) { return qs(spanDurationText(ns)); }

QString msNumber(int64_t ns) { return QString::number(static_cast<double>(ns) / 1e6, 'f', ns < 10'000'000 ? 1 : 0); }

QString stragglerCause(const ranks::Straggler& s) {
  if (s.cause == "slow_region")
    return QObject::tr("in %1 %2 (the others %3)").arg(qs(s.region), ms(s.regionNs), ms(s.othersRegionNs));
  if (s.cause == "untraced_host")
    return QObject::tr("%1 on the host outside any recorded op (the others %2)")
        .arg(ms(s.regionNs), ms(s.othersRegionNs));
  if (s.cause == "slow_work")
    return QObject::tr("its work before arriving took %1x the others'").arg(s.workRatio, 0, 'f', 1);
  if (s.cause == "late_start") return QObject::tr("its device started the collective late");
  if (s.cause == "slow_collective")
    return QObject::tr("its collective on group '%1' ran %2 (the other groups %3)")
        .arg(qs(s.group), ms(s.collectiveNs), ms(s.othersCollectiveNs));
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
  sets_.clear();
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
    // The scale's top: the longest wait, and at least a quarter of a step, so that a job's jitter (a
    // fraction of a millisecond) is not drawn as hot as a straggler would be.
    maxNs_ = std::max(maxNs_, r.medianStepNs / 4);
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
      SetMark set;
      for (int64_t rank : s.ranks)
        if (const int row = rowOfRank(rank); row >= 0) set.rows.push_back(row);
      std::sort(set.rows.begin(), set.rows.end());
      QStringList names;
      for (const std::string& st : s.steps) {
        names << qs(st);
        const int col = columnOf(qs(st));
        if (col < 0) continue;
        set.columns.push_back(col);
        for (int row : set.rows) marked_.insert({row, col});
      }
      if (set.rows.size() > 1) {
        set.name = !s.host.empty() && s.wholeHost ? qs(s.host) : tr("ranks %1").arg(qs(ranks::rankRuns(s.ranks)));
        sets_.push_back(std::move(set));
      }
      if (si > 0) continue;
      const QString cause = stragglerCause(s);
      QString steps = names.join(QStringLiteral(", "));
      if (!stepPrefix_.isEmpty()) steps.replace(QStringLiteral(", ") + stepPrefix_, QStringLiteral(", "));
      title_ =
          tr("Straggler: %1 on %2: every other rank waited %3 for %4 (median)%5%6")
              .arg(qs(s.who), steps, ms(s.lateNs), s.ranks.size() > 1 ? tr("them") : tr("it"),
                   cause.isEmpty() ? QString() : QStringLiteral("; ") + cause,
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

QColor JobHeatMap::culpritColor() { return kCulprit; }

int64_t JobHeatMap::imposedAt(int row, int column) const {
  const ranks::StepFigures* f = marked(row, column) ? figures(row, column) : nullptr;
  return f ? f->imposedNs : 0;
}

QString JobHeatMap::columnLabel(int column) const {
  if (column < 0 || column >= columns()) return {};
  return stepPrefix_.isEmpty() ? steps_[column] : steps_[column].mid(stepPrefix_.size());
}

int JobHeatMap::leftWidth() const {
  const QFontMetrics fm(font());
  return kMargin + fm.horizontalAdvance(QStringLiteral("rank 0000")) + 8 + (sets_.empty() ? 0 : 12);
}

bool JobHeatMap::uprightLabels() const {
  const QFontMetrics fm(font());
  const int cellW = std::clamp((width() - leftWidth() - kMargin) / std::max(1, columns()), kMinCellW, kMaxCellW);
  for (int c = 0; c < columns(); ++c)
    if (fm.horizontalAdvance(columnLabel(c)) + 6 > cellW) return true;
  return false;
}

int JobHeatMap::labelsHeight() const {
  const QFontMetrics fm(font());
  if (!uprightLabels()) return fm.height() + 4;
  int widest = 0;
  for (int c = 0; c < columns(); ++c) widest = std::max(widest, fm.horizontalAdvance(columnLabel(c)));
  return widest + 8;
}

int JobHeatMap::headerHeight() const {
  const QFontMetrics fm(font());
  const int titleH =
      title_.isEmpty()
          ? 0
          : fm.boundingRect(QRect(0, 0, std::max(100, width() - 2 * kMargin), 1000), Qt::TextWordWrap, title_).height();
  return kMargin + titleH + 6 + fm.height() + 4 + labelsHeight();  // title, caption, column labels
}

JobHeatMap::Geometry JobHeatMap::geometryNow() const {
  const QFontMetrics fm(font());
  Geometry g;
  g.left = leftWidth();
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
  const int row = cell->first, col = cell->second;  // not a structured binding: the lambda below reads row
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
  if (marked(row, col))
    lines << tr("<i>straggler: every other rank waited %1 for this rank%2 here</i>").arg(ms(imposedAt(row, col)), [&] {
      for (const SetMark& set : sets_)
        if (std::find(set.rows.begin(), set.rows.end(), row) != set.rows.end())
          return tr(" and the ranks late with it (%1)").arg(set.name);
      return QString();
    }());
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
  const int left = leftWidth();
  return QSize(std::max(left + std::max(1, columns()) * 80 + kMargin, legendWidth()),
               4 * fm.height() + 30 + std::max(1, rows()) * 28 + 3 * fm.height() + 26);
}

QSize JobHeatMap::minimumSizeHint() const {
  const QFontMetrics fm(font());
  const int left = leftWidth();
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
  const QString caption = stepPrefix_.isEmpty() ? tr("steps") : tr("steps (%1#…)").arg(stepPrefix_);
  p.drawText(QRect(g.left, y, width() - g.left, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, caption);
  y += fm.height() + 4;
  const bool upright = uprightLabels();
  const int labelsH = labelsHeight();
  for (int c = 0; c < columns(); ++c) {
    const QString label = columnLabel(c);
    if (!upright) {
      p.drawText(QRect(g.left + c * g.cellW, y, g.cellW, fm.height()), Qt::AlignCenter, label);
      continue;
    }
    // Upright, read from the bottom up, its end at the cells.
    p.save();
    p.translate(g.left + c * g.cellW + g.cellW / 2 + fm.ascent() / 2 - 1, y + labelsH - 4);
    p.rotate(-90);
    p.drawText(QPoint(0, 0), label);
    p.restore();
  }
  std::set<int> culpritRows;
  for (const auto& [r, c] : marked_) culpritRows.insert(r);
  QFont bold = font();
  bold.setBold(true);
  for (int r = 0; r < rows(); ++r) {
    const QRect lr(kMargin, g.top + r * g.cellH, g.left - kMargin - 6 - (sets_.empty() ? 0 : 12), g.cellH);
    const bool culprit = culpritRows.count(r) > 0;
    p.setFont(culprit ? bold : font());
    p.setPen(culprit ? kCulprit : palette().color(QPalette::Text));
    p.drawText(lr, Qt::AlignRight | Qt::AlignVCenter, tr("rank %1").arg(report_->ranks[static_cast<size_t>(r)].rank));
    for (int c = 0; c < columns(); ++c) {
      const QRect cell = cellRect(r, c).adjusted(1, 1, -1, -1);
      const ranks::StepFigures* f = figures(r, c);
      if (!f) {
        p.fillRect(cell, QBrush(QColor(0xdd, 0xdd, 0xdd), Qt::BDiagPattern));
        continue;
      }
      // A straggler's cell: the wait it imposed on every other rank; else the wait this rank bore.
      const bool held = marked(r, c);
      const QColor fill = held ? kCulprit : colorOf(f->waitForLastNs);
      p.fillRect(cell, fill);
      p.setFont(held ? bold : font());
      p.setPen(fill.lightnessF() < 0.5 ? Qt::white : QColor(0x20, 0x20, 0x20));
      const QString text = msNumber(held ? f->imposedNs : f->waitForLastNs);
      if (fm.horizontalAdvance(text) + 4 < cell.width() && fm.height() <= cell.height())
        p.drawText(cell, Qt::AlignCenter, text);
    }
  }
  p.setFont(font());
  // Outlines over the fills: each straggler's cells of a step as one block (a set's consecutive rows
  // together), a set's rows bracketed on the left; then the selection.
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(kStragglerLine, 3));
  std::set<std::pair<int, int>> drawn;
  for (const SetMark& set : sets_)
    for (int c : set.columns)
      for (size_t i = 0; i < set.rows.size();) {
        size_t j = i;
        while (j + 1 < set.rows.size() && set.rows[j + 1] == set.rows[j] + 1) ++j;
        const QRect top = cellRect(set.rows[i], c), bottom = cellRect(set.rows[j], c);
        p.drawRect(QRect(top.topLeft(), bottom.bottomRight()).adjusted(2, 2, -2, -2));
        for (size_t k = i; k <= j; ++k) drawn.insert({set.rows[k], c});
        i = j + 1;
      }
  for (const auto& [r, c] : marked_)
    if (!drawn.count({r, c})) p.drawRect(cellRect(r, c).adjusted(2, 2, -2, -2));
  for (const SetMark& set : sets_) {
    if (set.rows.empty()) continue;
    const int x = g.left - 8;
    const int y0 = cellRect(set.rows.front(), 0).top() + 3, y1 = cellRect(set.rows.back(), 0).bottom() - 3;
    p.setPen(QPen(kCulprit, 3));
    p.drawLine(x, y0, x, y1);
    for (int row : set.rows) {
      const int ym = cellRect(row, 0).center().y();
      p.drawLine(x, ym, x + 5, ym);
    }
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
  const QString top = tr("%1 ms waited for the last rank").arg(msNumber(maxNs_));
  p.drawText(QPoint(bar.right() + 5, ly + fm.ascent()), top);
  x = bar.right() + 5 + fm.horizontalAdvance(top) + 18;
  const QRect held(x, ly + 1, 22, fm.height() - 2);
  p.fillRect(held, kCulprit);
  p.drawText(QPoint(held.right() + 6, ly + fm.ascent()), heldCaption());
  ly += fm.height() + 6;
  x = kMargin;
  const QRect swatch(x, ly + 1, 22, fm.height() - 2);
  p.setPen(QPen(kStragglerLine, 3));
  p.drawRect(swatch.adjusted(1, 1, -1, -1));
  p.setPen(palette().color(QPalette::Text));
  x = swatch.right() + 6;
  const QString strag = tr("a straggler's steps (a set's ranks bracketed together)");
  p.drawText(QPoint(x, ly + fm.ascent()), strag);
  x += fm.horizontalAdvance(strag) + 18;
  const QRect sel(x, ly + 1, 22, fm.height() - 2);
  p.setPen(QPen(kSelectedLine, 2, Qt::DashLine));
  p.drawRect(sel.adjusted(1, 1, -1, -1));
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QPoint(sel.right() + 6, ly + fm.ascent()), tr("selected"));
}

QString JobHeatMap::heldCaption() const { return tr("the straggler: the wait it imposed (ms)"); }

QString JobHeatMap::legendCaption() const {
  return tr("Each cell: how long that rank waited for the last rank in the step (ms), or, dark, the straggler's");
}

int JobHeatMap::legendWidth() const {
  const QFontMetrics fm(font());
  return kMargin +
         std::max({fm.horizontalAdvance(legendCaption()),
                   fm.horizontalAdvance(QStringLiteral("0 ")) + 165 +
                       fm.horizontalAdvance(tr("%1 ms waited for the last rank").arg(msNumber(maxNs_))) + 18 + 28 +
                       fm.horizontalAdvance(heldCaption()),
                   22 + 6 + fm.horizontalAdvance(tr("a straggler's steps (a set's ranks bracketed together)")) + 18 +
                       22 + 6 + fm.horizontalAdvance(tr("selected"))}) +
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
