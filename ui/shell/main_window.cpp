#include "ui/shell/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QResizeEvent>
#include <QSignalBlocker>
#include <QSizePolicy>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "core/store/trace_info.h"
#include "core/tables/table_format.h"
#include "ui/common/text.h"
#include "ui/shell/bundled_sample.h"
#include "ui/table/key_averages_model.h"
#include "ui/table/key_averages_proxy.h"
#include "ui/table/two_line_header_view.h"
#include "ui/timeline/table_link.h"
#include "ui/timeline/timeline_pane.h"

namespace attnscope::ui {
namespace {

// Name and Input Shapes widths (pixels): never narrower than the minimum,
// and not given more than the "want" cap while the other one is short.
constexpr int kMinNameWidth = 200;
constexpr int kMaxNameWant = 460;
constexpr int kMinShapesWidth = 150;
constexpr int kMaxShapesWant = 420;

const char* kNoteStyle =
    "QLabel { background: #e8f1fb; color: #0b3d6e; border: 1px solid #a9c8ec;"
    " border-radius: 4px; padding: 5px 8px; }";
const char* kErrorStyle =
    "QFrame#errorBar { background: #fdecea; border: 1px solid #f1aeb5; border-radius: 4px; }"
    " QFrame#errorBar QLabel { color: #8a1c14; background: transparent; }";

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      loader_(new TraceLoader(this)),
      model_(new KeyAveragesModel(this)),
      proxy_(new KeyAveragesProxy(this)),
      columnChoice_(static_cast<size_t>(Column::Count), -1) {
  setWindowTitle(QStringLiteral("attnscope"));
  setAcceptDrops(true);
  proxy_->setSourceModel(model_);

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(8, 6, 8, 4);
  layout->setSpacing(6);

  note_ = new QLabel(central);
  note_->setObjectName(QStringLiteral("sampleNote"));
  note_->setWordWrap(true);
  note_->setTextFormat(Qt::RichText);
  note_->setStyleSheet(QString::fromLatin1(kNoteStyle));
  note_->hide();
  layout->addWidget(note_);

  errorBar_ = new QFrame(central);
  errorBar_->setObjectName(QStringLiteral("errorBar"));
  errorBar_->setStyleSheet(QString::fromLatin1(kErrorStyle));
  auto* errLayout = new QHBoxLayout(errorBar_);
  errLayout->setContentsMargins(8, 4, 4, 4);
  errorText_ = new QLabel(errorBar_);
  errorText_->setObjectName(QStringLiteral("errorText"));
  errorText_->setWordWrap(true);
  errorText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* dismiss = new QToolButton(errorBar_);
  dismiss->setText(QStringLiteral("Dismiss"));
  dismiss->setAutoRaise(true);
  connect(dismiss, &QToolButton::clicked, errorBar_, &QWidget::hide);
  errLayout->addWidget(errorText_, 1);
  errLayout->addWidget(dismiss, 0, Qt::AlignTop);
  errorBar_->hide();
  layout->addWidget(errorBar_);

  layout->addWidget(buildControls());

  view_ = new QTableView(central);
  view_->setHorizontalHeader(new TwoLineHeaderView(view_));
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  view_->setAlternatingRowColors(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setWordWrap(false);
  view_->setTextElideMode(Qt::ElideRight);
  view_->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 8);
  auto* header = view_->horizontalHeader();
  header->setSectionsMovable(true);
  header->setHighlightSections(false);
  header->setMinimumSectionSize(40);
  header->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(header, &QHeaderView::customContextMenuRequested, this, &MainWindow::showHeaderMenu);
  view_->sortByColumn(KeyAveragesModel::columnOf(Column::SelfDevice), Qt::DescendingOrder);
  // Only the sorted column keeps room for the arrow: refit when it moves.
  connect(header, &QHeaderView::sortIndicatorChanged, this, [this] { fitColumns(); });
  view_->viewport()->installEventFilter(this);
  // The timeline on top, the table below; selection shared.
  auto* split = new QSplitter(Qt::Vertical, central);
  split->setObjectName(QStringLiteral("timelineSplitter"));
  timeline_ = new TimelinePanel(split);
  split->addWidget(timeline_);
  split->addWidget(view_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setChildrenCollapsible(false);
  new TimelineTableLink(timeline_, view_, model_, proxy_, this);
  layout->addWidget(split, 1);
  setCentralWidget(central);

  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("summary"));
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A long path must not widen the window: the label may be cut, its tooltip is not.
  summary_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  badEvents_ = new QLabel(this);
  badEvents_->setObjectName(QStringLiteral("badEvents"));
  statusBar()->addWidget(summary_, 1);
  statusBar()->addPermanentWidget(badEvents_);

  buildMenus();

  connect(proxy_, &QAbstractItemModel::rowsInserted, this, &MainWindow::updateRowCount);
  connect(proxy_, &QAbstractItemModel::rowsRemoved, this, &MainWindow::updateRowCount);
  connect(proxy_, &QAbstractItemModel::modelReset, this, &MainWindow::updateRowCount);
  connect(proxy_, &QAbstractItemModel::layoutChanged, this, &MainWindow::updateRowCount);

  connect(loader_, &TraceLoader::started, this, [this](const QString& path) {
    loadingPath_ = path;
    updateStatus();
  });
  connect(loader_, &TraceLoader::loaded, this, &MainWindow::showSnapshot);
  connect(loader_, &TraceLoader::failed, this, &MainWindow::showLoadError);

  updateRowCount();
  updateStatus();
  resize(1280, 800);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::chooseFile);
  open->setShortcut(QKeySequence::Open);
  QAction* sample = file->addAction(tr("Open &Bundled Sample"), this, &MainWindow::openBundledSample);
  sample->setStatusTip(tr("The H200 multi-head attention capture compiled into attnscope"));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::quit);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);
}

