#include "ui/panels/glossary_dock.h"

#include <QFile>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "core/explain/glossary.h"
#include "ui/common/text.h"
#include "ui/table/sort_header_view.h"

static void initGlossaryResources() { Q_INIT_RESOURCE(glossary); }

namespace attnscope::ui {
namespace {

QString categoryOfCoreKey(const QString& key) {
  static const QStringList columns = {QStringLiteral("Self CUDA"), QStringLiteral("CUDA total")};
  static const QStringList families = {QStringLiteral("gpu_user_annotation"), QStringLiteral("user_annotation")};
  static const QStringList concepts = {QStringLiteral("correlation"), QStringLiteral("launch latency"),
                                       QStringLiteral("host window")};
  if (columns.contains(key)) return QStringLiteral("Column");
  if (families.contains(key)) return QStringLiteral("Event family");
  if (concepts.contains(key)) return QStringLiteral("Concept");
  return QStringLiteral("Event");
}

}  // namespace

std::vector<GlossaryItem> loadGlossary() {
  static const bool once = (initGlossaryResources(), true);
  (void)once;
  std::vector<GlossaryItem> items;
  QFile f(QStringLiteral(":/glossary/glossary.json"));
  if (f.open(QIODevice::ReadOnly)) {
    const QJsonArray entries = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("entries")).toArray();
    for (const QJsonValue v : entries) {
      const QJsonObject o = v.toObject();
      items.push_back({o.value(QStringLiteral("key")).toString(), o.value(QStringLiteral("category")).toString(),
                       o.value(QStringLiteral("text")).toString()});
    }
  }
  for (const GlossaryEntry& e : glossary()) {
    const QString key = qs(e.key);
    auto it = std::find_if(items.begin(), items.end(), [&](const GlossaryItem& g) { return g.key == key; });
    GlossaryItem item{key, categoryOfCoreKey(key), qs(e.text)};
    if (it != items.end())
      *it = item;
    else
      items.push_back(item);
  }
  std::stable_sort(items.begin(), items.end(), [](const GlossaryItem& a, const GlossaryItem& b) {
    return a.category == b.category ? a.key.compare(b.key, Qt::CaseInsensitive) < 0 : a.category < b.category;
  });
  return items;
}

GlossaryModel::GlossaryModel(QObject* parent) : TableModelBase(parent) {}

void GlossaryModel::setItems(std::vector<GlossaryItem> items) {
  beginResetModel();
  items_ = std::move(items);
  endResetModel();
}

int GlossaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(items_.size());
}
int GlossaryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant GlossaryModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o == Qt::Horizontal && role == Qt::DisplayRole)
    return section == Term ? tr("Term") : section == Category ? tr("Kind") : QVariant();
  return TableModelBase::headerData(section, o, role);
}

QVariant GlossaryModel::cell(int row, int col, int role) const {
  const GlossaryItem& g = items_[static_cast<size_t>(row)];
  switch (role) {
    case Qt::DisplayRole:
    case SortRole:
      return col == Term ? g.key : g.category;
    case TextRole:
      return g.text;
    case Qt::ToolTipRole:
      return g.text;
    default:
      return {};
  }
}

int GlossaryModel::find(const QString& name, int family) const {
  const QString trimmed = name.trimmed();
  int best = -1;
  qsizetype bestLen = 0;
  for (size_t i = 0; i < items_.size(); ++i) {
    const QString& k = items_[i].key;
    if (k.compare(trimmed, Qt::CaseInsensitive) == 0) return static_cast<int>(i);
    if (trimmed.startsWith(k) && k.size() > bestLen) {
      best = static_cast<int>(i);
      bestLen = k.size();
    }
  }
  if (best >= 0) return best;
  if (family >= 0 && family < kFamilyCount) {
    const QString fam = qs(familyName(static_cast<Family>(family)));
    for (size_t i = 0; i < items_.size(); ++i)
      if (items_[i].key == fam) return static_cast<int>(i);
  }
  return -1;
}

