#include "ui/ranks/rank_timelines.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QScrollBar>
#include <QSplitter>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>

#include "core/read/trace_reader.h"
#include "ui/common/background.h"
#include "ui/common/text.h"
#include "ui/timeline/index.h"
#include "ui/timeline/view.h"

namespace attnscope::ui {

namespace {

constexpr size_t kMaxLanes = 4;

QString ms(int64_t ns) { return qs(spanDurationText(ns)); }
QString signedMs(int64_t ns) { return (ns < 0 ? QStringLiteral("−") : QStringLiteral("+")) + ms(ns < 0 ? -ns : ns); }

using Loaded = std::pair<std::shared_ptr<const EventStore>, std::shared_ptr<const TimelineIndex>>;

}  // namespace

RankTimelines::RankTimelines(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("rankTimelines"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 4, 0, 0);
  layout->setSpacing(4);
  auto* bar = new QHBoxLayout;
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  caption_->setText(
      tr("Ranks one under the other on the aligned clock: the same moment is at the same place on every "
         "rank. Zoom or pan one and all follow; click a heat-map cell or a collective to go there."));
  choose_ = new QToolButton(this);
  choose_->setObjectName(QStringLiteral("chooseRanks"));
  choose_->setText(tr("Ranks shown…"));
  choose_->setPopupMode(QToolButton::InstantPopup);
  menu_ = new QMenu(choose_);
  choose_->setMenu(menu_);
  bar->addWidget(caption_, 1);
  bar->addWidget(choose_, 0, Qt::AlignTop);
  layout->addLayout(bar);
  split_ = new QSplitter(Qt::Vertical, this);
  split_->setChildrenCollapsible(false);
  layout->addWidget(split_, 1);
}

QList<qint64> RankTimelines::defaultRanks(const ranks::JobReport& r) {
  QList<qint64> out;
  auto has = [&r](int64_t rank) {
    return std::any_of(r.ranks.begin(), r.ranks.end(), [rank](const ranks::RankSummary& s) { return s.rank == rank; });
  };
  if (!r.stragglers.empty()) {
    const int64_t s = r.stragglers.front().rank;
    out << s;
    // The typical rank: the median total wait among the others.
    std::vector<std::pair<int64_t, int64_t>> waits;
    for (size_t i = 0; i < r.ranks.size() && i < r.figures.size(); ++i) {
      if (r.ranks[i].rank == s) continue;
      int64_t w = 0;
      for (const ranks::StepFigures& f : r.figures[i]) w += f.waitForLastNs;
      waits.emplace_back(w, r.ranks[i].rank);
    }
    std::sort(waits.begin(), waits.end());
    if (!waits.empty()) out << waits[(waits.size() - 1) / 2].second;
  } else if (!r.hangs.empty()) {
    const ranks::Hang& h = r.hangs.front();
    if (!h.waitingRanks.empty()) out << h.waitingRanks.front();
    for (int64_t m : h.missingRanks)
      if (has(m) && out.size() < 2) out << m;
  }
  for (size_t i = 0; i < r.ranks.size() && out.size() < 2; ++i)
    if (!out.contains(r.ranks[i].rank)) out << r.ranks[i].rank;
  return out;
}

void RankTimelines::setReport(std::shared_ptr<const ranks::JobReport> report) {
  report_ = std::move(report);
  showRanks({});
  originNs_ = 0;
  endNs_ = 1;
  if (report_ && !report_->ranks.empty()) {
    originNs_ = std::numeric_limits<int64_t>::max();
    endNs_ = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < report_->ranks.size(); ++i) {
      const int64_t off = i < report_->clock.ranks.size() ? report_->clock.ranks[i].appliedNs : 0;
      originNs_ = std::min(originNs_, report_->ranks[i].traceStartNs - off);
      endNs_ = std::max(endNs_, report_->ranks[i].traceEndNs - off);
    }
    if (endNs_ <= originNs_) endNs_ = originNs_ + 1;
    // The steps, where the job's story is (else the whole job).
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (const auto& fs : report_->figures)
      for (const ranks::StepFigures& f : fs) {
        lo = std::min(lo, f.startNs);
        hi = std::max(hi, f.startNs + f.stepNs);
      }
    if (lo >= hi) lo = originNs_, hi = endNs_;
    start_ = lo;
    span_ = hi - lo;
    zoomToAligned(lo, hi, 0.02);
  }
  rebuildMenu();
  if (report_) showRanks(defaultRanks(*report_));
}

QList<qint64> RankTimelines::shownRanks() const {
  QList<qint64> out;
  for (const Lane& l : lanes_) out << l.rank;
  return out;
}

RankTimelines::Lane* RankTimelines::laneOf(qint64 rank) {
  for (Lane& l : lanes_)
    if (l.rank == rank) return &l;
  return nullptr;
}

const RankTimelines::Lane* RankTimelines::laneOf(qint64 rank) const {
  for (const Lane& l : lanes_)
    if (l.rank == rank) return &l;
  return nullptr;
}

TimelineView* RankTimelines::viewOf(qint64 rank) const {
  const Lane* l = laneOf(rank);
  return l ? l->view : nullptr;
}

