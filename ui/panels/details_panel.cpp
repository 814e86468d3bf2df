#include "ui/panels/details_panel.h"

#include <QLocale>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include "core/tables/attribution.h"
#include "ui/common/loaded_trace.h"
#include "ui/common/text.h"

namespace attnscope::ui {
namespace {

constexpr size_t kMaxListed = 20;

QString kindInWords(Family f) {
  switch (f) {
    case Family::CpuOp:
      return QObject::tr("op (cpu_op)");
    case Family::UserAnnotation:
      return QObject::tr("record_function scope (user_annotation)");
    case Family::GpuUserAnnotation:
      return QObject::tr("a scope's device-side span (gpu_user_annotation)");
    case Family::CudaRuntime:
      return QObject::tr("CUDA runtime call");
    case Family::CudaDriver:
      return QObject::tr("CUDA driver call");
    case Family::Kernel:
      return QObject::tr("kernel");
    case Family::GpuMemcpy:
      return QObject::tr("copy (memcpy)");
    case Family::GpuMemset:
      return QObject::tr("memset");
    case Family::CudaSync:
      return QObject::tr("CUDA synchronization record");
    case Family::Overhead:
      return QObject::tr("the profiler's own work (overhead)");
    case Family::PythonFunction:
      return QObject::tr("Python frame");
    case Family::CpuInstant:
      return QObject::tr("instant event");
    case Family::Memory:
      return QObject::tr("memory (de)allocation");
    default:
      return qs(familyName(f));
  }
}

}  // namespace

DetailsPanel::DetailsPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("detailsPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  text_ = new QTextBrowser(this);
  text_->setObjectName(QStringLiteral("detailsText"));
  text_->setOpenLinks(false);
  text_->setPlaceholderText(tr("Click an event on the timeline for its details and links."));
  layout->addWidget(text_);
  connect(text_, &QTextBrowser::anchorClicked, this, [this](const QUrl& u) {
    const QString s = u.toString();
    if (s.startsWith(QLatin1String("event:"))) emit eventRequested(static_cast<EventId>(s.mid(6).toULongLong()));
  });
}

void DetailsPanel::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  trace_ = std::move(trace);
  showDetailsOf(kNoEvent);
}

void DetailsPanel::showDetailsOf(EventId id) {
  shown_ = trace_ && id < trace_->store().events().size() ? id : kNoEvent;
  if (shown_ == kNoEvent)
    text_->clear();
  else
    text_->setHtml(html(shown_));
}

QString DetailsPanel::plainText() const { return text_->toPlainText(); }

