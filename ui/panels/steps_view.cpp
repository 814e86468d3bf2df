#include "ui/panels/steps_view.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPainter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTextDocumentFragment>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/snapshot/founding_answer.h"
#include "ui/common/text.h"
#include "ui/table/table_model_base.h"

namespace attnscope::ui {

namespace {

constexpr int TorchNsRole = Qt::UserRole + 30;  // qlonglong: torch's row per call, -1: no row
constexpr int CostNsRole = Qt::UserRole + 31;   // qlonglong: what it really cost
constexpr int ScaleNsRole = Qt::UserRole + 32;  // qlonglong: the largest figure of any row (the bars' scale)

const QColor kTorchColor(120, 120, 120);
const QColor kCostColor(21, 101, 192);
const QColor kNoRowColor(198, 40, 40);

QString t(int64_t ns) { return qs(spanDurationText(ns)); }

// The two figures of a row as bars on one scale: torch's row above, what it really cost below.
class BarsDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* p, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QStyleOptionViewItem o = option;
    initStyleOption(&o, index);
    o.text.clear();
    o.widget->style()->drawControl(QStyle::CE_ItemViewItem, &o, p, o.widget);
    const double scale = static_cast<double>(std::max<qlonglong>(1, index.data(ScaleNsRole).toLongLong()));
    const qlonglong torch = index.data(TorchNsRole).toLongLong();
    const qlonglong cost = index.data(CostNsRole).toLongLong();
    const QRect r = option.rect.adjusted(4, 3, -8, -3);
    const int barH = std::max(4, (r.height() - 2) / 2);
    const QFontMetrics fm(option.font);
    const int textRoom = fm.horizontalAdvance(QStringLiteral("no row: reads as 0 ")) + 4;
    const int span = std::max(10, r.width() - textRoom);
    p->save();
    auto bar = [&](int y, qlonglong ns, const QColor& c, const QString& label) {
      const int w = ns > 0 ? std::max(2, static_cast<int>(std::lround(span * static_cast<double>(ns) / scale))) : 0;
      if (w > 0) p->fillRect(QRect(r.left(), y, w, barH), c);
      p->setPen(ns < 0 ? kNoRowColor : option.palette.color(QPalette::Text));
      if (ns < 0) p->fillRect(QRect(r.left(), y, 2, barH), kNoRowColor);
      p->drawText(QRect(r.left() + w + 4, y - 2, textRoom + span - w, barH + 4), Qt::AlignLeft | Qt::AlignVCenter,
                  label);
    };
    QFont small = option.font;
    small.setPointSizeF(option.font.pointSizeF() * 0.9);
    p->setFont(small);
    bar(r.top(), torch, kTorchColor, torch < 0 ? QObject::tr("no row: reads as 0") : t(torch));
    bar(r.top() + barH + 2, cost, kCostColor, t(cost));
    p->restore();
  }
};

}  // namespace

class StepsAnswerModel : public TableModelBase {
 public:
  using TableModelBase::TableModelBase;

  void setAnswer(std::shared_ptr<const LoadedTrace> trace) {
    beginResetModel();
    trace_ = std::move(trace);
    a_ = trace_ && trace_->snapshot->answer ? trace_->snapshot->answer.get() : nullptr;
    scale_ = 1;
    if (a_)
      for (const AnswerStep& s : a_->steps) scale_ = std::max({scale_, s.torchRowNs, s.costNs()});
    endResetModel();
  }
  const FoundingAnswer* answer() const { return a_; }