QWidget* MainWindow::buildControls() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(6);

  auto* groupLabel = new QLabel(tr("&Group by:"), bar);
  groupBy_ = new QComboBox(bar);
  groupBy_->setObjectName(QStringLiteral("groupBy"));
  groupBy_->addItem(tr("Name"), static_cast<int>(GroupBy::Name));
  groupBy_->addItem(tr("Input shape"), static_cast<int>(GroupBy::InputShape));
  groupBy_->setToolTip(tr("key_averages() or key_averages(group_by_input_shape=True)"));
  groupLabel->setBuddy(groupBy_);
  connect(groupBy_, &QComboBox::currentIndexChanged, this, &MainWindow::applyGroupBy);

  auto* filterLabel = new QLabel(tr("&Filter:"), bar);
  filter_ = new QLineEdit(bar);
  filter_->setObjectName(QStringLiteral("filter"));
  filter_->setClearButtonEnabled(true);
  filter_->setPlaceholderText(tr("Name contains… (check Regex for e.g. ^aten::)"));
  filter_->setMinimumWidth(320);
  filterLabel->setBuddy(filter_);
  regex_ = new QCheckBox(tr("Rege&x"), bar);
  regex_->setObjectName(QStringLiteral("regex"));
  connect(filter_, &QLineEdit::textChanged, this, &MainWindow::applyFilter);
  connect(regex_, &QCheckBox::toggled, this, &MainWindow::applyFilter);

  rowCount_ = new QLabel(bar);
  rowCount_->setObjectName(QStringLiteral("rowCount"));

  auto* legend = new QLabel(bar);
  legend->setToolTip(
      tr("Rows whose events ran on the GPU timeline: kernels, memcpy/memset and "
         "the device-side span (gpu_user_annotation) of a record_function scope."));
  legend->setTextFormat(Qt::RichText);
  legend->setText(
      tr("<span style=\"background:#2e7d32; color:white; font-weight:bold;\">&nbsp;GPU&nbsp;</span>"
         "&nbsp;device-side row"));

  row->addWidget(groupLabel);
  row->addWidget(groupBy_);
  row->addSpacing(12);
  row->addWidget(filterLabel);
  row->addWidget(filter_, 1);
  row->addWidget(regex_);
  row->addSpacing(12);
  row->addWidget(rowCount_);
  row->addStretch(0);
  row->addSpacing(12);
  row->addWidget(legend);
  return bar;
}

