// The Modules tab: the module tree with each module's time.
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTreeView>
#include <QVBoxLayout>
#include "core/explain/explanation.h"
#include "core/snapshot/trace_snapshot.h"
#include "core/text/duration.h"
#include "ui/common/background.h"
#include "ui/common/loaded_trace.h"
#include "ui/common/text.h"
#include "ui/table/sort_header_view.h"
#include "ui/views/views_detail.h"
#include "ui/views/views_panels.h"
#ifdef ATTNSCOPE_HAVE_CHARTS
#endif

namespace attnscope::ui {

using namespace views_detail;

// ---- Modules ---------------------------------------------------------------------------

ModulesPanel::ModulesPanel(QWidget* parent)
    : ViewPanel(parent), summary_(new QLabel(this)), tree_(new QTreeView(this)), model_(new QStandardItemModel(this)) {
  setObjectName(QStringLiteral("modulesPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  summary_->setWordWrap(true);
  layout->addWidget(summary_);
  tree_->setObjectName(QStringLiteral("modulesTree"));
  tree_->setModel(model_);
  tree_->setSortingEnabled(true);
  tree_->setUniformRowHeights(true);
  tree_->header()->setSectionsClickable(true);
  tree_->setSelectionBehavior(QAbstractItemView::SelectRows);
  model_->setSortRole(TableModelBase::SortRole);
  layout->addWidget(tree_, 1);
  connect(tree_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (!cur.isValid() || !view_) return;
    const QVariant node = cur.siblingAtColumn(0).data(Qt::UserRole + 7);
    if (node.isValid()) emit highlightRequested(view_->nodes[static_cast<size_t>(node.toInt())].events);
  });
}

void ModulesPanel::compute() {
  computeInBackground([snap = trace_->snapshot] { return std::make_shared<const ModuleView>(moduleView(*snap)); },
                      [this](std::shared_ptr<const ModuleView> v) {
                        view_ = std::move(v);
                        fill();
                      });
}

void ModulesPanel::fill() {
  model_->clear();
  model_->setHorizontalHeaderLabels({tr("Module"), tr("Calls"), tr("Host time"), tr("Self host time"),
                                     tr("GPU time launched"), tr("Self GPU time"), tr("GPU activities")});
  if (!view_->present) {
    summary_->setText(
        tr("This trace has no nn.Module events. Record with torch.profiler.profile(with_stack=True) "
           "(or with_modules=True) to see the module tree."));
    return;
  }
  summary_->setText(tr("%1 modules. GPU time is what each module launched while it ran (by correlation from its "
                       "thread's launches), so a module is not zero because it was not wrapped. Click a header to "
                       "sort; select a module to light its calls on the timeline.")
                        .arg(view_->nodes.size()));
  std::vector<QStandardItem*> items(view_->nodes.size(), nullptr);
  auto timeItem = [](int64_t ns) {
    auto* it = new QStandardItem(qs(durationText(ns)));
    it->setData(QVariant::fromValue<qlonglong>(ns), TableModelBase::SortRole);
    it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return it;
  };
  for (size_t i = 0; i < view_->nodes.size(); ++i) {
    const ModuleNode& m = view_->nodes[i];
    auto* name = new QStandardItem(qs(m.name));
    name->setData(qs(m.name), TableModelBase::SortRole);
    name->setData(static_cast<int>(i), Qt::UserRole + 7);
    name->setToolTip(qs(m.path));
    auto* calls = new QStandardItem(QString::number(m.calls));
    calls->setData(QVariant::fromValue<qulonglong>(m.calls), TableModelBase::SortRole);
    auto* acts = new QStandardItem(QString::number(m.gpuActivities));
    acts->setData(QVariant::fromValue<qulonglong>(m.gpuActivities), TableModelBase::SortRole);
    QList<QStandardItem*> row{
        name, calls, timeItem(m.hostNs), timeItem(m.selfHostNs), timeItem(m.gpuNs), timeItem(m.selfGpuNs), acts};
    for (auto* it : row) it->setEditable(false);
    if (m.parent < 0)
      model_->appendRow(row);
    else
      items[static_cast<size_t>(m.parent)]->appendRow(row);
    items[i] = name;
  }
  tree_->expandToDepth(2);
  tree_->header()->resizeSection(0, 320);
  for (int c = 1; c < model_->columnCount(); ++c) tree_->resizeColumnToContents(c);
}

}  // namespace attnscope::ui