  int rowCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() || !a_ ? 0 : static_cast<int>(a_->steps.size());
  }
  int columnCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : StepsView::ColumnCount;
  }
  QVariant headerData(int section, Qt::Orientation o, int role) const override {
    if (o != Qt::Horizontal) return {};
    const bool gpu = a_ && a_->gpu;
    if (role == Qt::DisplayRole) {
      switch (section) {
        case StepsView::Step:
          return tr("Step");
        case StepsView::Wrapped:
          return tr("Wrapped?");
        case StepsView::TorchRow:
          return tr("torch's table shows");
        case StepsView::Cost:
          return gpu ? tr("It really cost (GPU)") : tr("It really cost (host)");
        case StepsView::Bars:
          return tr("torch's row (grey) vs what it really cost (blue)");
      }
    }
    if (role == Qt::ToolTipRole && a_) {
      if (section == StepsView::TorchRow) return qs(a_->torchTitle());
      if (section == StepsView::Cost) return qs(a_->costTitle());
      if (section == StepsView::Wrapped) return tr("Whether the step runs inside a record_function of its own");
    }
    return {};
  }

 protected:
  QVariant cell(int row, int col, int role) const override {
    const AnswerStep& s = a_->steps[static_cast<size_t>(row)];
    if (role == TorchNsRole) return static_cast<qlonglong>(s.torchRowNs);
    if (role == CostNsRole) return static_cast<qlonglong>(s.costNs());
    if (role == ScaleNsRole) return static_cast<qlonglong>(scale_);
    if (role == SortRole) {
      switch (col) {
        case StepsView::Step:
          return row;
        case StepsView::Wrapped:
          return s.wrapped ? 1 : 0;
        case StepsView::TorchRow:
          return static_cast<qlonglong>(s.torchRowNs);
        default:
          return static_cast<qlonglong>(s.costNs());
      }
    }
    if (role == Qt::ForegroundRole && col == StepsView::TorchRow && s.torchRowNs < 0) return kNoRowColor;
    if (role == Qt::TextAlignmentRole)
      return col == StepsView::TorchRow || col == StepsView::Cost ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                                  : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) {
      if (col == StepsView::TorchRow && s.torchRowNs < 0)
        return tr("torch's table has no row named %1: the step reads as zero there").arg(qs(s.name));
      if (col == StepsView::Cost && s.cost.n > 1)
        return tr("median of %1 iterations, %2").arg(s.cost.n).arg(qs(costSpreadText(s)));
      return {};
    }
    if (role != Qt::DisplayRole) return {};
    switch (col) {
      case StepsView::Step:
        return qs(s.name);
      case StepsView::Wrapped:
        return s.wrapped ? tr("yes") : tr("no");
      // The figure, and under it its spread over the iterations when it moves.
      case StepsView::TorchRow: {
        if (s.torchRowNs < 0) return tr("no row");
        const QString spread = qs(torchRowSpreadText(s));
        return spread.isEmpty() ? t(s.torchRowNs) : QStringLiteral("%1\n%2").arg(t(s.torchRowNs), spread);
      }
      case StepsView::Cost: {
        const QString spread = qs(costSpreadText(s));
        return spread.isEmpty() ? qs(costText(s)) : QStringLiteral("%1\n%2").arg(qs(costText(s)), spread);
      }
      default:
        return {};
    }
  }

 private:
  std::shared_ptr<const LoadedTrace> trace_;
  const FoundingAnswer* a_ = nullptr;
  int64_t scale_ = 1;
};

StepsView::StepsView(QWidget* parent) : QWidget(parent), model_(new StepsAnswerModel(this)) {
  setObjectName(QStringLiteral("stepsView"));
  setMinimumSize(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 4);
  layout->setSpacing(4);
  headline_ = new QLabel(tr("Open a trace to see what each step really cost."), this);
  headline_->setObjectName(QStringLiteral("stepsHeadline"));
  headline_->setWordWrap(true);
  headline_->setTextFormat(Qt::RichText);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(headline_);

  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("stepsAnswerTable"));
  table_->setModel(model_);
  table_->setItemDelegateForColumn(Bars, new BarsDelegate(table_));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  // Two bars and their figures per row.
  table_->verticalHeader()->setDefaultSectionSize(2 * fontMetrics().height() + 8);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
  layout->addWidget(table_, 1);

  why_ = new QLabel(this);
  why_->setObjectName(QStringLiteral("stepsWhy"));
  why_->setWordWrap(true);
  why_->setTextFormat(Qt::RichText);
  why_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  why_->setStyleSheet(QStringLiteral(
      "QLabel { background: #f5f8fc; border: 1px solid #d3dde9; border-radius: 3px; padding: 4px 6px; }"));
  why_->hide();
  layout->addWidget(why_);

  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (!cur.isValid()) return;
    showWhy(cur.row());
    if (!selecting_) emit stepChosen(representative(cur.row()));
  });
}

// An engine row covers every iteration: the one nearest its median shows it.
int StepsView::representative(int row) const {
  const AnswerStep& s = answer()->steps[static_cast<size_t>(row)];
  if (s.steps.empty()) return -1;
  int best = s.steps.front();
  int64_t bestGap = INT64_MAX;
  const Explanation& x = trace_->explanation();
  for (int i : s.steps) {
    const StepReport& r = x.steps[static_cast<size_t>(i)];
    const int64_t v = answer()->gpu ? r.gpuAttributedNs : r.hostNs();
    const int64_t gap = std::llabs(v - s.costNs());
    if (gap < bestGap) bestGap = gap, best = i;
  }
  return best;
}

const FoundingAnswer* StepsView::answer() const { return model_->answer(); }

void StepsView::setTrace(std::shared_ptr<const LoadedTrace> trace) {
  trace_ = std::move(trace);
  model_->setAnswer(trace_);
  why_->hide();
  const FoundingAnswer* a = answer();
  if (!a || a->steps.empty()) {
    headline_->setText(trace_ ? tr("This trace has no steps to compare with torch's table.") : tr("No trace."));
    return;
  }
  headline_->setText(QStringLiteral("<b>%1</b>").arg(qs(a->headline).toHtmlEscaped()));
  table_->resizeColumnsToContents();
  // The bars get what is left, at least 220 px.
  for (int c = Step; c < Bars; ++c) table_->setColumnWidth(c, std::min(table_->columnWidth(c), c == Cost ? 260 : 200));
}

