// Writing what the window shows: the table (CSV / JSON / Markdown / text,
// through core's renderers), the trace (Chrome JSON, with the engine's
// metadata kept), the copied selection. Files are written atomically: a
// failure leaves no partial file and returns a message naming the path.
#pragma once

#include <QByteArray>
#include <QString>
#include <optional>
#include <vector>

#include "core/store/event_store.h"
#include "core/tables/key_averages.h"
#include "core/tables/table_format.h"

class QAbstractItemModel;
class QTableView;

namespace attnscope::ui {

// The rows given (in that order, e.g. what the view shows after filter,
// sort and top-N) rendered like `attnscope-cli table --format ...`: the %
// columns keep the whole table's denominators, as torch's table does.
QByteArray renderRows(const KeyAverages& ka, const std::vector<const KeyAverageRow*>& rows, TableFormat format,
                      Column sortBy, bool ascending);

// The format an export file name asks for (.csv .json .md .markdown .txt).
std::optional<TableFormat> formatForPath(const QString& path);

// The trace as Chrome JSON (torch's Kineto schema), with the "attnscope"
// engine metadata when the store has it.
QByteArray traceJson(const EventStore& store);

// Atomic write (core's writeFileAtomic): false and *error on failure.
bool writeFileAtomically(const QString& path, const QByteArray& data, QString* error);

// The selected rows' visible columns as tab-separated text with a header
// line (what Copy puts on the clipboard).
QString selectionAsTsv(const QTableView& view);

}  // namespace attnscope::ui
