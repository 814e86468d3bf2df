#include "ui/panels/timeline_diff.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/common/background.h"
#include "ui/common/text.h"
#include "ui/table/sort_header_view.h"
#include "ui/timeline/index.h"
#include "ui/timeline/view.h"

namespace attnscope::ui {

// ---- ChangesModel ----------------------------------------------------------------

void ChangesModel::setComparison(std::shared_ptr<const Comparison> c) {
  beginResetModel();
  cmp_ = std::move(c);
  perStep_ = !cmp_ || cmp_->stepPairing == "order";
  endResetModel();
}

const Change* ChangesModel::change(int row) const {
  if (!cmp_ || row < 0 || static_cast<size_t>(row) >= cmp_->changes.size()) return nullptr;
  return &cmp_->changes[static_cast<size_t>(row)];
}

int ChangesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !cmp_ ? 0 : static_cast<int>(cmp_->changes.size());
}

int ChangesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ChangesModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return TableModelBase::headerData(section, o, role);
  const QString per = perStep_ ? tr(" per step") : QString();
  switch (section) {
    case Rank:
      return tr("#");
    case Kind:
      return tr("Kind");
    case What:
      return tr("What");
    case A:
      return tr("A") + per;
    case B:
      return tr("B") + per;
    case Delta:
      return tr("B − A");
    case Noise:
      return tr("Noise?");
    default:
      return {};
  }
}

QVariant ChangesModel::cell(int row, int col, int role) const {
  const Change& ch = cmp_->changes[static_cast<size_t>(row)];
  const auto ns = [](double v) { return static_cast<qlonglong>(std::llround(v)); };
  if (role == SortRole) {
    switch (col) {
      case Rank:
        return row;
      case A:
        return ch.aNs;
      case B:
        return ch.bNs;
      case Delta:
        return ch.deltaNs;
      case Noise:
        return ch.noise ? 1 : 0;
      default:
        break;
    }
  }
  if (role == Qt::ToolTipRole) return qs(ch.text);
  if (role == Qt::TextAlignmentRole && (col == A || col == B || col == Delta || col == Rank))
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != SortRole) return {};
  switch (col) {
    case Rank:
      return row + 1;
    case Kind:
      return ch.kind == "op" ? tr("op (Self CPU)") : ch.kind == "kernel" ? tr("GPU work") : tr("sync waits");
    case What:
      return qs(ch.key);
    case A:
      return ch.status == "appeared" ? tr("—") : qs(durationText(ns(ch.aNs)));
    case B:
      return ch.status == "disappeared" ? tr("—") : qs(durationText(ns(ch.bNs)));
    case Delta:
      return (ch.deltaNs >= 0 ? QStringLiteral("+") : QStringLiteral("−")) +
             qs(durationText(ns(std::fabs(ch.deltaNs))));
    case Noise:
      return ch.noise ? tr("noise") : QString();
    default:
      return {};
  }
}

// ---- TimelineDiff ----------------------------------------------------------------

