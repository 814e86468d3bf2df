#include "ui/panels/explain_panel.h"
#include "ui/common/text.h"

#include <QFrame>
#include <QGridLayout>
#include <QLabel>
#include <QPalette>
#include <QScrollArea>
#include <QTextDocumentFragment>
#include <QVBoxLayout>

namespace attnscope::ui {
namespace {

// HTML-escaped, with break opportunities inside long identifiers (kernel
// names have no spaces) so a card never grows wider than its dock.
QString breakable(const QString& text) {
  QString out = text.toHtmlEscaped();
  for (const char* c : {"_", "/", ",", "::", "("}) {
    const QString from = QString::fromLatin1(c);
    out.replace(from, from + QChar(0x200B));
  }
  return out;
}

QLabel* wrapLabel(const QString& html, QWidget* parent) {
  auto* l = new QLabel(html, parent);
  l->setWordWrap(true);
  l->setTextFormat(Qt::RichText);
  l->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  return l;
}

QFrame* card(QWidget* parent) {
  auto* f = new QFrame(parent);
  f->setObjectName(QStringLiteral("card"));
  f->setFrameShape(QFrame::StyledPanel);
  f->setAutoFillBackground(true);
  f->setBackgroundRole(QPalette::Base);
  return f;
}

QString badge(const QString& text, const char* color) {
  return QStringLiteral("<span style=\"background:%1; color:white;\">&nbsp;%2&nbsp;</span>")
      .arg(QLatin1String(color), text.toHtmlEscaped());
}

QString verdictList(const std::vector<const Verdict*>& vs) {
  if (vs.empty()) return {};
  QString html = QStringLiteral("<ul style=\"margin-left:-20px\">");
  for (const Verdict* v : vs) {
    QString links;
    for (const std::string& g : v->glossary)
      links += QStringLiteral(" <a href=\"%1\">[%2]</a>").arg(qs(g).toHtmlEscaped(), qs(g).toHtmlEscaped());
    html += QStringLiteral("<li>%1%2</li>").arg(breakable(qs(v->text)), links);
  }
  return html + QStringLiteral("</ul>");
}

}  // namespace

ExplainPanel::ExplainPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("explainPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  header_ = new QLabel(tr("Open a trace to see its steps explained."), this);
  header_->setWordWrap(true);
  header_->setTextFormat(Qt::RichText);
  layout->addWidget(header_);
  scroll_ = new QScrollArea(this);
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  cards_ = new QWidget(scroll_);
  cardsLayout_ = new QVBoxLayout(cards_);
  cardsLayout_->setContentsMargins(0, 0, 0, 0);
  cardsLayout_->setSpacing(8);
  cardsLayout_->addStretch(1);
  scroll_->setWidget(cards_);
  layout->addWidget(scroll_, 1);
}

void ExplainPanel::clearCards() {
  while (cardsLayout_->count() > 1) {
    QLayoutItem* item = cardsLayout_->takeAt(0);
    delete item->widget();
    delete item;
  }
}

QWidget* ExplainPanel::stepCard(const EventStore& s, const Explanation& a, const StepReport& st) {
  QFrame* f = card(cards_);
  auto* g = new QVBoxLayout(f);
  g->setContentsMargins(8, 6, 8, 6);
  g->setSpacing(3);
  const int64_t host = st.hostEndNs - st.hostStartNs;
  QString title = QStringLiteral("<b>%1</b> &nbsp;%2")
                      .arg(breakable(qs(st.name)),
                           st.wrapped ? badge(tr("record_function"), "#1565c0") : badge(tr("not wrapped"), "#757575"));
  g->addWidget(wrapLabel(title, f));
  QStringList facts;
  facts << tr("Host window: <b>%1</b>").arg(usQ(host));
  if (st.launches.empty()) {
    facts << tr("Launched no GPU work.");
  } else {
    int kernels = 0;
    for (const Launch& l : st.launches)
      if (l.gpu != kNoEvent && s.event(l.gpu).family == Family::Kernel) ++kernels;
    facts << tr("Launched %1 GPU activit%2 (%3 kernel%4): <b>%5</b> of GPU time")
                 .arg(st.launches.size())
                 .arg(st.launches.size() == 1 ? QStringLiteral("y") : QStringLiteral("ies"))
                 .arg(kernels)
                 .arg(kernels == 1 ? QString() : QStringLiteral("s"))
                 .arg(usQ(st.gpuAttributedNs));
    if (st.gpuEndNs > st.hostEndNs) {
      facts << tr("Its GPU work ran from %1 after the step started to %2 after it ended on the "
                  "host: a host timer around it does not see that time.")
                   .arg(usQ(std::max<int64_t>(0, st.gpuStartNs - st.hostStartNs)), usQ(st.gpuEndNs - st.hostEndNs));
    } else {
      facts << tr("Its GPU work finished inside the host window.");
    }
  }
  facts << tr("GPU busy inside the host window (anyone's work): %1").arg(usQ(st.gpuBusyInHostWindowNs));
  if (st.eventNs) facts << tr("CUDA-event time: %1").arg(usQ(*st.eventNs));
  if (st.cudaEventRecords) facts << tr("cudaEventRecord calls in the window: %1").arg(st.cudaEventRecords);
  for (int w : st.syncWaits) {
    if (w < 0 || static_cast<size_t>(w) >= a.syncWaits.size()) continue;
    const SyncWait& sw = a.syncWaits[static_cast<size_t>(w)];
    facts << tr("Waited <b>%1</b> in %2 (see sync wait %3 below)").arg(usQ(sw.durNs), qs(sw.api)).arg(w + 1);
  }
  QString html = QStringLiteral("<div>") + facts.join(QStringLiteral("<br>")) + QStringLiteral("</div>");
  std::vector<const Verdict*> vs;
  for (const Verdict& v : a.verdicts)
    if (v.step == st.name) vs.push_back(&v);
  html += verdictList(vs);
  auto* body = wrapLabel(html, f);
  connect(body, &QLabel::linkActivated, this, &ExplainPanel::glossaryRequested);
  g->addWidget(body);
  return f;
}

QWidget* ExplainPanel::syncCard(const EventStore& s, const SyncWait& w, int index) {
  QFrame* f = card(cards_);
  auto* g = new QVBoxLayout(f);
  g->setContentsMargins(8, 6, 8, 6);
  QStringList chain;
  for (const std::string& c : w.opChain) chain << breakable(qs(c));
  QString issuer;
  if (w.issuer == "op")
    issuer = tr("issued inside an op");
  else if (w.issuer == "profiler")
    issuer = tr("issued by the profiler itself");
  else if (w.issuer == "user")
    issuer = tr("issued by the user's code");
  else
    issuer = tr("issuer unknown");
  QString html = tr("<b>Sync wait %1</b> %2<br>%3 blocked the host for <b>%4</b> (%5).<br>"
                    "Op chain: %6")
                     .arg(index + 1)
                     .arg(badge(tr("sync"), "#b26a00"), qs(w.api).toHtmlEscaped(), usQ(w.durNs), issuer,
                          chain.join(QStringLiteral(" &rsaquo; ")));
  if (w.awaited.empty()) {
    html += tr("<br>No GPU work was running while it waited.");
  } else {
    int64_t total = 0;
    QStringList items;
    for (const Awaited& aw : w.awaited) {
      const int64_t during = std::max<int64_t>(0, aw.gpuEndNs - std::max(aw.gpuStartNs, w.startNs));
      total += during;
      QString name = aw.gpu == kNoEvent ? QStringLiteral("?") : qs(s.name(s.event(aw.gpu)));
      if (name.size() > 90) name = name.left(87) + QStringLiteral("…");
      items << tr("%1 (%2, queued %3 before the wait)")
                   .arg(breakable(name), usQ(aw.gpuEndNs - aw.gpuStartNs), usQ(w.startNs - aw.queuedNs));
    }
    html += tr("<br>It waited for %1 GPU activit%2 queued before it (%3 of it while waiting):<ul "
               "style=\"margin-left:-20px\"><li>%4</li></ul>")
                .arg(w.awaited.size())
                .arg(w.awaited.size() == 1 ? QStringLiteral("y") : QStringLiteral("ies"))
                .arg(usQ(total))
                .arg(items.join(QStringLiteral("</li><li>")));
  }
  auto* l = wrapLabel(html, f);
  g->addWidget(l);
  return f;
}

void ExplainPanel::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  clearCards();
  trace_ = std::move(trace);
  if (!trace_ || !trace_->snapshot->explanation) {
    header_->setText(trace_ ? tr("This trace has no explanation.") : tr("No trace."));
    emit explained();
    return;
  }
  const EventStore& store = trace_->store();
  const Explanation& an = *trace_->snapshot->explanation;
  const Ledger& l = an.ledger;
  QString source;
  if (an.stepSource == "engine")
    source = tr("the engine's step windows");
  else if (an.stepSource == "annotations")
    source = tr("the record_function scopes");
  else if (an.stepSource == "top_level_ops")
    source = tr("the top-level ops");
  else
    source = tr("nothing (no steps found)");
  header_->setText(
      tr("%1 steps, from %2. GPU activity: %3 in %4 records; torch's Self CUDA total "
         "%5, every torch row added up %6, corrected %7.")
          .arg(an.steps.size())
          .arg(source, usQ(l.gpuActivitySumNs))
          .arg(l.gpuActivities)
          .arg(usQ(l.torchSelfDeviceTotalNs), usQ(l.torchSelfDeviceAllRowsNs), usQ(l.correctedSelfDeviceNs)));
  int pos = 0;
  for (const StepReport& st : an.steps) cardsLayout_->insertWidget(pos++, stepCard(store, an, st));
  for (size_t i = 0; i < an.syncWaits.size(); ++i)
    cardsLayout_->insertWidget(pos++, syncCard(store, an.syncWaits[i], static_cast<int>(i)));
  std::vector<const Verdict*> global;
  for (const Verdict& v : an.verdicts) {
    bool isStep = false;
    for (const StepReport& st : an.steps) isStep |= v.step == st.name;
    if (!isStep) global.push_back(&v);
  }
  if (!global.empty()) {
    QFrame* f = card(cards_);
    auto* g = new QVBoxLayout(f);
    g->setContentsMargins(8, 6, 8, 6);
    auto* lab = wrapLabel(tr("<b>Whole trace</b>") + verdictList(global), f);
    connect(lab, &QLabel::linkActivated, this, &ExplainPanel::glossaryRequested);
    g->addWidget(lab);
    cardsLayout_->insertWidget(pos++, f);
  }
  emit explained();
}

QString ExplainPanel::plainText() const {
  QStringList parts{header_->text()};
  for (QLabel* l : cards_->findChildren<QLabel*>()) {
    parts << QTextDocumentFragment::fromHtml(l->text()).toPlainText();
  }
  return parts.join(QLatin1Char('\n'));
}

}  // namespace attnscope::ui
