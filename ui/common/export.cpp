#include "ui/common/export.h"

#include <QAbstractItemModel>
#include <QFileInfo>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QTableView>
#include <algorithm>

#include "core/write/atomic_file.h"
#include "core/write/trace_writer.h"

namespace attnscope::ui {

QByteArray renderRows(const KeyAverages& ka, const std::vector<const KeyAverageRow*>& rows, TableFormat format,
                      Column sortBy, bool ascending) {
  KeyAverages copy;
  copy.attribution = ka.attribution;
  copy.groupBy = ka.groupBy;
  copy.sumSelfCpuNs = ka.sumSelfCpuNs;
  copy.sumSelfDeviceNs = ka.sumSelfDeviceNs;
  copy.rows.reserve(rows.size());
  for (const KeyAverageRow* r : rows) {
    KeyAverageRow c = *r;
    c.events.clear();  // not rendered
    copy.rows.push_back(std::move(c));
  }
  TableOptions opt;
  opt.format = format;
  // The rows already are in the view's order; core's stable sort on the
  // same column keeps it.
  opt.sortBy = sortBy;
  opt.ascending = ascending;
  const std::string text = renderTable(copy, opt);
  return QByteArray(text.data(), static_cast<qsizetype>(text.size()));
}

std::optional<TableFormat> formatForPath(const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("csv")) return TableFormat::Csv;
  if (suffix == QLatin1String("json")) return TableFormat::Json;
  if (suffix == QLatin1String("md") || suffix == QLatin1String("markdown")) return TableFormat::Markdown;
  if (suffix == QLatin1String("txt")) return TableFormat::Text;
  return std::nullopt;
}

QByteArray traceJson(const EventStore& store) {
  const std::string& meta = store.meta().attnscopeJson;
  const std::string& record = store.meta().recordJson;
  std::string extra = meta.empty() ? std::string() : "\"attnscope\": " + meta;
  if (!record.empty()) extra += (extra.empty() ? "" : ", ") + std::string("\"attnscope_record\": ") + record;
  const std::string text = chromeTraceJson(store, extra);
  return QByteArray(text.data(), static_cast<qsizetype>(text.size()));
}

bool writeFileAtomically(const QString& path, const QByteArray& data, QString* error) {
  std::string why;
  if (path.isEmpty()) {
    if (error) *error = QStringLiteral("no file name given");
    return false;
  }
  if (!writeFileAtomic(path.toStdString(), std::string_view(data.constData(), static_cast<size_t>(data.size())),
                       &why)) {
    if (error) *error = QString::fromStdString(why);
    return false;
  }
  return true;
}

QString selectionAsTsv(const QTableView& view) {
  const QAbstractItemModel* m = view.model();
  if (!m || !view.selectionModel()) return {};
  QList<int> rows;
  for (const QModelIndex& i : view.selectionModel()->selectedIndexes())
    if (!rows.contains(i.row())) rows << i.row();
  std::sort(rows.begin(), rows.end());
  if (rows.isEmpty()) return {};
  // Columns in their on-screen order, hidden ones left out.
  const QHeaderView* h = view.horizontalHeader();
  QList<int> cols;
  for (int v = 0; v < h->count(); ++v) {
    const int logical = h->logicalIndex(v);
    if (!h->isSectionHidden(logical)) cols << logical;
  }
  auto clean = [](QString s) {
    return s.replace(QLatin1Char('\t'), QLatin1Char(' ')).replace(QLatin1Char('\n'), QLatin1Char(' '));
  };
  QStringList lines;
  QStringList head;
  for (int c : cols) head << clean(m->headerData(c, Qt::Horizontal).toString());
  lines << head.join(QLatin1Char('\t'));
  for (int r : rows) {
    QStringList cells;
    for (int c : cols) cells << clean(m->data(m->index(r, c)).toString());
    lines << cells.join(QLatin1Char('\t'));
  }
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace attnscope::ui
