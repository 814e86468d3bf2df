#include "ui/ranks/collectives_model.h"

#include <algorithm>
#include <limits>

#include "ui/common/text.h"

namespace attnscope::ui {

namespace {

int64_t applied(const ranks::JobReport& r, size_t rankIndex) {
  return rankIndex < r.clock.ranks.size() ? r.clock.ranks[rankIndex].appliedNs : 0;
}

QString ranksText(const std::vector<int64_t>& v) {
  QStringList s;
  for (int64_t x : v) s << QString::number(x);
  return s.join(QStringLiteral(", "));
}

QString methodWords(const std::string& m) {
  if (m == "comms_id") return QObject::tr("matched by Comms Id");
  if (m == "pg_seq") return QObject::tr("matched by group and Seq");
  return QObject::tr("matched by order in its group");
}

QString ms(int64_t ns) { return qs(spanDurationText(ns)); }

}  // namespace

void CollectivesModel::setReport(std::shared_ptr<const ranks::JobReport> report, int64_t originNs) {
  beginResetModel();
  report_ = std::move(report);
  originNs_ = originNs;
  endResetModel();
}

int CollectivesModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !report_) return 0;
  return static_cast<int>(report_->matched.size() + report_->unmatched.size());
}

QVariant CollectivesModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  static const char* titles[kColumns] = {"Group",        "#",    "Collective", "Step",    "First arrival",
                                         "Last arrival", "Skew", "Last in",    "Late by", "Ends spread",
                                         "Matched"};
  static const char* tips[kColumns] = {
      "The process group (inferred: from the order its worker threads were made)",
      "Its place in its group, in the order the ranks issued them",
      "The collective and its tensors' sizes",
      "The step it was issued in on most ranks",
      "When the first rank arrived (started taking part), from the job's start, on the aligned clock",
      "When the last rank arrived, from the job's start, on the aligned clock",
      "Last arrival minus first arrival: how long the first rank waited",
      "The rank that arrived last",
      "The last rank's arrival after the median arrival of the others",
      "Latest end minus earliest end on the aligned clock (a few microseconds on one host when the clocks agree)",
      "How it was matched across the ranks, or why it was not"};
  if (section < 0 || section >= kColumns) return {};
  if (role == Qt::DisplayRole) return tr(titles[section]);
  if (role == Qt::ToolTipRole) return tr(tips[section]);
  if (role == Qt::TextAlignmentRole && section >= FirstArrival && section <= EndSpread && section != LastRank)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QString CollectivesModel::stepOf(int row) const {
  if (!report_ || row < 0 || row >= rowCount()) return {};
  if (isMatched(row)) return qs(report_->matched[static_cast<size_t>(row)].step);
  const auto& u = report_->unmatched[static_cast<size_t>(row) - report_->matched.size()];
  for (const ranks::Part& p : u.parts) {
    const ranks::RankSummary& s = report_->ranks[p.first];
    const int step = s.collectives[p.second].step;
    if (step >= 0) return qs(s.steps[static_cast<size_t>(step)].name);
  }
  return {};
}

std::pair<int64_t, int64_t> CollectivesModel::alignedRange(int row) const {
  if (!report_ || row < 0 || row >= rowCount()) return {0, 0};
  const std::vector<ranks::Part>& parts =
      isMatched(row) ? report_->matched[static_cast<size_t>(row)].parts
                     : report_->unmatched[static_cast<size_t>(row) - report_->matched.size()].parts;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const ranks::Part& p : parts) {
    const ranks::Collective& c = report_->ranks[p.first].collectives[p.second];
    const int64_t off = applied(*report_, p.first);
    lo = std::min({lo, c.issueNs - off, c.arrivalNs - off});
    hi = std::max(hi, c.endNs - off);
  }
  if (lo > hi) return {0, 0};
  return {lo, hi};
}

QVariant CollectivesModel::cell(int row, int col, int role) const {
  const ranks::JobReport& r = *report_;
  const bool sort = role == SortRole;
  if (role != Qt::DisplayRole && !sort && role != Qt::ToolTipRole && role != Qt::TextAlignmentRole) return {};
  if (role == Qt::TextAlignmentRole)
    return col >= FirstArrival && col <= EndSpread && col != LastRank
               ? QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter)
               : QVariant();
  if (isMatched(row)) {
    const ranks::MatchedCollective& m = r.matched[static_cast<size_t>(row)];
    if (role == Qt::ToolTipRole) {
      // Each rank's arrival after the first one.
      QStringList lines{tr("Arrivals after the first (aligned clock):")};
      for (const ranks::Part& p : m.parts) {
        const ranks::Collective& c = r.ranks[p.first].collectives[p.second];
        lines << tr("rank %1: +%2")
                     .arg(r.ranks[p.first].rank)
                     .arg(ms(c.arrivalNs - applied(r, p.first) - m.firstArrivalNs));
      }
      return lines.join(QLatin1Char('\n'));
    }
    auto time = [&](int64_t ns) -> QVariant { return sort ? QVariant(qlonglong(ns)) : QVariant(ms(ns)); };
    switch (col) {
      case Group:
        return qs(m.pg) + (m.pgInferred && !sort ? tr(" (inferred)") : QString());
      case Index:
        return sort ? QVariant(m.index) : QVariant(QString::number(m.index));
      case Name:
        return qs(m.name) + (m.dims.empty() ? QString() : QStringLiteral(" ") + qs(m.dims));
      case Step:
        return qs(m.step);
      case FirstArrival:
        return time(m.firstArrivalNs - originNs_);
      case LastArrival:
        return time(m.lastArrivalNs - originNs_);
      case Skew:
        return time(m.lastArrivalNs - m.firstArrivalNs);
      case LastRank:
        return sort ? QVariant(qlonglong(m.lastRank)) : QVariant(tr("rank %1").arg(m.lastRank));
      case LateBy:
        return time(m.lateNs);
      case EndSpread:
        return time(m.endSpreadNs);
      case Status:
        return methodWords(m.method) + (m.straggled && !sort ? tr("; straggled") : QString());
      default:
        return {};
    }
  }
  const ranks::UnmatchedCollective& u = r.unmatched[static_cast<size_t>(row) - r.matched.size()];
  if (role == Qt::ToolTipRole)
    return tr("In the traces of rank(s) %1; not of %2").arg(ranksText(u.presentRanks), ranksText(u.missingRanks));
  switch (col) {
    case Group:
      return qs(u.pg);
    case Index:
      return sort ? QVariant(u.index) : QVariant(QString::number(u.index));
    case Name:
      return qs(u.name) + (u.dims.empty() ? QString() : QStringLiteral(" ") + qs(u.dims));
    case Step:
      return stepOf(row);
    case Status:
      if (u.reason == "missing") return tr("not matched: never issued on rank(s) %1").arg(ranksText(u.missingRanks));
      if (u.reason == "outside_window")
        return tr("not matched: rank(s) %1's trace ends before it").arg(ranksText(u.missingRanks));
      return tr("not matched: rank(s) %1 issued something else").arg(ranksText(u.missingRanks));
    default:
      // No arrivals to compare: "—", below every matched row when a figure column is sorted largest first.
      return sort ? QVariant(qlonglong(-1)) : QVariant(QStringLiteral("—"));
  }
}

}  // namespace attnscope::ui
