#include "ui/timeline/timeline_pane.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/common/loaded_trace.h"
#include "ui/common/text.h"

namespace attnscope::ui {
namespace {

QString swatch(const QColor& c, const QString& text, bool hatched = false) {
  return QStringLiteral("<span style=\"background:%1; color:%1;%3\">&nbsp;&nbsp;&nbsp;</span>&nbsp;%2")
      .arg(c.name(), text, hatched ? QStringLiteral(" border:1px solid #c62828;") : QString());
}

}  // namespace

TimelinePane::TimelinePane(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(3);

  auto* bar = new QHBoxLayout;
  bar->setSpacing(6);
  auto* explainLabel = new QLabel(tr("E&xplain:"), this);
  steps_ = new QComboBox(this);
  steps_->setObjectName(QStringLiteral("overlayStep"));
  steps_->setMinimumContentsLength(16);
  steps_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  steps_->setToolTip(tr("Shade a step's host window and the GPU window of the work it launched"));
  explainLabel->setBuddy(steps_);
  explainSel_ = new QToolButton(this);
  explainSel_->setText(tr("Explain selection"));
  explainSel_->setToolTip(tr("Overlay for the selected annotation or op (E)"));
  explainSel_->setEnabled(false);
  auto* searchLabel = new QLabel(tr("Find:"), this);
  search_ = new QLineEdit(this);
  searchLabel->setBuddy(search_);
  search_->setObjectName(QStringLiteral("timelineSearch"));
  search_->setPlaceholderText(tr("Search events…"));
  search_->setClearButtonEnabled(true);
  search_->setMinimumWidth(90);
  search_->setMaximumWidth(260);
  auto* prev = new QToolButton(this);
  prev->setText(QStringLiteral("◀"));
  prev->setToolTip(tr("Previous match (Shift+Enter)"));
  auto* next = new QToolButton(this);
  next->setText(QStringLiteral("▶"));
  next->setToolTip(tr("Next match (Enter)"));
  matchCount_ = new QLabel(this);
  matchCount_->setMinimumWidth(0);
  auto* fit = new QToolButton(this);
  fit->setText(tr("Fit all"));
  fit->setToolTip(tr("Show the whole trace (F)"));
  auto* zoomSel = new QToolButton(this);
  zoomSel->setText(tr("Zoom to selection"));
  zoomSel->setToolTip(tr("The measured interval, else the selected event, else the overlay (Z)"));
  // The keys, on click (a link that only had a tooltip did nothing when clicked).
  auto* hint = new QToolButton(this);
  hint->setObjectName(QStringLiteral("timelineKeys"));
  hint->setText(tr("Keys"));
  hint->setCheckable(true);
  hint->setToolTip(tr("The timeline's mouse and keyboard controls"));
  keys_ = new QLabel(tr("Wheel or W/S: zoom at the cursor · drag or A/D: pan · Shift+wheel: pan · "
                        "Shift+drag or drag on the ruler: measure · click: select (its details in the Event details "
                        "dock) · double-click: zoom to it · F: fit all · Z: zoom to selection · E: explain the "
                        "selected annotation/op · Esc: clear · track names: click the triangle to collapse, drag to "
                        "reorder, right-click for more"),
                     this);
  keys_->setObjectName(QStringLiteral("timelineKeysHelp"));
  keys_->setWordWrap(true);
  keys_->setStyleSheet(QStringLiteral("QLabel { background: #f3f6fa; border: 1px solid #c9d3df; padding: 3px 6px; }"));
  keys_->hide();
  connect(hint, &QToolButton::toggled, keys_, &QWidget::setVisible);
  bar->addWidget(explainLabel);
  bar->addWidget(steps_);
  bar->addWidget(explainSel_);
  bar->addSpacing(10);
  bar->addWidget(searchLabel);
  bar->addWidget(search_);
  bar->addWidget(prev);
  bar->addWidget(next);
  bar->addWidget(matchCount_);
  bar->addSpacing(10);
  bar->addWidget(fit);
  bar->addWidget(zoomSel);
  bar->addStretch(1);
  bar->addWidget(hint);
  layout->addLayout(bar);
  layout->addWidget(keys_);

  // The overlay's words: its first sentence and the colour key on one line, the rest on request.
  legendBox_ = new QWidget(this);
  legendBox_->setObjectName(QStringLiteral("overlayLegendBox"));
  auto* legendRow = new QHBoxLayout(legendBox_);
  legendRow->setContentsMargins(0, 0, 0, 0);
  legendRow->setSpacing(4);
  legendMore_ = new QToolButton(legendBox_);
  legendMore_->setObjectName(QStringLiteral("overlayLegendMore"));
  legendMore_->setCheckable(true);
  legendMore_->setArrowType(Qt::RightArrow);
  legendMore_->setToolTip(tr("Show the whole legend"));
  legendMore_->setAutoRaise(true);
  connect(legendMore_, &QToolButton::toggled, this, [this](bool on) {
    legendMore_->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    renderLegend();
  });
  legend_ = new QLabel(legendBox_);
  legend_->setObjectName(QStringLiteral("overlayLegend"));
  legend_->setWordWrap(true);
  legend_->setTextFormat(Qt::RichText);
  legend_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  legend_->setStyleSheet(QStringLiteral(
      "QLabel { background: #fffdf3; border: 1px solid #e6dca8; border-radius: 3px; padding: 4px 6px; }"));
  legendRow->addWidget(legendMore_, 0, Qt::AlignTop);
  legendRow->addWidget(legend_, 1);
  legendBox_->hide();
  layout->addWidget(legendBox_);

  view_ = new TimelineView(this);
  layout->addWidget(view_, 1);

  connect(steps_, &QComboBox::currentIndexChanged, this, [this](int i) {
    const int step = steps_->itemData(i).toInt();
    if (step >= 0)
      explainStep(step);
    else if (step == -1)
      clearOverlay();
  });
  connect(explainSel_, &QToolButton::clicked, this, [this] { explainEvent(view_->selectedEvent()); });
  connect(view_, &TimelineView::explainRequested, this, &TimelinePane::explainEvent);
  connect(view_, &TimelineView::eventSelected, this, [this](EventId id) {
    explainSel_->setEnabled(
        id != kNoEvent && store_ &&
        (store_->event(id).family == Family::UserAnnotation || store_->event(id).family == Family::CpuOp));
    emit eventSelected(id);
  });
  connect(search_, &QLineEdit::textChanged, this, &TimelinePane::runSearch);
  connect(search_, &QLineEdit::returnPressed, this, [this] { view_->nextMatch(true); });
  connect(prev, &QToolButton::clicked, this, [this] { view_->nextMatch(false); });
  connect(next, &QToolButton::clicked, this, [this] { view_->nextMatch(true); });
  connect(fit, &QToolButton::clicked, view_, &TimelineView::fitAll);
  connect(zoomSel, &QToolButton::clicked, view_, &TimelineView::zoomToSelection);
}

void TimelinePane::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  trace_ = std::move(trace);
  store_ = trace_ ? &trace_->store() : nullptr;
  explanation_ =
      trace_ && trace_->snapshot->explanation ? trace_->snapshot->explanation : std::make_shared<const Explanation>();
  view_->setTrace(trace_ ? trace_->snapshot->store : nullptr, trace_ ? trace_->timeline : nullptr);
  legendBox_->hide();
  explainSel_->setEnabled(false);
  const QSignalBlocker block(steps_);
  steps_->clear();
  steps_->addItem(tr("(no overlay)"), -1);
  for (size_t i = 0; i < explanation_->steps.size(); ++i) {
    const StepReport& st = explanation_->steps[i];
    steps_->addItem(
        tr("%1 — CPU %2%3")
            .arg(QString::fromStdString(st.name), durationQ(st.hostEndNs - st.hostStartNs),
                 st.gpuStartNs >= 0 ? tr(", GPU %1").arg(durationQ(st.gpuAttributedNs)) : tr(", no GPU work")),
        static_cast<int>(i));
  }
  if (!search_->text().isEmpty()) runSearch();
}

