// The Kernels tab: GPU kernels grouped by name, by launching op, or by grid and block.
#include <QComboBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>
#include <cmath>
#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/text/duration.h"
#include "ui/common/background.h"
#include "ui/common/export.h"
#include "ui/common/loaded_trace.h"
#include "ui/common/text.h"
#include "ui/table/sort_header_view.h"
#include "ui/views/views_detail.h"
#include "ui/views/views_panels.h"
#ifdef ATTNSCOPE_HAVE_CHARTS
#endif

namespace attnscope::ui {

using namespace views_detail;

// ---- Kernels ---------------------------------------------------------------------------

KernelsPanel::KernelsPanel(QWidget* parent)
    : ViewPanel(parent), grouping_(new QComboBox(this)), table_(new QTableView(this)), model_(new GridModel(this)) {
  setObjectName(QStringLiteral("kernelsPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  grouping_->setObjectName(QStringLiteral("kernelGrouping"));
  grouping_->addItem(tr("by kernel name"), static_cast<int>(KernelGrouping::Name));
  grouping_->addItem(tr("by kernel and the op that launched it"), static_cast<int>(KernelGrouping::NameAndOp));
  grouping_->addItem(tr("by kernel, grid and block"), static_cast<int>(KernelGrouping::NameAndLaunch));
  auto* groupLabel = new QLabel(tr("Group:"), this);
  groupLabel->setBuddy(grouping_);
  bar->addWidget(groupLabel);
  bar->addWidget(grouping_);
  summary_ = new QLabel(this);
  bar->addWidget(summary_, 1);
  layout->addLayout(bar);
  proxy_ = sortedProxy(this, model_);
  table_->setObjectName(QStringLiteral("kernelsTable"));
  table_->setModel(proxy_);
  setupTable(table_);
  layout->addWidget(table_, 1);
  connect(grouping_, &QComboBox::currentIndexChanged, this, [this] {
    ++generation_;
    if (trace_) compute();
  });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (!cur.isValid() || !view_) return;
    const int row = proxy_->mapToSource(cur).row();
    if (row >= 0 && static_cast<size_t>(row) < view_->rows.size())
      emit highlightRequested(view_->rows[static_cast<size_t>(row)].events);
  });
}

void KernelsPanel::compute() {
  const auto grouping = static_cast<KernelGrouping>(grouping_->currentData().toInt());
  computeInBackground(
      [snap = trace_->snapshot, grouping] { return std::make_shared<const KernelView>(kernelView(*snap, grouping)); },
      [this](std::shared_ptr<const KernelView> v) {
        view_ = std::move(v);
        fill();
      });
}

void KernelsPanel::fill() {
  using K = GridModel::Kind;
  const auto grouping = static_cast<KernelGrouping>(grouping_->currentData().toInt());
  QVector<GridModel::Column> cols{{tr("Kind"), K::Text, {}}, {tr("Kernel"), K::Text, {}}};
  if (grouping == KernelGrouping::NameAndOp) cols.push_back({tr("Launched by"), K::Text, {}});
  if (grouping == KernelGrouping::NameAndLaunch) cols.push_back({tr("Launch shape"), K::Text, {}});
  cols += {{tr("Calls"), K::Count, {}},
           {tr("Total"), K::Time, {}},
           {tr("Mean"), K::Time, {}},
           {tr("Min"), K::Time, {}},
           {tr("Max"), K::Time, {}},
           {tr("Share of GPU time"), K::Percent, tr("Of the trace's kernels, copies and memsets")},
           {tr("Grid"), K::Text, {}},
           {tr("Block"), K::Text, {}},
           {tr("Registers/thread"), K::Text, {}},
           {tr("Shared memory"), K::Text, tr("Bytes per block, static and dynamic")},
           {tr("Blocks per SM"), K::Number, {}},
           {tr("Occupancy (est.)"), K::Percent, tr("Kineto's est. achieved occupancy, weighted by time")},
           {tr("Tensor Cores"), K::Text, tr("By the kernel's name (MMA families: xmma, hmma, gmma, h1688, ...)")},
           {tr("Ops that launched it"), K::Text, {}}};
  auto intCell = [](int32_t x) { return x == -1 ? QVariant() : x == -2 ? QVariant(tr("varies")) : QVariant(x); };
  QVector<QVector<QVariant>> rows;
  for (const KernelRow& r : view_->rows) {
    QVector<QVariant> row{r.family == Family::Kernel      ? tr("kernel")
                          : r.family == Family::GpuMemcpy ? tr("memcpy")
                          : r.family == Family::GpuMemset ? tr("memset")
                                                          : tr("sync (a wait)"),
                          qs(r.name)};
    if (grouping == KernelGrouping::NameAndOp) row.push_back(r.op.empty() ? tr("(none linked)") : qs(r.op));
    if (grouping == KernelGrouping::NameAndLaunch) row.push_back(qs(r.launch));
    QStringList ops;
    for (const auto& o : r.ops) ops << qs(o);
    row += {QVariant::fromValue<qulonglong>(r.calls),
            QVariant::fromValue<qlonglong>(r.totalNs),
            QVariant::fromValue<qlonglong>(std::llround(r.meanNs)),
            QVariant::fromValue<qlonglong>(r.minNs),
            QVariant::fromValue<qlonglong>(r.maxNs),
            r.sharePct,
            qs(r.grid),
            qs(r.block),
            intCell(r.registersPerThread),
            intCell(r.sharedMemory),
            r.blocksPerSm < 0 ? QVariant() : QVariant(r.blocksPerSm),
            r.occupancyPct < 0 ? QVariant() : QVariant(r.occupancyPct),
            r.family == Family::Kernel ? (r.tensorCores ? tr("yes") : tr("no")) : QVariant(),
            ops.join(QStringLiteral(", "))};
    rows.push_back(row);
  }
  model_->setRows(cols, rows);
  table_->setColumnWidth(1, 360);
  for (int c = 2; c < model_->columnCount(); ++c) table_->resizeColumnToContents(c);
  summary_->setText(tr("%1 rows · GPU work %2 (kernels, copies, memsets; sync records are waits, listed last). "
                       "Click a header to sort; select a kernel to light it on the timeline.")
                        .arg(view_->rows.size())
                        .arg(qs(spanDurationText(view_->gpuWorkNs))));
}

bool KernelsPanel::exportTo(const QString& path, QString* error) const {
  if (!view_) {
    if (error) *error = tr("the kernel view is not computed yet");
    return false;
  }
  // The rows in the order shown.
  KernelView shown;
  shown.gpuWorkNs = view_->gpuWorkNs;
  for (int r = 0; r < proxy_->rowCount(); ++r)
    shown.rows.push_back(view_->rows[static_cast<size_t>(proxy_->mapToSource(proxy_->index(r, 0)).row())]);
  const bool json = path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive);
  const std::string text = json ? kernelViewJson(shown) : kernelViewCsv(shown);
  return writeFileAtomically(path, QByteArray::fromStdString(text), error);
}

}  // namespace attnscope::ui