TimelineDiff::TimelineDiff(QWidget* parent)
    : QWidget(parent),
      labelA_(new QLabel(this)),
      labelB_(new QLabel(this)),
      align_(new QComboBox(this)),
      viewA_(new TimelineView(this)),
      viewB_(new TimelineView(this)),
      changes_(new ChangesModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      changesView_(new QTableView(this)) {
  setObjectName(QStringLiteral("timelineDiff"));
  setWindowTitle(tr("attnscope — two timelines"));
  viewA_->setObjectName(QStringLiteral("diffViewA"));
  viewB_->setObjectName(QStringLiteral("diffViewB"));
  align_->setObjectName(QStringLiteral("diffAlign"));
  changesView_->setObjectName(QStringLiteral("diffChanges"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Aligned at step:"), this));
  bar->addWidget(align_, 1);
  auto* hint = new QLabel(tr("Zoom and pan move both. Every difference is B − A."), this);
  bar->addWidget(hint);
  layout->addLayout(bar);

  proxy_->setSourceModel(changes_);
  proxy_->setSortRole(TableModelBase::SortRole);
  changesView_->setModel(proxy_);
  changesView_->setSortingEnabled(true);
  useSortableTable(changesView_);
  changesView_->sortByColumn(ChangesModel::Rank, Qt::AscendingOrder);
  changesView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  changesView_->setSelectionMode(QAbstractItemView::SingleSelection);
  changesView_->verticalHeader()->hide();
  changesView_->verticalHeader()->setDefaultSectionSize(changesView_->fontMetrics().height() + 6);
  changesView_->setWordWrap(false);
  changesView_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  changesView_->horizontalHeader()->setSectionResizeMode(ChangesModel::What, QHeaderView::Interactive);
  changesView_->horizontalHeader()->setSectionsClickable(true);

  auto* timelines = new QWidget(this);
  auto* tl = new QVBoxLayout(timelines);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->setSpacing(2);
  labelA_->setTextFormat(Qt::RichText);
  labelB_->setTextFormat(Qt::RichText);
  tl->addWidget(labelA_);
  tl->addWidget(viewA_, 1);
  tl->addWidget(labelB_);
  tl->addWidget(viewB_, 1);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(changesView_);
  split->addWidget(timelines);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 7);
  layout->addWidget(split, 1);

  connect(viewA_, &TimelineView::visibleRangeChanged, this, [this] { follow(viewA_, viewB_, offsetNs_); });
  connect(viewB_, &TimelineView::visibleRangeChanged, this, [this] { follow(viewB_, viewA_, -offsetNs_); });
  connect(viewA_, &TimelineView::eventSelected, this, [this](EventId id) { linkSelection(viewA_, viewB_, id); });
  connect(viewB_, &TimelineView::eventSelected, this, [this](EventId id) { linkSelection(viewB_, viewA_, id); });
  connect(align_, &QComboBox::activated, this, [this](int i) { alignAt(align_->itemData(i).toInt()); });
  connect(changesView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& cur) {
            if (cur.isValid()) showChange(proxy_->mapToSource(cur).row());
          });
}

void TimelineDiff::setTraces(const QString& labelA, std::shared_ptr<const TraceSnapshot> a, const QString& labelB,
                             std::shared_ptr<const TraceSnapshot> b, std::shared_ptr<const Comparison> c) {
  a_ = std::move(a);
  b_ = std::move(b);
  cmp_ = std::move(c);
  labelA_->setText(tr("<b>A</b> %1").arg(labelA.toHtmlEscaped()));
  labelB_->setText(tr("<b>B</b> %1").arg(labelB.toHtmlEscaped()));
  changes_->setComparison(cmp_);
  changesView_->setColumnWidth(ChangesModel::What, 230);  // the full name is in its tooltip
  align_->clear();
  const quint64 gen = ++generation_;
  struct Indexes {
    std::shared_ptr<const TimelineIndex> a, b;
  };
  auto work = [a = a_, b = b_]() {
    return Indexes{std::make_shared<const TimelineIndex>(*a->store), std::make_shared<const TimelineIndex>(*b->store)};
  };
  runInBackground(
      this, std::move(work),
      [this, gen](Indexes ix) {
        if (gen != generation_) return;
        viewA_->setTrace(a_->store, ix.a);
        viewB_->setTrace(b_->store, ix.b);
        std::vector<int> both;
        for (size_t i = 0; i < cmp_->steps.size(); ++i) {
          const auto& p = cmp_->steps[i];
          if (!p.a || !p.b) continue;
          both.push_back(static_cast<int>(i));
          align_->addItem(qs(p.key), static_cast<int>(i));
        }
        if (!both.empty()) {
          // The median pair: away from the first step's warm-up and the last one's flush.
          const int median = both[both.size() / 2];
          align_->setCurrentIndex(align_->findData(median));
          alignAt(median);
        } else {
          offsetNs_ = b_->store->minTime() - a_->store->minTime();
          viewA_->fitAll();
        }
        emit ready();
      },
      [this, gen](const QString& what) {
        if (gen != generation_) return;
        setWindowTitle(tr("Timelines side by side: failed (%1)").arg(what));
        emit ready();
      });
}

void TimelineDiff::alignAt(int pair) {
  if (!cmp_ || pair < 0 || static_cast<size_t>(pair) >= cmp_->steps.size()) return;
  const auto& p = cmp_->steps[static_cast<size_t>(pair)];
  if (!p.a || !p.b) return;
  pair_ = pair;
  offsetNs_ = p.b->hostStartNs - p.a->hostStartNs;
  const int idx = align_->findData(pair);
  if (idx >= 0 && idx != align_->currentIndex()) align_->setCurrentIndex(idx);
  // Both steps whole: the longer of the two decides the span.
  const int64_t end = std::max(p.a->hostEndNs, p.b->hostEndNs - offsetNs_);
  viewA_->zoomToRange(p.a->hostStartNs, end, 0.03);
  follow(viewA_, viewB_, offsetNs_);
}

void TimelineDiff::follow(TimelineView* from, TimelineView* to, int64_t offset) {
  if (following_ || !from->store() || !to->store()) return;
  following_ = true;
  to->zoomToRange(from->axis().start() + offset, from->axis().end() + offset, 0.0);
  following_ = false;
}

int TimelineDiff::stepIndexAt(const Explanation& x, int64_t t) const {
  int found = -1;
  for (size_t i = 0; i < x.steps.size(); ++i)
    if (x.steps[i].hostStartNs <= t) found = static_cast<int>(i);
  return found;
}

void TimelineDiff::linkSelection(TimelineView* from, TimelineView* to, EventId id) {
  if (linking_ || !cmp_ || !from->store() || !to->store()) return;
  const bool fromA = from == viewA_;
  const TraceSnapshot& fs = fromA ? *a_ : *b_;
  const TraceSnapshot& ts = fromA ? *b_ : *a_;
  EventId match = kNoEvent;
  if (id != kNoEvent) {
    // The same name, the same occurrence since the start of its step; the step's partner in the other trace.
    const EventStore& f = *fs.store;
    const EventStore& t = *ts.store;
    const Event& e = f.event(id);
    const int step = stepIndexAt(*fs.explanation, e.start);
    int64_t fromStart = f.minTime(), toStart = t.minTime();
    if (step >= 0) {
      const StepReport& mine = fs.explanation->steps[static_cast<size_t>(step)];
      for (const auto& p : cmp_->steps) {
        const auto& own = fromA ? p.a : p.b;
        const auto& other = fromA ? p.b : p.a;
        if (own && other && own->hostStartNs == mine.hostStartNs) {
          fromStart = own->hostStartNs;
          toStart = other->hostStartNs;
          break;
        }
      }
    }
    const std::string_view name = f.name(e);
    size_t k = 0;
    for (EventId i = 0; i < f.events().size(); ++i) {
      const Event& x = f.event(i);
      if (i == id) break;
      if (x.start >= fromStart && x.start <= e.start && x.family == e.family && f.name(x) == name) ++k;
    }
    size_t seen = 0;
    for (EventId i = 0; i < t.events().size() && match == kNoEvent; ++i) {
      const Event& x = t.event(i);
      if (x.start >= toStart && x.family == e.family && t.name(x) == name && seen++ == k) match = i;
    }
  }
  linking_ = true;
  to->selectEvent(match, false);
  to->setHighlighted(match == kNoEvent ? std::vector<EventId>{} : std::vector<EventId>{match});
  linking_ = false;
}

void TimelineDiff::selectChange(int index) {
  const QModelIndex src = changes_->index(index, 0);
  if (!src.isValid()) return;
  const QModelIndex at = proxy_->mapFromSource(src);
  changesView_->setCurrentIndex(at);
  changesView_->scrollTo(at);
}

void TimelineDiff::showChange(int index) {
  if (!cmp_ || index < 0 || static_cast<size_t>(index) >= cmp_->changes.size()) return;
  const Change& ch = cmp_->changes[static_cast<size_t>(index)];
  viewA_->setHighlighted(ch.evidenceA);
  viewB_->setHighlighted(ch.evidenceB);
  // Back to the aligned steps, where the lit events show how the change looks in each; one of
  // them (in the aligned step when it has one there) is selected on each side.
  alignAt(pair_);
  auto pick = [&](const std::vector<EventId>& ev, const EventStore& s, bool sideA) {
    if (ev.empty()) return kNoEvent;
    if (pair_ >= 0) {
      const auto& p = cmp_->steps[static_cast<size_t>(pair_)];
      const auto& st = sideA ? p.a : p.b;
      for (EventId id : ev)
        if (st && s.event(id).start >= st->hostStartNs && s.event(id).start < st->hostEndNs) return id;
    }
    return ev.front();
  };
  linking_ = true;  // each side shows its own evidence
  viewA_->selectEvent(pick(ch.evidenceA, *a_->store, true), false);
  viewB_->selectEvent(pick(ch.evidenceB, *b_->store, false), false);
  linking_ = false;
}

}  // namespace attnscope::ui