QStringList TimelinePane::stepNames() const {
  QStringList out;
  for (const StepReport& st : explanation_->steps) out << QString::fromStdString(st.name);
  return out;
}

void TimelinePane::explainStep(int step) {
  if (!store_ || step < 0 || step >= static_cast<int>(explanation_->steps.size())) return;
  showOverlay(overlayForStep(*store_, *explanation_, step));
  {
    const QSignalBlocker block(steps_);
    steps_->setCurrentIndex(steps_->findData(step));
  }
  emit stepShown(step);
}

void TimelinePane::explainEvent(EventId id) {
  if (!store_ || id == kNoEvent) return;
  const Family f = store_->event(id).family;
  if (f != Family::UserAnnotation && f != Family::CpuOp) return;
  ExplainOverlay o = overlayForEvent(*store_, *explanation_, trace_->snapshot->index, id);
  const QSignalBlocker block(steps_);
  const int step = findStepByName(*explanation_, o.name);
  if (step >= 0 && explanation_->steps[static_cast<size_t>(step)].event == id) {
    steps_->setCurrentIndex(steps_->findData(step));
  } else {
    // An ad-hoc entry for this event.
    const int adhoc = steps_->findData(-2);
    if (adhoc >= 0) steps_->removeItem(adhoc);
    steps_->addItem(tr("%1 (selected event)").arg(QString::fromStdString(o.name)), -2);
    steps_->setCurrentIndex(steps_->count() - 1);
  }
  showOverlay(std::move(o));
}

