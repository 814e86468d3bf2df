#include "ui/panels/why_panel.h"

#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include "core/explain/why.h"
#include "ui/common/background.h"
#include "ui/common/loaded_trace.h"
#include "ui/common/text.h"

namespace attnscope::ui {
namespace {

QString sectionTitle(const std::string& s) {
  if (s == "row") return QObject::tr("The row");
  if (s == "difference") return QObject::tr("Why torch's total differs");
  if (s == "own") return QObject::tr("Its own GPU work");
  if (s == "children") return QObject::tr("Its children's GPU work");
  if (s == "near") return QObject::tr("GPU work near it");
  if (s == "span") return QObject::tr("Device-side span");
  if (s == "launched_by") return QObject::tr("Launched by");
  if (s == "summary") return QObject::tr("In short");
  return qs(s);
}
}  // namespace

WhyPanel::WhyPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("whyPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  text_ = new QTextBrowser(this);
  text_->setObjectName(QStringLiteral("whyText"));
  text_->setOpenLinks(false);
  text_->setPlaceholderText(tr("Select a table row to see where its GPU time is, or why it is zero."));
  connect(text_, &QTextBrowser::anchorClicked, this, [this](const QUrl& u) { emit glossaryRequested(u.fragment()); });
  layout->addWidget(text_);
}

void WhyPanel::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  trace_ = std::move(trace);
  name_.clear();
  row_.reset();
  stale_ = false;
  ++generation_;
  text_->clear();
}

void WhyPanel::showRow(const KeyAverageRow& row, GroupBy groupBy, const QString& glossaryText) {
  const QString name = qs(row.inputShapes.empty() ? row.name : row.name + " " + row.inputShapes);
  if (row_ && name == name_ && groupBy == groupBy_ && !stale_) return;
  row_ = row;
  groupBy_ = groupBy;
  name_ = name;
  glossary_ = glossaryText;
  stale_ = true;
  refresh();
}

void WhyPanel::showRow(const QString& name, const QString& glossaryText) {
  if (!row_ && name == name_ && glossaryText == glossary_ && !stale_) return;
  row_.reset();
  name_ = name;
  glossary_ = glossaryText;
  stale_ = true;
  refresh();
}

void WhyPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refresh();
}

void WhyPanel::setOnScreen(bool on) {
  onScreen_ = on;
  refresh();
}

void WhyPanel::refresh() {
  if (!stale_ || !onScreen_ || !isVisible()) return;  // made when the panel is seen
  stale_ = false;
  const quint64 gen = ++generation_;
  if (!trace_ || name_.isEmpty()) {
    text_->clear();
    emit shown();
    return;
  }
  ++reports_;
  runInBackground(
      this,
      [trace = trace_, name = name_.toStdString(), row = row_, groupBy = groupBy_] {
        return row ? whyTableRow(*trace->snapshot, *row, groupBy) : whyRow(*trace->snapshot, name);
      },
      [this, gen, name = name_, gloss = glossary_](WhyReport r) {
        if (gen != generation_) return;  // a newer row or trace
        QString html = QStringLiteral("<h3>%1</h3>").arg(name.toHtmlEscaped());
        if (!r.found) html += tr("<p>No event in this trace has that name.</p>");
        for (const WhyItem& it : r.items)
          html += QStringLiteral("<p><b>%1.</b> %2</p>").arg(sectionTitle(it.section), qs(it.text).toHtmlEscaped());
        if (!gloss.isEmpty())
          html += QStringLiteral("<hr><p><i>%1</i> <a href=\"#%2\">%3</a></p>")
                      .arg(gloss.toHtmlEscaped(), QString::fromLatin1(QUrl::toPercentEncoding(name)), tr("(glossary)"));
        text_->setHtml(html);
        emit shown();
      },
      [this, gen, name = name_](const QString& what) {
        if (gen != generation_) return;
        text_->setHtml(QStringLiteral("<h3>%1</h3><p style=\"color:#8a1c14\">%2</p>")
                           .arg(name.toHtmlEscaped(), tr("Why could not be worked out: %1").arg(what).toHtmlEscaped()));
        emit shown();
      });
}

QString WhyPanel::plainText() const { return text_->toPlainText(); }

}  // namespace attnscope::ui
