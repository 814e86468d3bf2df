#include "ui/run/runs_dock.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/run/runs_model.h"

namespace attnscope::ui {

RunsDock::RunsDock(QWidget* parent) : QWidget(parent), model_(new RunsModel(this)), view_(new QTableView(this)) {
  setObjectName(QStringLiteral("runsPanel"));
  auto* rl = new QVBoxLayout(this);
  rl->setContentsMargins(6, 6, 6, 6);
  view_->setObjectName(QStringLiteral("runsView"));
  view_->setTabKeyNavigation(false);  // Tab leaves the list; the arrows move in it
  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
  view_->setWordWrap(false);
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view_->horizontalHeader()->setSectionResizeMode(RunsModel::Summary, QHeaderView::Stretch);
  rl->addWidget(view_, 1);
  auto* rb = new QHBoxLayout;
  auto* show = new QPushButton(tr("Show"), this);
  auto* cmp = new QPushButton(tr("Compare"), this);
  cmp->setObjectName(QStringLiteral("compareRuns"));
  cmp->setToolTip(tr("Select two runs (Ctrl+click) and compare them"));
  auto* save = new QPushButton(tr("Save…"), this);
  auto* reuse = new QPushButton(tr("Use settings"), this);
  reuse->setToolTip(tr("Put this run's options into the Run panel"));
  for (auto* b : {show, cmp, save, reuse}) rb->addWidget(b);
  rb->addStretch(1);
  rl->addLayout(rb);
  connect(show, &QPushButton::clicked, this, [this] { emit showRequested(currentRow()); });
  connect(view_, &QTableView::activated, this, [this](const QModelIndex& i) { emit showRequested(i.row()); });
  connect(cmp, &QPushButton::clicked, this, &RunsDock::compareRequested);
  connect(save, &QPushButton::clicked, this, &RunsDock::saveRequested);
  connect(reuse, &QPushButton::clicked, this, [this] { emit useSettingsRequested(currentRow()); });
  connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsDock::selectionChanged);
}

int RunsDock::currentRow() const { return view_->currentIndex().row(); }

QList<int> RunsDock::selectedRows() const {
  QList<int> rows;
  for (const QModelIndex& i : view_->selectionModel()->selectedRows()) rows << i.row();
  std::sort(rows.begin(), rows.end());
  return rows;
}

void RunsDock::selectQuietly(int row) {
  const QSignalBlocker block(view_->selectionModel());
  view_->selectRow(row);
}

}  // namespace attnscope::ui