QString DetailsPanel::html(EventId id) const {
  const EventStore& s = trace_->store();
  const Event& e = s.event(id);
  auto link = [&](EventId other) {
    return QStringLiteral("<a href=\"event:%1\">%2</a>")
        .arg(other)
        .arg(qs(s.name(s.event(other))).left(120).toHtmlEscaped());
  };
  auto row = [](const QString& key, const QString& value) {
    return QStringLiteral("<tr><td style=\"color:#555; padding-right:10px\">%1</td><td>%2</td></tr>").arg(key, value);
  };
  QString h = QStringLiteral("<h3>%1</h3><table>").arg(qs(s.name(e)).toHtmlEscaped());
  h += row(tr("Kind"), kindInWords(e.family));
  h += row(tr("Where"), qs(s.lanes()[e.lane].label).toHtmlEscaped());
  h += row(tr("Starts"), tr("%1 after the trace's start").arg(durationQ(e.start - s.minTime())));
  h += row(tr("Duration"), durationQ(e.dur));
  if (e.correlation > 0) h += row(tr("Correlation id"), QString::number(e.correlation));
  if (e.externalId > 0) h += row(tr("External id"), QString::number(e.externalId));
  if (const auto a = s.argsOf(e)) {
    if (a->inputDims) h += row(tr("Input shapes"), qs(s.str(a->inputDims)).toHtmlEscaped());
    if (a->inputTypes) h += row(tr("Input types"), qs(s.str(a->inputTypes)).toHtmlEscaped());
    if (a->concreteInputs) h += row(tr("Concrete inputs"), qs(s.str(a->concreteInputs)).toHtmlEscaped());
    if (a->device >= 0) h += row(tr("Device"), QString::number(a->device));
    if (a->stream >= 0) h += row(tr("Stream"), QString::number(a->stream));
    if (a->grid[0])
      h += row(tr("Grid · block"), QStringLiteral("[%1, %2, %3] · [%4, %5, %6]")
                                       .arg(a->grid[0])
                                       .arg(a->grid[1])
                                       .arg(a->grid[2])
                                       .arg(a->block[0])
                                       .arg(a->block[1])
                                       .arg(a->block[2]));
    if (a->bytes) h += row(tr("Bytes"), QLocale().toString(static_cast<qlonglong>(a->bytes)));
    if (a->totalAllocated >= 0)
      h += row(tr("Total allocated"), QLocale().toString(static_cast<qlonglong>(a->totalAllocated)));
    if (a->totalReserved >= 0)
      h += row(tr("Total reserved"), QLocale().toString(static_cast<qlonglong>(a->totalReserved)));
    if (a->sequenceNumber >= 0) h += row(tr("Sequence number"), QString::number(a->sequenceNumber));
  }
  h += QStringLiteral("</table>");

  QStringList links;
  if (isGpuWork(e.family)) {
    const GpuOwner o = gpuOwner(s, id);
    if (o.launch != kNoEvent)
      links << tr("Launched by %1, %2 before it started")
                   .arg(link(o.launch), durationQ(e.start - s.event(o.launch).start));
    else
      links << tr("No runtime call launched it in this trace (queued before the profile began, or not recorded).");
    if (o.op != kNoEvent) links << tr("Its op: %1").arg(link(o.op));
  }
  if ((e.family == Family::CudaRuntime || e.family == Family::CudaDriver) && e.correlation > 0) {
    size_t n = 0;
    for (EventId g : s.byCorrelation(e.correlation)) {
      if (!isGpuWork(s.event(g).family)) continue;
      if (n++ < kMaxListed)
        links << tr("Launched %1 (%2), which started %3 later")
                     .arg(link(g), durationQ(s.event(g).dur), durationQ(s.event(g).start - e.start));
    }
    if (n > kMaxListed) links << tr("and %1 more GPU activities").arg(n - kMaxListed);
  }
  QStringList chain;
  for (EventId p = e.parent; p != kNoEvent; p = s.event(p).parent) chain.prepend(link(p));
  if (!chain.isEmpty()) links << tr("Inside %1").arg(chain.join(QStringLiteral(" &rsaquo; ")));
  size_t flows = 0;
  for (const Link& l : s.links()) {
    if (l.from != id && l.to != id) continue;
    if (flows++ >= kMaxListed) continue;
    const EventId other = l.from == id ? l.to : l.from;
    links << (l.from == id ? tr("Flow %1 to %2") : tr("Flow %1 from %2")).arg(l.id).arg(link(other));
  }
  if (const Explanation* an = trace_->snapshot->explanation.get()) {
    for (const SyncWait& w : an->syncWaits) {
      if (w.ev == id) {
        QStringList awaited;
        for (size_t k = 0; k < w.awaited.size() && k < kMaxListed; ++k) awaited << link(w.awaited[k].gpu);
        links << (awaited.isEmpty() ? tr("A sync wait: nothing queued before it was still running.")
                                    : tr("A sync wait for %1").arg(awaited.join(QStringLiteral(", "))));
      }
      for (const Awaited& aw : w.awaited)
        if (aw.gpu == id)
          links << tr("Waited for by %1 (%2, from %3 after the wait began)")
                       .arg(link(w.ev), durationQ(w.durNs), durationQ(std::max<int64_t>(0, aw.gpuEndNs - w.startNs)));
    }
  }
  if (!links.isEmpty())
    h += tr("<h4>Links</h4><ul style=\"margin-left:-20px\"><li>%1</li></ul>")
             .arg(links.join(QStringLiteral("</li><li>")));
  return h;
}

}  // namespace attnscope::ui