void MainWindow::openTrace(const QString& path) {
  lastDir_ = QFileInfo(path).absolutePath();
  loader_->loadFile(path);
}

void MainWindow::openBundledSample() {
  const QByteArray json = bundledSampleJson();
  if (json.isEmpty()) {
    showLoadError(bundledSamplePath() + tr(": the bundled sample is missing from this build"));
    return;
  }
  loader_->loadBytes(json, bundledSamplePath(), true);
}

void MainWindow::chooseFile() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open trace"), lastDir_,
                                                    tr("Traces (*.json *.json.gz *.gz);;All files (*)"));
  if (!path.isEmpty()) openTrace(path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls() && event->mimeData()->urls().size() == 1 &&
      event->mimeData()->urls().front().isLocalFile()) {
    event->acceptProposedAction();
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (urls.size() == 1 && urls.front().isLocalFile()) {
    openTrace(urls.front().toLocalFile());
    event->acceptProposedAction();
  }
}

void MainWindow::showSnapshot(std::shared_ptr<const TraceSnapshot> snap) {
  loadingPath_.clear();
  snapshot_ = std::move(snap);
  errorBar_->hide();
  if (snapshot_->bundled) {
    const QString note = bundledSampleNote();
    const QString prefix = QStringLiteral("Bundled sample:");
    QString html = note.toHtmlEscaped();
    if (note.startsWith(prefix)) {
      html = QStringLiteral("<b>%1</b>%2").arg(prefix.toHtmlEscaped(), note.mid(prefix.size()).toHtmlEscaped());
    }
    note_->setText(html);
    note_->show();
  } else {
    note_->hide();
  }
  if (!snapshot_->warning.isEmpty()) {
    errorText_->setText(tr("Loaded with a warning: %1").arg(snapshot_->warning));
    errorBar_->show();
  }
  setWindowTitle(tr("%1 — attnscope").arg(snapshot_->displayName));
  timeline_->setSnapshot(snapshot_);
  applyGroupBy();
  updateStatus();
  emit traceShown();
}

void MainWindow::showLoadError(const QString& message) {
  loadingPath_.clear();
  QString text = tr("Could not open %1").arg(message);
  if (snapshot_) text += tr(" — still showing %1.").arg(snapshot_->displayName);
  errorText_->setText(text);
  errorBar_->show();
  updateStatus();
  emit loadFailed(message);
}

void MainWindow::setGroupBy(GroupBy g) { groupBy_->setCurrentIndex(groupBy_->findData(static_cast<int>(g))); }

GroupBy MainWindow::groupBy() const { return static_cast<GroupBy>(groupBy_->currentData().toInt()); }

void MainWindow::setNameFilter(const QString& text, bool regex) {
  const QSignalBlocker block(regex_);
  regex_->setChecked(regex);
  filter_->setText(text);
  applyFilter();
}

void MainWindow::applyGroupBy() {
  if (!snapshot_) return;
  const bool shape = groupBy() == GroupBy::InputShape;
  if (attribution_ == Attribution::Corrected && snapshot_->correctedByName) {
    model_->setData(shape ? snapshot_->correctedByInputShape : snapshot_->correctedByName);
  } else {
    model_->setData(shape ? snapshot_->byInputShape : snapshot_->byName);
  }
  updateColumnVisibility();
  fitColumns();
  updateRowCount();
}

void MainWindow::setAttribution(Attribution a) {
  if (a == attribution_) return;
  attribution_ = a;
  applyGroupBy();
}