bool RankTimelines::loaded(qint64 rank) const {
  const Lane* l = laneOf(rank);
  return l && l->loaded;
}

bool RankTimelines::allLoaded() const {
  return !lanes_.empty() && std::all_of(lanes_.begin(), lanes_.end(), [](const Lane& l) { return l.loaded; });
}

bool RankTimelines::settled() const {
  return std::all_of(lanes_.begin(), lanes_.end(), [](const Lane& l) { return l.loaded || l.failed; });
}

QString RankTimelines::titleOf(qint64 rank) const {
  const Lane* l = laneOf(rank);
  return l ? l->title->text() : QString();
}

int64_t RankTimelines::offsetOf(qint64 rank) const {
  if (!report_) return 0;
  for (size_t i = 0; i < report_->ranks.size() && i < report_->clock.ranks.size(); ++i)
    if (report_->ranks[i].rank == rank) return report_->clock.ranks[i].appliedNs;
  return 0;
}

QString RankTimelines::titleText(const Lane& lane) const {
  const ranks::RankSummary& s = report_->ranks[lane.index];
  QString clock;
  if (lane.index < report_->clock.ranks.size()) {
    const ranks::RankClock& c = report_->clock.ranks[lane.index];
    if (c.rank == report_->clock.referenceRank)
      clock = tr("the reference clock");
    else if (c.appliedNs != 0)
      clock = (c.appliedNs > 0 ? tr("clock offset %1 ± %2 applied: drawn %3 earlier than its trace says")
                               : tr("clock offset %1 ± %2 applied: drawn %3 later than its trace says"))
                  .arg(signedMs(c.estimateNs), ms(c.uncertaintyNs), ms(std::llabs(c.appliedNs)));
    else
      clock = tr("clock offset %1 ± %2, within its uncertainty: not applied")
                  .arg(signedMs(c.estimateNs), ms(c.uncertaintyNs));
  }
  return tr("<b>rank %1</b> · %2 · %3").arg(s.rank).arg(QFileInfo(qs(s.file)).fileName().toHtmlEscaped(), clock);
}

void RankTimelines::showRanks(const QList<qint64>& ranks) {
  // Lanes no longer wanted go, with their events.
  for (auto it = lanes_.begin(); it != lanes_.end();) {
    if (!ranks.contains(it->rank) || !report_) {
      it->box->deleteLater();
      it->box->hide();
      it = lanes_.erase(it);
    } else {
      ++it;
    }
  }
  if (!report_) return;
  std::vector<Lane> kept;
  for (qint64 rank : ranks) {
    if (Lane* l = laneOf(rank)) {
      kept.push_back(*l);
      continue;
    }
    size_t index = report_->ranks.size();
    for (size_t i = 0; i < report_->ranks.size(); ++i)
      if (report_->ranks[i].rank == rank) index = i;
    if (index == report_->ranks.size()) continue;
    Lane lane;
    lane.rank = rank;
    lane.index = index;
    lane.box = new QWidget;
    lane.box->setObjectName(QStringLiteral("rankLane%1").arg(rank));
    auto* v = new QVBoxLayout(lane.box);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(2);
    auto* head = new QHBoxLayout;
    lane.title = new QLabel(lane.box);
    lane.title->setTextFormat(Qt::RichText);
    lane.title->setText(titleText(lane));
    auto* open = new QToolButton(lane.box);
    open->setText(tr("Open in the main window"));
    open->setAutoRaise(true);
    open->setToolTip(tr("Opens this rank's trace alone in the main window, with its tables and explanation"));
    const QString file = qs(report_->ranks[index].file);
    connect(open, &QToolButton::clicked, this, [this, file] { emit openTraceRequested(file); });
    head->addWidget(lane.title, 1);
    head->addWidget(open);
    v->addLayout(head);
    lane.status = new QLabel(tr("Loading rank %1's events…").arg(rank), lane.box);
    lane.status->setAlignment(Qt::AlignCenter);
    lane.status->setMinimumHeight(60);
    v->addWidget(lane.status, 1);
    lane.view = new TimelineView(lane.box);
    lane.view->setObjectName(QStringLiteral("rankTimeline%1").arg(rank));
    // Every view the same width of event area, scroll bar or not: the same time at the same x.
    lane.view->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    lane.view->setMinimumHeight(30);
    lane.view->hide();
    connect(lane.view, &TimelineView::visibleRangeChanged, this, [this, rank] { onViewMoved(rank); });
    v->addWidget(lane.view, 1);
    lane.token = ++tokens_;
    kept.push_back(lane);
    load(kept.back());
  }
  lanes_ = std::move(kept);
  for (size_t i = 0; i < lanes_.size(); ++i) split_->insertWidget(static_cast<int>(i), lanes_[i].box);
  setSelectedRank(selectedRank_);
  rebuildMenu();
  if (!lanes_.empty() && settled()) emit shownRanksSettled();
}

void RankTimelines::addRank(qint64 rank) {
  QList<qint64> now = shownRanks();
  if (now.contains(rank)) return;
  if (static_cast<size_t>(now.size()) >= kMaxLanes) now.removeLast();
  now << rank;
  showRanks(now);
}