bool TimelinePane::explainByName(const QString& name) {
  if (!store_) return false;
  const std::string n = name.toStdString();
  const int step = findStepByName(*explanation_, n);
  if (step >= 0) {
    explainStep(step);
    return true;
  }
  const EventId id = findAnnotationOrOp(*store_, n);
  if (id != kNoEvent) {
    explainEvent(id);
    return true;
  }
  int first = -1, last = -1;
  std::string note;
  if (!findRegion(*explanation_, n, &first, &last, &note)) return false;
  ExplainOverlay o = overlayForSteps(*store_, *explanation_, trace_->snapshot->index, first, last, n, note);
  const QSignalBlocker block(steps_);
  const int adhoc = steps_->findData(-2);
  if (adhoc >= 0) steps_->removeItem(adhoc);
  steps_->addItem(tr("%1 (region)").arg(name), -2);
  steps_->setCurrentIndex(steps_->count() - 1);
  showOverlay(std::move(o));
  return true;
}

void TimelinePane::clearOverlay() {
  view_->setOverlay(std::nullopt);
  legendBox_->hide();
  const QSignalBlocker block(steps_);
  steps_->setCurrentIndex(0);
}

void TimelinePane::showOverlay(ExplainOverlay o) {
  const QString key = swatch(QColor(59, 120, 194, 110), tr("host window")) + QStringLiteral(" ") +
                      swatch(QColor(232, 103, 12, 110), tr("its GPU work")) + QStringLiteral(" ") +
                      swatch(QColor("#f6c9c9"), tr("sync wait"), true);
  legendKey_ = key;
  legendWords_ = QString::fromStdString(o.legend);
  renderLegend();
  legendBox_->show();
  view_->zoomToRange(o.extentStartNs, o.extentEndNs, 0.06);
  view_->setOverlay(std::move(o));
}

QString TimelinePane::legendText() const {
  const auto& o = view_->overlay();
  return o ? QString::fromStdString(o->legend) : QString();
}

// One line (the first sentence and the colour key) until the user asks for all of it.
void TimelinePane::renderLegend() {
  QString words = legendWords_;
  if (!legendMore_->isChecked()) {
    const qsizetype dot = words.indexOf(QStringLiteral(". "));
    if (dot > 0) words = words.left(dot + 1) + QStringLiteral(" …");
  }
  legendMore_->setVisible(words != legendWords_ || legendMore_->isChecked());
  legend_->setText(QStringLiteral("<b>%1</b> &nbsp; %2").arg(words.toHtmlEscaped(), legendKey_));
}

void TimelinePane::runSearch() {
  const int n = view_->setSearch(search_->text());
  matchCount_->setText(search_->text().trimmed().isEmpty() ? QString() : tr("%1 matches").arg(n));
}

}  // namespace attnscope::ui
