#include "ui/ranks/job_findings.h"

#include <QObject>
#include <QStringList>
#include <algorithm>
#include <vector>

#include "ui/common/text.h"

namespace attnscope::ui {

namespace {

QString ms(int64_t ns) { return qs(spanDurationText(ns)); }
QString signedMs(int64_t ns) { return (ns < 0 ? QStringLiteral("−") : QStringLiteral("+")) + ms(ns < 0 ? -ns : ns); }
QString esc(const std::string& s) { return qs(s).toHtmlEscaped(); }

QString ranksText(const std::vector<int64_t>& v) {
  QStringList s;
  for (int64_t x : v) s << QString::number(x);
  return s.join(QStringLiteral(", "));
}

int64_t quantile(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + static_cast<int64_t>((at - static_cast<double>(lo)) * static_cast<double>(v[hi] - v[lo]));
}

QString section(const QString& title) {
  return QStringLiteral("<p style='margin-top:8px; margin-bottom:2px'><b>%1</b></p>").arg(title.toHtmlEscaped());
}

QString list(const QStringList& items) {
  if (items.isEmpty()) return {};
  return QStringLiteral("<ul style='margin-top:0px; margin-left:-20px'><li>") +
         items.join(QStringLiteral("</li><li>")) + QStringLiteral("</li></ul>");
}

QString findingTitle(const std::string& kind) {
  if (kind == "missing_ranks") return QObject::tr("Missing ranks");
  if (kind == "duplicate_rank") return QObject::tr("A rank claimed twice");
  if (kind == "unknown_rank") return QObject::tr("No rank");
  if (kind == "mixed_job") return QObject::tr("Not one job");
  if (kind == "mismatch") return QObject::tr("Mismatch");
  if (kind == "two_jobs") return QObject::tr("More than one job");
  if (kind == "truncated") return QObject::tr("Truncated trace");
  if (kind == "late_ranks") return QObject::tr("Late ranks (one step)");
  if (kind == "missing_collective") return QObject::tr("Never issued");
  return QObject::tr("Note");
}

}  // namespace

QString jobSubtitle(const ranks::JobReport& r) {
  QStringList parts;
  parts << QObject::tr("%1 rank(s) read").arg(r.ranks.size()) +
               (r.worldSize > 0 ? QObject::tr(" of world size %1").arg(r.worldSize) : QString());
  if (!r.backend.empty()) parts << QObject::tr("backend %1").arg(qs(r.backend));
  std::vector<int64_t> steps;
  for (const auto& fs : r.figures)
    for (const ranks::StepFigures& f : fs) steps.push_back(f.stepNs);
  if (!steps.empty())
    parts << QObject::tr("step time %1 (median over ranks and steps; p10 %2, p90 %3)")
                 .arg(ms(quantile(steps, 0.5)), ms(quantile(steps, 0.1)), ms(quantile(steps, 0.9)));
  parts << (r.unmatched.empty()
                ? QObject::tr("%1 collective(s) matched on every rank").arg(r.matched.size())
                : QObject::tr("%1 collective(s) matched, %2 unmatched").arg(r.matched.size()).arg(r.unmatched.size()));
  return parts.join(QStringLiteral(" · "));
}

QString jobFindingsHtml(const ranks::JobReport& r) {
  QString html;
  // Stragglers, with what they were doing before they arrived.
  html += section(QObject::tr("Stragglers"));
  QStringList items;
  for (const ranks::Straggler& s : r.stragglers) {
    // Who in bold (one rank, or the set late together), then the finding as the CLI says it.
    const bool lead = s.text.rfind(s.who, 0) == 0;
    items << QStringLiteral("<b>%1</b>%2").arg(esc(s.who), esc(lead ? s.text.substr(s.who.size()) : ": " + s.text));
  }
  if (items.isEmpty())
    html += QObject::tr("<p style='margin-top:0px'>None: no rank kept the others waiting (%1).</p>")
                .arg(esc(r.stragglerRule));
  html += list(items);
  // Hangs: who never came.
  if (!r.hangs.empty()) {
    html += section(QObject::tr("Hangs"));
    items.clear();
    for (const ranks::Hang& h : r.hangs)
      items << QObject::tr("<b>missing rank(s): {%1}</b>; waiting: %2 for %3. %4")
                   .arg(ranksText(h.missingRanks), ranksText(h.waitingRanks), ms(h.waitedNs), esc(h.text));
    html += list(items);
  }
  // The clock: every offset with its uncertainty, applied or not.
  html += section(QObject::tr("Clock offsets"));
  html += QStringLiteral("<p style='margin-top:0px; margin-bottom:2px'>%1</p>").arg(esc(r.clock.method));
  items.clear();
  for (const ranks::RankClock& c : r.clock.ranks) {
    if (c.rank == r.clock.referenceRank) {
      items << QObject::tr("rank %1: the reference").arg(c.rank);
      continue;
    }
    const QString what = c.appliedNs != 0
                             ? QObject::tr("<b>applied</b>: its times are shifted by %1").arg(signedMs(-c.appliedNs))
                             : QObject::tr("within its uncertainty: not applied");
    items << QObject::tr("rank %1: %2 ± %3 (one collective's ends spread %4, from %5 collectives): %6")
                 .arg(c.rank)
                 .arg(signedMs(c.estimateNs), ms(c.uncertaintyNs), ms(c.spreadNs))
                 .arg(c.collectives)
                 .arg(what);
  }
  html += list(items);
  // Collectives.
  html += section(QObject::tr("Collectives"));
  html += QObject::tr(
              "<p style='margin-top:0px; margin-bottom:2px'>%1 matched on every rank of their group (%2); %3 "
              "not.</p>")
              .arg(r.matched.size())
              .arg(r.matchMethods.empty() ? QObject::tr("none") : esc(r.matchMethods))
              .arg(r.unmatched.size());
  items.clear();
  for (const ranks::UnmatchedCollective& u : r.unmatched) {
    if (items.size() >= 20) {
      items << QObject::tr("… and %1 more in the Collectives table").arg(r.unmatched.size() - 20);
      break;
    }
    const QString what = u.reason == "missing"          ? QObject::tr("never issued on rank(s) %1")
                         : u.reason == "outside_window" ? QObject::tr("rank(s) %1's trace ends before it")
                                                        : QObject::tr("rank(s) %1 issued something else");
    items << QObject::tr("%1 %2 #%3 on group '%4': %5")
                 .arg(esc(u.name), esc(u.dims))
                 .arg(u.index)
                 .arg(esc(u.pg), what.arg(ranksText(u.missingRanks)));
  }
  html += list(items);
  // What the files said: missing, doubled, mixed ranks, mismatches, notes.
  if (!r.findings.empty()) {
    html += section(QObject::tr("The job's files"));
    items.clear();
    for (const ranks::JobFinding& f : r.findings)
      items << QStringLiteral("<b>%1</b>: %2").arg(findingTitle(f.kind).toHtmlEscaped(), esc(f.text));
    html += list(items);
  }
  return html;
}

}  // namespace attnscope::ui