void RankTimelines::showInPlaceOfLast(qint64 rank) {
  QList<qint64> now = shownRanks();
  if (now.contains(rank)) return;
  if (now.size() >= 2)
    now.back() = rank;
  else
    now << rank;
  showRanks(now);
}

void RankTimelines::setSelectedRank(qint64 rank) {
  selectedRank_ = rank;
  for (Lane& l : lanes_)
    l.title->setStyleSheet(l.rank == rank ? QStringLiteral("QLabel { background: #dbe8fb; border-radius: 3px; }")
                                          : QString());
}

void RankTimelines::load(Lane& lane) {
  const std::string file = report_->ranks[lane.index].file;
  const qint64 rank = lane.rank;
  const quint64 token = lane.token;
  auto finish = [this, rank, token](const Loaded* got, const QString& error) {
    Lane* l = laneOf(rank);
    if (!l || l->token != token) return;  // hidden, or another job, meanwhile
    if (!got) {
      l->status->setText(tr("Could not load rank %1's events: %2").arg(rank).arg(error));
      l->failed = true;
      if (settled()) emit shownRanksSettled();
      return;
    }
    syncing_ = true;
    l->view->setTrace(got->first, got->second);
    const int64_t off = offsetOf(rank);
    l->view->axis().setBounds(originNs_ + off, endNs_ + off);
    l->view->setTimeOrigin(originNs_ + off);
    // On a GPU job the streams (where the NCCL kernels run) come first, the threads under them.
    if (report_->ranks[l->index].hasDevice) {
      int at = 0;
      const auto& tracks = l->view->index().tracks();
      for (uint32_t t = 0; t < tracks.size(); ++t)
        if (tracks[t].kind == TrackKind::Gpu) l->view->layout().moveTrack(t, at++);
      l->view->relayoutTracks();
    }
    l->status->hide();
    l->view->show();
    l->loaded = true;
    syncing_ = false;
    applyRange();
    emit rankLoaded(rank);
    if (settled()) emit shownRanksSettled();
  };
  runInBackground(
      this,
      [file]() -> Loaded {
        LoadResult lr = loadTrace(file);
        if (!lr.ok()) throw std::runtime_error(lr.error ? lr.error->what() : file + ": could not be read");
        auto store = std::make_shared<const EventStore>(std::move(*lr.store));
        auto index = std::make_shared<const TimelineIndex>(*store);
        return {std::move(store), std::move(index)};
      },
      [finish](Loaded got) { finish(&got, {}); }, [finish](const QString& error) { finish(nullptr, error); });
}

void RankTimelines::onViewMoved(qint64 rank) {
  if (syncing_) return;
  const Lane* l = laneOf(rank);
  if (!l || !l->loaded) return;
  const TimeAxis& a = l->view->axis();
  start_ = a.start() - offsetOf(rank);
  span_ = a.span();
  applyRange();
}

void RankTimelines::applyRange() {
  syncing_ = true;
  for (Lane& l : lanes_) {
    if (!l.loaded) continue;
    const int64_t off = offsetOf(l.rank);
    l.view->zoomToRange(start_ + off, start_ + off + span_, 0.0);
  }
  syncing_ = false;
}

void RankTimelines::zoomToAligned(int64_t t0, int64_t t1, double margin) {
  if (t1 < t0) std::swap(t0, t1);
  const int64_t span = std::max<int64_t>(t1 - t0, TimeAxis::kMinSpanNs);
  const auto pad = static_cast<int64_t>(static_cast<double>(span) * margin);
  start_ = t0 - pad;
  span_ = span + 2 * pad;
  applyRange();
  // The views clamp to the job's bounds alike: read back what they show.
  for (const Lane& l : lanes_)
    if (l.loaded) {
      start_ = l.view->axis().start() - offsetOf(l.rank);
      span_ = l.view->axis().span();
      break;
    }
}

int64_t RankTimelines::alignedTimeAt(qint64 rank, double viewportX) const {
  const Lane* l = laneOf(rank);
  if (!l || !l->loaded) return 0;
  return l->view->axis().time(viewportX - TimelineView::kHeaderWidth) - offsetOf(rank);
}

void RankTimelines::rebuildMenu() {
  menu_->clear();
  if (!report_) return;
  const QList<qint64> shown = shownRanks();
  for (const ranks::RankSummary& s : report_->ranks) {
    QAction* a = menu_->addAction(tr("rank %1").arg(s.rank));
    a->setCheckable(true);
    a->setChecked(shown.contains(s.rank));
    const qint64 rank = s.rank;
    connect(a, &QAction::toggled, this, [this, rank](bool on) {
      QList<qint64> now = shownRanks();
      if (on)
        now << rank;
      else
        now.removeAll(rank);
      if (static_cast<size_t>(now.size()) > kMaxLanes) now.removeFirst();
      // Not from inside the menu's own signal: showRanks() rebuilds the menu.
      QTimer::singleShot(0, this, [this, now] { showRanks(now); });
    });
  }
}

}  // namespace attnscope::ui