void MainWindow::applyFilter() {
  QString error;
  if (proxy_->setNameFilter(filter_->text(), regex_->isChecked(), &error)) {
    filter_->setStyleSheet({});
    filter_->setToolTip({});
  } else {
    filter_->setStyleSheet(QStringLiteral("QLineEdit { border: 1px solid #c62828; }"));
    filter_->setToolTip(error);
  }
  updateRowCount();
  if (!error.isEmpty()) rowCount_->setText(error);
}

void MainWindow::updateRowCount() {
  const int total = model_->rowCount();
  const int shown = proxy_->rowCount();
  rowCount_->setText(shown == total ? tr("%1 rows").arg(total) : tr("%1 of %2 rows").arg(shown).arg(total));
}

void MainWindow::updateStatus() {
  QString text;
  if (snapshot_) {
    const EventStore& store = *snapshot_->store;
    QStringList gpus;
    for (const DeviceProperties& d : store.meta().devices) gpus << QString::fromStdString(d.name);
    gpus.removeDuplicates();
    text = tr("%1 — %2%3 · loaded in %4 ms")
               .arg(snapshot_->bundled ? tr("bundled sample %1").arg(snapshot_->displayName) : snapshot_->path,
                    qs(traceSummaryLine(store)),
                    gpus.isEmpty() ? QString() : QStringLiteral(" · ") + gpus.join(QStringLiteral(", ")))
               .arg(snapshot_->loadMs);
    const uint64_t bad = store.badTotal();  // errors only; notes are listed in the tooltip
    QString errors;
    QString notes;
    for (int k = 0; k < kBadKindCount; ++k) {
      const auto kind = static_cast<BadKind>(k);
      const BadCount& b = store.bad(kind);
      if (b.count == 0) continue;
      (EventStore::isError(kind) ? errors : notes) +=
          tr("\n  %1: %2 (first at byte %3%4)")
              .arg(qs(badKindName(kind)))
              .arg(b.count)
              .arg(b.firstOffset)
              .arg(b.firstDetail.empty() ? QString() : QStringLiteral(": ") + QString::fromStdString(b.firstDetail));
    }
    QString tip = bad == 0 ? tr("No event was rejected.") : tr("Events that could not be loaded:") + errors;
    if (!notes.isEmpty()) tip += tr("\nNotes (not errors):") + notes;
    badEvents_->setText(tr("Bad events: %1").arg(QLocale().toString(static_cast<qulonglong>(bad))));
    badEvents_->setToolTip(tip);
    badEvents_->setStyleSheet(bad > 0 ? QStringLiteral("QLabel { color: #b26a00; font-weight: bold; }") : QString());
  } else {
    text = tr("No trace loaded. Open one with File > Open.");
    badEvents_->clear();
  }
  if (!loadingPath_.isEmpty()) text = tr("Loading %1 …").arg(loadingPath_) + QStringLiteral("   ") + text;
  summary_->setText(text);
  summary_->setToolTip(text);
}

void MainWindow::updateColumnVisibility() {
  const auto& ka = model_->averages();
  auto anyNonZero = [&](auto field) {
    if (!ka) return false;
    return std::any_of(ka->rows.begin(), ka->rows.end(), [&](const KeyAverageRow& r) { return r.*field != 0; });
  };
  const bool memory = snapshot_ && snapshot_->store->meta().profileMemory;
  const bool cpuMem = memory || anyNonZero(&KeyAverageRow::cpuMemBytes) || anyNonZero(&KeyAverageRow::selfCpuMemBytes);
  const bool deviceMem = anyNonZero(&KeyAverageRow::deviceMemBytes) || anyNonZero(&KeyAverageRow::selfDeviceMemBytes);
  for (int col = 0; col < static_cast<int>(Column::Count); ++col) {
    const Column c = KeyAveragesModel::columnAt(col);
    bool show = true;
    switch (c) {
      case Column::InputShapes:
        show = groupBy() == GroupBy::InputShape;
        break;
      case Column::CpuMem:
      case Column::SelfCpuMem:
        show = cpuMem;
        break;
      case Column::DeviceMem:
      case Column::SelfDeviceMem:
        show = deviceMem;
        break;
      default:
        break;
    }
    const int choice = columnChoice_[static_cast<size_t>(col)];
    if (choice >= 0) show = choice == 1;
    view_->setColumnHidden(col, !show);
  }
}