GlossaryDock::GlossaryDock(QWidget* parent)
    : QWidget(parent), model_(new GlossaryModel(this)), proxy_(new QSortFilterProxyModel(this)) {
  setObjectName(QStringLiteral("glossary"));
  model_->setItems(loadGlossary());
  proxy_->setSourceModel(model_);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setFilterKeyColumn(-1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  search_ = new QLineEdit(this);
  search_->setObjectName(QStringLiteral("glossarySearch"));
  search_->setPlaceholderText(tr("Search the glossary…"));
  search_->setClearButtonEnabled(true);
  auto* searchRow = new QHBoxLayout;
  auto* searchLabel = new QLabel(tr("Search:"), this);
  searchLabel->setBuddy(search_);
  searchRow->addWidget(searchLabel);
  searchRow->addWidget(search_, 1);
  layout->addLayout(searchRow);
  auto* split = split_ = new QSplitter(Qt::Vertical, this);
  list_ = new QTableView(split);
  list_->setModel(proxy_);
  useSortableTable(list_);
  list_->setSelectionBehavior(QAbstractItemView::SelectRows);
  list_->setSelectionMode(QAbstractItemView::SingleSelection);
  list_->verticalHeader()->hide();
  list_->horizontalHeader()->setSectionResizeMode(GlossaryModel::Term, QHeaderView::Stretch);
  list_->horizontalHeader()->setSectionResizeMode(GlossaryModel::Category, QHeaderView::ResizeToContents);
  list_->verticalHeader()->setDefaultSectionSize(list_->fontMetrics().height() + 6);
  list_->setWordWrap(false);
  text_ = new QTextBrowser(split);
  text_->setObjectName(QStringLiteral("glossaryText"));
  text_->setOpenLinks(false);
  split->addWidget(list_);
  split->addWidget(text_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
  // Once the user drags the splitter, their sizes stay.
  connect(split, &QSplitter::splitterMoved, this, [this] { userSized_ = true; });
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& t) {
    // Search in the text too: a filter on the term and the explanation.
    proxy_->setFilterRole(Qt::DisplayRole);
    proxy_->setFilterFixedString(t);
    if (proxy_->rowCount() == 0 && !t.isEmpty()) {
      proxy_->setFilterRole(GlossaryModel::TextRole);
      proxy_->setFilterFixedString(t);
    }
    if (proxy_->rowCount() > 0) list_->selectRow(0);
  });
  connect(list_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& cur) {
    if (cur.isValid()) showRow(proxy_->mapToSource(cur).row());
  });
  text_->setPlaceholderText(
      tr("Pick a term, or right-click a table row or column header and "
         "choose \"Look up in glossary\"."));
}

void GlossaryDock::showRow(int sourceRow) {
  if (sourceRow < 0 || sourceRow >= model_->rowCount()) return;
  const GlossaryItem& g = model_->items()[static_cast<size_t>(sourceRow)];
  text_->setHtml(QStringLiteral("<h3>%1</h3><p><i>%2</i></p><p>%3</p>")
                     .arg(g.key.toHtmlEscaped(), g.category.toHtmlEscaped(), g.text.toHtmlEscaped()));
  emit lookedUp(g.key);
}

bool GlossaryDock::lookup(const QString& name, int family) {
  const int row = model_->find(name, family);
  if (row < 0) {
    text_->setHtml(tr("<p>No glossary entry for <b>%1</b>.</p>").arg(name.toHtmlEscaped()));
    return false;
  }
  search_->clear();
  const QModelIndex p = proxy_->mapFromSource(model_->index(row, 0));
  list_->setCurrentIndex(p);
  list_->scrollTo(p);
  showRow(row);
  return true;
}

void GlossaryDock::setSearch(const QString& text) { search_->setText(text); }

QString GlossaryDock::currentText() const { return text_->toPlainText(); }

void GlossaryDock::focusSearch() { search_->setFocus(); }

// In a wide, short dock the definition sits beside the list, with the dock's whole height.
void GlossaryDock::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // Side by side unless the dock is tall and narrow: a short dock split top/bottom leaves the
  // definition a few lines.
  const Qt::Orientation want = width() * 2 > height() * 3 || height() < 320 ? Qt::Horizontal : Qt::Vertical;
  if (split_->orientation() != want || !userSized_) {
    // The definition is what the user came for: two thirds of the room, the term list one.
    split_->setOrientation(want);
    const int room = want == Qt::Horizontal ? split_->width() : split_->height();
    if (room > 0) split_->setSizes({room / 3, room - room / 3});
  }
}

}  // namespace attnscope::ui