QString StepsView::headlineText() const { return QTextDocumentFragment::fromHtml(headline_->text()).toPlainText(); }

QString StepsView::whyText() const {
  return why_->isVisible() || !why_->text().isEmpty() ? QTextDocumentFragment::fromHtml(why_->text()).toPlainText()
                                                      : QString();
}

void StepsView::selectStep(int step) {
  const FoundingAnswer* a = answer();
  if (!a) return;
  for (size_t r = 0; r < a->steps.size(); ++r) {
    const auto& covered = a->steps[r].steps;
    if (std::find(covered.begin(), covered.end(), step) == covered.end()) continue;
    selecting_ = true;
    const QModelIndex i = model_->index(static_cast<int>(r), 0);
    table_->selectionModel()->setCurrentIndex(i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    table_->scrollTo(i);
    selecting_ = false;
    return;
  }
}

int StepsView::selectFirstUnwrapped() {
  const FoundingAnswer* a = answer();
  if (!a) return -1;
  for (size_t r = 0; r < a->steps.size(); ++r) {
    if (a->steps[r].torchRowNs >= 0 || a->steps[r].steps.empty()) continue;
    selecting_ = true;
    table_->selectionModel()->setCurrentIndex(model_->index(static_cast<int>(r), 0),
                                              QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    selecting_ = false;
    return representative(static_cast<int>(r));
  }
  return -1;
}

// Why torch put the step's time where it did, with this trace's numbers.
void StepsView::showWhy(int row) {
  const FoundingAnswer* a = answer();
  if (!a || row < 0 || row >= static_cast<int>(a->steps.size())) {
    why_->hide();
    return;
  }
  const AnswerStep& s = a->steps[static_cast<size_t>(row)];
  const QString name = QStringLiteral("<b>%1</b>").arg(qs(s.name).toHtmlEscaped());
  const QString cost =
      qs(costText(s)) +
      (s.cost.n > 1 ? tr(" (median of %1 iterations, %2)").arg(s.cost.n).arg(qs(costSpreadText(s)).toHtmlEscaped())
                    : QString());
  QStringList under;
  for (size_t i = 0; i < s.shownUnder.size() && i < 4; ++i)
    under << QStringLiteral("%1 (%2)").arg(qs(s.shownUnder[i].first).toHtmlEscaped(), t(s.shownUnder[i].second));
  if (s.shownUnder.size() > 4) under << tr("%1 more").arg(s.shownUnder.size() - 4);
  QString html;
  if (!s.wrapped || s.torchRowNs < 0) {
    html = tr("%1 is not wrapped in record_function, so torch's table has no row for it: it reads as zero. ").arg(name);
    html += a->gpu ? tr("Yet the work it launched ran %1 on the GPU (joined to its launches by correlation).").arg(cost)
                   : tr("Yet its own ops ran %1 on the host.").arg(cost);
    if (!under.isEmpty())
      html += a->gpu ? tr(" torch's table counts that time under the ops that launched it: %1.")
                           .arg(under.join(QStringLiteral(", ")))
                     : tr(" torch's table shows that time in its ops' rows: %1.").arg(under.join(QStringLiteral(", ")));
    else
      html += a->gpu ? tr(" It launched no GPU work.") : QString();
  } else {
    html = tr("%1 is wrapped in record_function: torch's table shows it as its own row, %2 %3 per call%4. ")
               .arg(name, a->gpu ? tr("CUDA total") : tr("CPU total"), t(s.torchRowNs),
                    s.torchRowCalls > 1 ? tr(" over %1 calls").arg(s.torchRowCalls) : QString());
    html += a->gpu ? tr("The work it launched ran %1 on the GPU.").arg(cost)
                   : tr("Its own ops ran %1 on the host; the rest of the row is the scope's own time between and "
                        "around them.")
                         .arg(cost);
    const int64_t gap = s.torchRowNs - s.costNs();
    if (a->gpu && s.cost.n && std::llabs(gap) * 20 > std::max<int64_t>(1, s.costNs()))
      html += tr(" torch's row differs by %1: it links GPU work to the ops inside the scope by External id, and "
                 "counts the scope's GPU span, where attnscope joins each launch to its kernel by correlation.")
                  .arg(t(std::llabs(gap)));
  }
  html += tr(" <i>On the timeline: its host window and the work it launched.</i>");
  why_->setText(html);
  why_->show();
}

}  // namespace attnscope::ui
