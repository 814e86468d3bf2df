#include "ui/panels/explain_panel.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QTextDocumentFragment>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <map>

#include "core/explain/thresholds.h"
#include "core/run/engine_run.h"
#include "core/snapshot/answer_table.h"
#include "core/snapshot/trace_snapshot.h"
#include "ui/common/text.h"
#include "ui/panels/steps_model.h"
#include "ui/table/sort_header_view.h"

namespace attnscope::ui {
namespace {

QString t(int64_t ns) { return qs(spanDurationText(ns)); }

// HTML-escaped, with break opportunities inside long identifiers (kernel
// names have no spaces) so a line never grows wider than the dock.
QString breakable(const QString& text) {
  QString out = text.toHtmlEscaped();
  for (const char* c : {"_", "/", ",", "::", "("}) {
    const QString from = QString::fromLatin1(c);
    out.replace(from, from + QChar(0x200B));
  }
  return out;
}

QString badge(const QString& text, const char* color) {
  return QStringLiteral("<span style=\"background:%1; color:white;\">&nbsp;%2&nbsp;</span>")
      .arg(QLatin1String(color), text.toHtmlEscaped());
}

QString glossaryLinks(const std::vector<std::string>& keys) {
  QString links;
  for (const std::string& g : keys)
    links += QStringLiteral(" <a href=\"gloss:%1\">[%2]</a>")
                 .arg(QString::fromLatin1(QUrl::toPercentEncoding(qs(g))), qs(g).toHtmlEscaped());
  return links;
}

QString verdictItem(const Verdict& v, bool withStep) {
  const QString step =
      withStep && !v.step.empty() ? QStringLiteral("<b>%1</b>: ").arg(breakable(qs(v.step))) : QString();
  return QStringLiteral("<li>%1%2%3</li>").arg(step, breakable(qs(v.text)), glossaryLinks(v.glossary));
}

QString sourceInWords(const std::string& source) {
  if (source == "profiler_steps") return QObject::tr("torch.profiler's ProfilerStep#N");
  if (source == "engine") return QObject::tr("the engine's step windows");
  if (source == "annotations") return QObject::tr("the record_function scopes (and the ops between them)");
  if (source == "whole_trace") return QObject::tr("the whole trace (nothing in it is annotated)");
  return QObject::tr("nothing (no CPU thread)");
}

}  // namespace

ExplainPanel::ExplainPanel(QWidget* parent)
    : QWidget(parent), model_(new StepsModel(this)), proxy_(new QSortFilterProxyModel(this)) {
  setObjectName(QStringLiteral("explainPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  header_ = new QLabel(tr("Open a trace to see its steps explained."), this);
  header_->setObjectName(QStringLiteral("explainHeader"));
  header_->setWordWrap(true);
  header_->setTextFormat(Qt::RichText);
  layout->addWidget(header_);

  auto* split = split_ = new QSplitter(Qt::Vertical, this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(TableModelBase::SortRole);
  view_ = new QTableView(split);
  view_->setObjectName(QStringLiteral("stepsTable"));
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  useSortableTable(view_);
  view_->sortByColumn(StepsModel::Step, Qt::AscendingOrder);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setAlternatingRowColors(true);
  view_->setWordWrap(false);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view_->horizontalHeader()->setStretchLastSection(false);
  details_ = new QTextBrowser(split);
  details_->setObjectName(QStringLiteral("explainDetails"));
  details_->setOpenLinks(false);
  split->addWidget(view_);
  split->addWidget(details_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  layout->addWidget(split, 1);

  connect(details_, &QTextBrowser::anchorClicked, this, [this](const QUrl& u) {
    const QString s = u.toString();
    if (s.startsWith(QLatin1String("gloss:"))) emit glossaryRequested(QUrl::fromPercentEncoding(s.mid(6).toUtf8()));
    if (s.startsWith(QLatin1String("step:"))) {
      const int step = s.mid(5).toInt();
      showStep(step);
      emit stepChosen(step);
    }
    if (s == QLatin1String("overview:")) {
      showStep(-1);
      view_->clearSelection();
    }
  });
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (selecting_ || !cur.isValid()) return;
    const int step = proxy_->data(cur, StepsModel::StepIndexRole).toInt();
    showStep(step);
    emit stepChosen(step);
  });
}

// A wide, short dock puts the steps and the findings side by side; a tall one stacks them.
void ExplainPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  const Qt::Orientation want = width() > 2 * height() ? Qt::Horizontal : Qt::Vertical;
  if (split_->orientation() != want) split_->setOrientation(want);
  fitStepColumns();
}

// Side by side, the steps table gets the width of its first three columns (step, host time, what
// cost it most), up to 55% of the panel: the answer per step is read without scrolling.
void ExplainPanel::fitStepColumns() {
  if (split_->orientation() != Qt::Horizontal) return;
  const int total = split_->width() - split_->handleWidth();
  if (total <= 0) return;
  int want = 2 * view_->frameWidth() + view_->verticalScrollBar()->sizeHint().width();
  for (int c = StepsModel::Step; c <= StepsModel::CostMost; ++c) want += view_->horizontalHeader()->sectionSize(c);
  const int left = std::clamp(want, total * 3 / 10, total * 55 / 100);
  split_->setSizes({left, total - left});
}

void ExplainPanel::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  trace_ = std::move(trace);
  const Explanation* an = explanation();
  model_->setExplanation(an ? trace_->snapshot->explanation : nullptr);
  shown_ = -1;
  if (!an) {
    header_->setText(trace_ ? tr("This trace has no explanation.") : tr("No trace."));
    details_->clear();
    emit explained();
    return;
  }
  const Ledger& l = an->ledger;
  QString head = tr("<b>%1 step(s)</b>, from %2. GPU activity: %3 in %4 records")
                     .arg(an->steps.size())
                     .arg(sourceInWords(an->stepSource), t(l.gpuActivitySumNs))
                     .arg(l.gpuActivities);
  if (l.timing == "cupti" || l.timing == "roctracer")
    head += tr("; torch's Self CUDA total %1, every torch row added up %2, by launch (corrected) %3.")
                .arg(t(l.torchSelfDeviceTotalNs), t(l.torchSelfDeviceAllRowsNs), t(l.correctedSelfDeviceNs));
  else
    head += QStringLiteral(".");
  if (!an->partial.empty())
    head += QStringLiteral("<br><span style=\"color:#8a1c14\">%1</span>")
                .arg(tr("This trace was cut (%1): work recorded after the cut is missing.")
                         .arg(qs(an->partial).toHtmlEscaped()));
  // The headline opens the dock: what costs the user most, with its number and fix; on an engine run on
  // the CPU, where every step is "CPU only", what the run shows instead (the founding answer's).
  const FoundingAnswer* fa = trace_->snapshot->answer.get();
  const std::string& headline = fa && fa->cpuRun && !fa->headline.empty() ? fa->headline : an->diagnosis.headline;
  if (!headline.empty()) head = QStringLiteral("<b>%1</b><br>").arg(breakable(qs(headline))) + head;
  view_->setColumnHidden(StepsModel::CostMost, model_->costMostSaysNothing());
  header_->setText(head);
  details_->setHtml(overviewHtml());
  view_->resizeColumnsToContents();
  fitStepColumns();
  emit explained();
}

void ExplainPanel::showStep(int step) {
  if (!explanation()) return;
  if (step < 0 || step >= static_cast<int>(explanation()->steps.size())) {
    shown_ = -1;
    details_->setHtml(overviewHtml());
    return;
  }
  shown_ = step;
  details_->setHtml(stepHtml(step));
  // Select its row without reporting the selection as the user's.
  selecting_ = true;
  for (int r = 0; r < proxy_->rowCount(); ++r) {
    if (proxy_->data(proxy_->index(r, 0), StepsModel::StepIndexRole).toInt() != step) continue;
    view_->selectionModel()->setCurrentIndex(proxy_->index(r, 0),
                                             QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    view_->scrollTo(proxy_->index(r, 0));
  }
  selecting_ = false;
}

QString ExplainPanel::answerHtml() const {
  const std::optional<AnswerTable> table = answerTable(*trace_->snapshot);
  if (!table) return {};
  const Explanation& an = *explanation();
  const EventStore& s = *trace_->snapshot->store;
  auto stepLink = [](int k, const QString& text) {
    return QStringLiteral("<a href=\"step:%1\">%2</a>").arg(k).arg(text);
  };
  const bool cpuRun = table->cpuRun;
  QString html =
      (cpuRun ? tr("<h3>The answer</h3><p>This run was on the CPU: there is no CUDA time to measure, only the "
                   "steps' host time (click a number for the step on the timeline):</p>")
              : tr("<h3>The answer</h3><p>The four steps' CUDA time, by every way this trace can measure it "
                   "(click a number for the step on the timeline):</p>")) +
      QStringLiteral(
          "<table cellspacing=\"0\" cellpadding=\"3\" "
          "border=\"1\" style=\"border-collapse:collapse\"><tr><th>Step</th>");
  for (const AnswerColumn& c : table->columns) html += QStringLiteral("<th>%1</th>").arg(qs(c.title).toHtmlEscaped());
  html += QStringLiteral("</tr>");
  for (int k = 0; k < kStepCount; ++k) {
    const auto i = static_cast<size_t>(k);
    html += QStringLiteral("<tr><td>%1%2</td>")
                .arg(stepLink(k, qs(table->steps[i]).toHtmlEscaped()),
                     table->wrapped[i] ? QString() : tr(" (not wrapped)"));
    for (const AnswerColumn& c : table->columns) {
      const QString spread = qs(answerCellSpread(c, i));
      const QString cell = qs(answerCellText(c, i));
      html +=
          QStringLiteral("<td align=\"right\">%1%2</td>")
              .arg(c.ns[i] < 0 ? cell : stepLink(k, cell),
                   spread.isEmpty() ? QString() : QStringLiteral("<br><small>%1</small>").arg(spread.toHtmlEscaped()));
    }
    html += QStringLiteral("</tr>");
  }
  html += QStringLiteral("</table>");
  if (table->hasInflation)
    html +=
        tr("<p><small>A step costs its host time with no profiler (the host clock column). What the same step "
           "takes under a profiler on top of that is the profiler's own work (recording ops, timestamps, "
           "buffers), not the step's cost.</small></p>");
  if (!an.runNotes.empty()) {
    html += tr("<p><small>What the run recorded:");
    for (const std::string& n : an.runNotes) html += QStringLiteral("<br>") + qs(n).toHtmlEscaped();
    html += QStringLiteral("</small></p>");
  }

  // The four questions, with this trace's numbers.
  const StepReport& qk = an.steps[0];
  const StepReport& scale = an.steps[1];
  const SyncWait* scaleWait = nullptr;
  for (int w : scale.syncWaits)
    if (!scaleWait || an.syncWaits[static_cast<size_t>(w)].durNs > scaleWait->durNs)
      scaleWait = &an.syncWaits[static_cast<size_t>(w)];
  QStringList unwrapped;
  for (size_t k = 0; k < 4; ++k) {
    const StepReport& st = an.steps[k];
    if (st.wrapped || st.launches.empty()) continue;
    std::map<std::string, int64_t> byOp;
    for (const Launch& l : st.launches)
      byOp[l.op == kNoEvent ? "(no op)" : std::string(s.name(s.event(l.op)))] += l.gpuEndNs - l.gpuStartNs;
    QStringList ops;
    for (const auto& [op, ns] : byOp) ops << QStringLiteral("%1 (%2)").arg(qs(op).toHtmlEscaped(), t(ns));
    unwrapped << tr("%1 launched %2 of GPU work, which torch's table shows under %3")
                     .arg(qs(st.name), t(st.gpuAttributedNs), ops.join(QStringLiteral(", ")));
  }
  html += tr("<h4>Why does a step's CUDA time change when I wrap another step?</h4>");
  QString q1 = tr("Wrapping a step in record_function adds a scope around it on the CPU (and, with use_cuda=True, two "
                  "CUDA events); it adds no synchronization: this trace has %1 synchronizing call(s), none from a "
                  "record_function. The kernels each step launches run for the same time either way. ")
                   .arg(an.syncWaits.size());
  if (scaleWait)
    q1 += tr("What moves is host time: SCALE's %1 blocked the CPU for %2 here, waiting for work queued before it "
             "(the QK MATMUL GEMM); how long it waits depends on how much host time passed since that GEMM was "
             "queued, which every added record_function changes. With CUDA-event timing the events' positions in "
             "the GPU queue move with it.")
              .arg(qs(scaleWait->api).toHtmlEscaped(), t(scaleWait->durNs));
  else
    q1 += tr("What moves is host time, and with CUDA-event timing the events' positions in the GPU queue.");
  html += QStringLiteral("<p>%1</p>").arg(q1);
  html += tr("<h4>Are the unwrapped steps really zero?</h4>");
  html += unwrapped.isEmpty()
              ? tr("<p>Every step is wrapped in this trace.</p>")
              : tr("<p>No. %1. A step without a record_function has no row of its own, so its CUDA time shows under "
                   "the ops that launched its kernels, not as zero.</p>")
                    .arg(unwrapped.join(QStringLiteral("; ")));
  html += tr("<h4>How do I get every step's CUDA time?</h4><p>Add up the GPU time of the kernels each step launched, "
             "found by correlation from the runtime call inside the step to its kernel: the first column above "
             "(%1 for QK MATMUL). In torch's own table, wrap each step in record_function and read its CUDA total; "
             "in this table, the corrected attribution makes every kernel Self CUDA of the op that launched it. A "
             "host timer around a step without a sync measures launch cost only.</p>")
              .arg(t(qk.gpuAttributedNs));
  QStringList events;
  auto has = [&](std::string_view name) {
    uint32_t id = 0;
    return s.strings().find(name, &id);
  };
  if (has("cudaLaunchKernel"))
    events << tr("<b>cudaLaunchKernel</b>: the CPU queues a kernel and returns at once; the kernel runs later");
  if (scaleWait)
    events << tr("<b>%1</b>: the CPU waits for everything queued before it to finish")
                  .arg(qs(scaleWait->api).toHtmlEscaped());
  if (s.familyCount(Family::GpuUserAnnotation))
    events << tr(
        "<b>a scope's GPU span</b> (gpu_user_annotation): from its first kernel's start to its last one's end, "
        "which torch counts whole as that row's Self CUDA");
  if (has("Activity Buffer Request"))
    events << tr(
        "<b>Activity Buffer Request</b>: the profiler's own work (not the model's); torch's table also lets it "
        "own the kernel that was running when it happened");
  if (an.ledger.timing == "cuda_events")
    events << tr(
        "<b>cudaEventRecord</b>: a CUDA event; use_cuda=True records one at every op's start and end and "
        "reports the GPU time between them");
  if (!events.isEmpty())
    html += tr("<h4>What do the events mean?</h4><ul style=\"margin-left:-20px\"><li>%1</li></ul>")
                .arg(events.join(QStringLiteral("</li><li>")));
  return html;
}

// A long name shortened for a narrow pane: a kernel's signature without "void ", its template
// arguments ("<…>"), anonymous namespaces and its argument list ("(…)"); anything still long cut at
// 60 characters.
QString shortName(const std::string& name) {
  QString n = qs(name);
  if (n.size() <= 48) return n;
  if (n.startsWith(QStringLiteral("void "))) n = n.mid(5);
  n.remove(QStringLiteral("(anonymous namespace)::"));
  QString out;
  int angle = 0;
  for (qsizetype i = 0; i < n.size(); ++i) {
    const QChar c = n[i];
    if (c == QLatin1Char('<')) {
      if (angle++ == 0) out += QStringLiteral("<…>");
      continue;
    }
    if (c == QLatin1Char('>') && angle > 0) {
      --angle;
      continue;
    }
    if (angle > 0) continue;
    // A kernel's argument list at the end.
    if (c == QLatin1Char('(') && n.endsWith(QLatin1Char(')')) && i > 8) {
      out += QStringLiteral("(…)");
      break;
    }
    out += c;
  }
  return out.size() > 60 ? out.left(57) + QStringLiteral("…") : out;
}

// The diagnosis (the headline opens the dock above it): every cause with its time, share and spread
// over the steps, what holds its time (the evidence: count, time, share of the cause, the ops around
// allocator calls and copies, a copy's direction and sizes, the module or frame), and the fixes the
// trace supports, each with what held; a cause with no fix says so. The same figures `attnscope-cli
// explain` prints.
QString ExplainPanel::diagnosisHtml() const {
  const Diagnosis& d = explanation()->diagnosis;
  if (d.causes.empty()) return {};
  QString html = tr("<h3>What costs the most</h3>");
  for (const PeriodicWork& p : d.periodic) html += QStringLiteral("<p><b>%1</b></p>").arg(breakable(qs(p.text)));
  for (const std::string& n : d.notes) html += QStringLiteral("<p><i>%1</i></p>").arg(breakable(qs(n)));
  html += QStringLiteral("<ol style=\"margin-left:-20px\">");
  for (const DiagnosedCause& c : d.causes) {
    // The cause in words (its JSON code on pointing), its time and share, the spread over the steps.
    html += QStringLiteral("<li><span title=\"%1\"><b>%2</b></span> %3 (%4%)")
                .arg(qs(causeCode(c.code)), qs(c.label).toHtmlEscaped(), t(c.totalNs))
                .arg(100.0 * c.share, 0, 'f', 0);
    if (d.steps.size() > 1)
      html += tr(" <small>%1 a step [p10 %2 – p90 %3]</small>")
                  .arg(t(std::llround(c.perStep.medianNs)), t(std::llround(c.perStep.p10Ns)),
                       t(std::llround(c.perStep.p90Ns)));
    for (const std::string& h : c.hints) html += QStringLiteral(" <i>(%1)</i>").arg(qs(h).toHtmlEscaped());
    for (size_t k = 0; k < c.items.size() && k < 3; ++k) {
      const EvidenceItem& it = c.items[k];
      QString line = QStringLiteral("%1%2 — %3 (%4%)")
                         .arg(it.count > 0 ? QStringLiteral("%1 × ").arg(it.count) : QString(),
                              breakable(shortName(it.name)), t(it.ns))
                         .arg(100.0 * it.share, 0, 'f', 0);
      if (it.kind == "queued") line += tr(", launched and waiting to start");
      if (!it.inside.empty()) line += tr(", inside %1").arg(breakable(qs(it.inside.front().first)));

      if (!it.detail.empty()) line += QStringLiteral("; %1").arg(breakable(qs(it.detail)));
      if (!it.where.empty()) line += tr("; in %1").arg(breakable(qs(it.where)));
      html += QStringLiteral("<br><small>%1</small>").arg(line);
    }
    if (c.fixes.empty()) html += tr("<br><i>No fix follows from the trace alone.</i>");
    for (const Fix& f : c.fixes)
      html += QStringLiteral("<br>&rarr; <b>%1</b> <small>(%2)</small>")
                  .arg(breakable(qs(f.text)), tr("because %1").arg(breakable(qs(f.because))));
    html += QStringLiteral("</li>");
  }
  return html + QStringLiteral("</ol>");
}

QString ExplainPanel::overviewHtml() const {
  const Explanation& an = *explanation();
  // The attention workload's answer leads its runs; the diagnosis follows it (and leads any other trace).
  QString html = answerHtml() + diagnosisHtml();
  // A recorded script's notes (an engine run's are in its answer): how it was recorded, how it ended,
  // what the profiler added.
  if (trace_->snapshot->record && !an.runNotes.empty()) {
    html += tr("<p><small>What the run recorded:");
    for (const std::string& n : an.runNotes) html += QStringLiteral("<br>") + qs(n).toHtmlEscaped();
    html += QStringLiteral("</small></p>");
  }
  // Ranked findings, bounded like `explain`'s text.
  std::map<std::string, size_t> perStep;
  size_t traceCount = 0;
  QString items, glossary;
  size_t shown = 0;
  for (const Verdict& v : an.verdicts) {
    if (v.step.empty() ? traceCount++ >= kMaxTraceFindings : perStep[v.step]++ >= kMaxFindingsPerStep) continue;
    if (v.kind == "glossary") {
      glossary += verdictItem(v, false);
      continue;
    }
    items += verdictItem(v, true);
    ++shown;
  }
  html += tr("<h3>Findings</h3><p style=\"color:#555\">%1 of %2, the most time at stake first. Select a step above "
             "for its card.</p><ul style=\"margin-left:-20px\">%3</ul>")
              .arg(shown)
              .arg(an.verdicts.size())
              .arg(items);
  if (!an.syncGroups.empty()) {
    html += tr("<h3>Sync waits by cause</h3><ul style=\"margin-left:-20px\">");
    for (size_t i = 0; i < an.syncGroups.size() && i < 10; ++i) {
      const SyncGroup& g = an.syncGroups[i];
      QString awaited;
      for (const auto& [name, ns] : g.awaitedTop)
        awaited += (awaited.isEmpty() ? QString() : QStringLiteral(", ")) + breakable(qs(name).left(80)) +
                   QStringLiteral(" (") + t(ns) + QStringLiteral(")");
      html += tr("<li><b>%1 wait(s), %2</b> (longest %3). Op chain: %4%5</li>")
                  .arg(g.count)
                  .arg(t(g.totalNs), t(g.maxNs), breakable(qs(g.key)),
                       awaited.isEmpty() ? QString() : tr("; waited for %1").arg(awaited));
    }
    if (an.syncGroups.size() > 10) html += tr("<li>and %1 more causes</li>").arg(an.syncGroups.size() - 10);
    html += QStringLiteral("</ul>");
  }
  const Ledger& l = an.ledger;
  if (l.torchGapNs != 0) {
    html += tr("<h3>torch's total vs the GPU</h3><p>torch's Self CUDA total is %1 more than the GPU activities:</p><ul "
               "style=\"margin-left:-20px\">")
                .arg(t(l.torchGapNs));
    for (const GapCause& c : l.torchGapCauses) html += QStringLiteral("<li>%1</li>").arg(qs(c.text).toHtmlEscaped());
    html += QStringLiteral("</ul>");
  }
  if (!glossary.isEmpty())
    html += tr("<h3>Names in this trace</h3><ul style=\"margin-left:-20px\">%1</ul>").arg(glossary);
  return html;
}

QString ExplainPanel::stepHtml(int step) const {
  const Explanation& an = *explanation();
  const EventStore& s = trace_->store();
  const StepReport& st = an.steps[static_cast<size_t>(step)];
  QString html = QStringLiteral("<p><a href=\"overview:\">%1</a></p>").arg(tr("◀ all findings"));
  html += QStringLiteral("<h3>%1 &nbsp;%2</h3>")
              .arg(breakable(qs(st.name)),
                   st.wrapped ? badge(tr("record_function"), "#1565c0") : badge(tr("not wrapped"), "#757575"));
  QStringList facts;
  facts << tr("Host window: <b>%1</b>").arg(t(st.hostNs()));
  if (st.launches.empty()) {
    facts << tr("Launched no GPU work.");
  } else {
    QString split;
    for (auto [name, ns] : {std::pair{tr("kernels"), st.kernelNs}, std::pair{tr("copies"), st.memcpyNs},
                            std::pair{tr("memsets"), st.memsetNs}, std::pair{tr("communication"), st.communicationNs}})
      if (ns) split += (split.isEmpty() ? QString() : QStringLiteral(", ")) + name + QStringLiteral(" ") + t(ns);
    facts << tr("Launched %1 GPU activit%2: <b>%3</b> of GPU time (%4)")
                 .arg(st.launches.size())
                 .arg(st.launches.size() == 1 ? QStringLiteral("y") : QStringLiteral("ies"))
                 .arg(t(st.gpuAttributedNs), split);
    if (st.gpuEndNs > st.hostEndNs)
      facts << tr("Its GPU work ran from %1 after the step started to %2 after it ended on the host: a host timer "
                  "around it does not see that time.")
                   .arg(t(std::max<int64_t>(0, st.gpuStartNs - st.hostStartNs)), t(st.gpuEndNs - st.hostEndNs));
    else
      facts << tr("Its GPU work finished inside the host window.");
    if (st.graphLaunches) facts << tr("%1 of them ran from CUDA graph replays.").arg(st.graphLaunches);
  }
  facts << tr("GPU busy inside the host window (anyone's work): %1; idle %2")
               .arg(t(st.gpuBusyInHostWindowNs), t(st.idleNs));
  if (st.eventNs) facts << tr("CUDA-event time: %1").arg(t(*st.eventNs));
  if (st.cudaEventRecords) facts << tr("cudaEventRecord calls in the window: %1").arg(st.cudaEventRecords);
  if (st.spillOutNs) facts << tr("Spill out: %1 of its work ran after its window closed.").arg(t(st.spillOutNs));
  if (st.spillInNs) facts << tr("Spill in: %1 of earlier steps' work ran inside its window.").arg(t(st.spillInNs));
  html += QStringLiteral("<p>") + facts.join(QStringLiteral("<br>")) + QStringLiteral("</p>");
  if (!st.syncWaits.empty()) {
    html += tr("<h4>Sync waits (%1, %2)</h4><ul style=\"margin-left:-20px\">")
                .arg(st.syncWaits.size())
                .arg(t(st.syncWaitNs));
    for (size_t k = 0; k < st.syncWaits.size() && k < 20; ++k) {
      const SyncWait& w = an.syncWaits[static_cast<size_t>(st.syncWaits[k])];
      QStringList chain;
      for (const std::string& c : w.opChain) chain << breakable(qs(c));
      QStringList awaited;
      for (size_t i = 0; i < w.awaited.size() && i < 5; ++i) {
        const Awaited& aw = w.awaited[i];
        awaited << tr("%1 (%2, queued %3 before the wait)")
                       .arg(breakable(qs(s.name(s.event(aw.gpu))).left(90)), t(aw.gpuEndNs - aw.gpuStartNs),
                            t(w.startNs - aw.queuedNs));
      }
      html += tr("<li>%1 blocked the host for <b>%2</b>. Op chain: %3.%4</li>")
                  .arg(breakable(qs(w.api)), t(w.durNs), chain.join(QStringLiteral(" &rsaquo; ")),
                       awaited.isEmpty() ? tr(" No GPU work was running while it waited.")
                                         : tr(" It waited for %1.").arg(awaited.join(QStringLiteral("; "))));
    }
    if (st.syncWaits.size() > 20) html += tr("<li>and %1 more</li>").arg(st.syncWaits.size() - 20);
    html += QStringLiteral("</ul>");
  }
  if (!st.regions.empty()) {
    html += tr("<h4>Regions</h4><ul style=\"margin-left:-20px\">");
    for (size_t k = 0; k < st.regions.size() && k < 30; ++k) {
      const Region& r = st.regions[k];
      html += tr("<li>%1: host %2, launched %3 GPU activities, %4</li>")
                  .arg(breakable(qs(r.name)), t(r.hostEndNs - r.hostStartNs))
                  .arg(r.launches)
                  .arg(t(r.gpuAttributedNs));
    }
    if (st.regions.size() > 30) html += tr("<li>and %1 more</li>").arg(st.regions.size() - 30);
    html += QStringLiteral("</ul>");
  }
  QString items;
  size_t n = 0;
  for (const Verdict& v : an.verdicts)
    if (v.step == st.name && n++ < kMaxFindingsPerStep) items += verdictItem(v, false);
  if (!items.isEmpty()) html += tr("<h4>Findings</h4><ul style=\"margin-left:-20px\">%1</ul>").arg(items);
  return html;
}

QString ExplainPanel::plainText() const {
  QStringList parts{QTextDocumentFragment::fromHtml(header_->text()).toPlainText()};
  for (int r = 0; r < proxy_->rowCount(); ++r) {
    QStringList cells;
    for (int c = 0; c < proxy_->columnCount(); ++c) cells << proxy_->index(r, c).data().toString();
    parts << cells.join(QLatin1Char('\t'));
  }
  parts << details_->toPlainText();
  return parts.join(QLatin1Char('\n')).remove(QChar(0x200B));  // the break opportunities are not text
}

}  // namespace attnscope::ui