// Numeric columns get their contents' width; Name and Input Shapes share
// what is left (both elide, with the full text in the tooltip).
void MainWindow::fitColumns() {
  for (int col = 0; col < static_cast<int>(Column::Count); ++col) {
    const Column c = KeyAveragesModel::columnAt(col);
    if (view_->isColumnHidden(col)) continue;
    view_->resizeColumnToContents(col);
    if (c == Column::Name) nameWant_ = view_->columnWidth(col);
    if (c == Column::InputShapes) shapesWant_ = view_->columnWidth(col);
  }
  fitFlexibleColumns();
}

void MainWindow::fitFlexibleColumns() {
  const int nameCol = KeyAveragesModel::columnOf(Column::Name);
  const int shapesCol = KeyAveragesModel::columnOf(Column::InputShapes);
  auto* header = view_->horizontalHeader();
  int fixed = 0;
  for (int col = 0; col < header->count(); ++col) {
    if (col != nameCol && col != shapesCol && !header->isSectionHidden(col)) fixed += header->sectionSize(col);
  }
  const int avail = view_->viewport()->width() - fixed;
  if (header->isSectionHidden(shapesCol)) {
    header->resizeSection(nameCol, std::max(kMinNameWidth, avail));
    return;
  }
  const int nameWant = std::clamp(nameWant_, kMinNameWidth, kMaxNameWant);
  const int shapesWant = std::clamp(shapesWant_, kMinShapesWidth, kMaxShapesWant);
  int name = kMinNameWidth;
  int shapes = kMinShapesWidth;
  if (nameWant + shapesWant <= avail) {
    shapes = shapesWant;
    name = avail - shapes;  // the name takes any extra room
  } else if (kMinNameWidth + kMinShapesWidth < avail) {
    // Share the room above the minimums in proportion to what each wants.
    const int extra = avail - kMinNameWidth - kMinShapesWidth;
    const int wantExtraName = nameWant - kMinNameWidth;
    const int wantExtraShapes = shapesWant - kMinShapesWidth;
    const int toName =
        wantExtraName + wantExtraShapes == 0
            ? extra / 2
            : static_cast<int>(static_cast<qint64>(extra) * wantExtraName / (wantExtraName + wantExtraShapes));
    name += toName;
    shapes += extra - toName;
  }
  header->resizeSection(nameCol, name);
  header->resizeSection(shapesCol, shapes);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (watched == view_->viewport() && event->type() == QEvent::Resize) {
    auto* re = static_cast<QResizeEvent*>(event);
    if (re->size().width() != re->oldSize().width()) fitFlexibleColumns();
  }
  return QMainWindow::eventFilter(watched, event);
}

void MainWindow::showHeaderMenu(const QPoint& pos) {
  QMenu menu(this);
  for (int col = 0; col < static_cast<int>(Column::Count); ++col) {
    if (KeyAveragesModel::columnAt(col) == Column::Name) continue;
    QAction* a = menu.addAction(model_->headerData(col, Qt::Horizontal).toString());
    a->setCheckable(true);
    a->setChecked(!view_->isColumnHidden(col));
    connect(a, &QAction::toggled, this, [this, col](bool on) {
      columnChoice_[static_cast<size_t>(col)] = on ? 1 : 0;
      updateColumnVisibility();
      fitColumns();
    });
  }
  emit headerMenuAboutToShow(&menu, view_->horizontalHeader()->logicalIndexAt(pos));
  menu.exec(view_->horizontalHeader()->mapToGlobal(pos));
}

}  // namespace attnscope::ui
