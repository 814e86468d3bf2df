// Small tables of the few column types the per-rank summaries need (int64, float64, utf8 and bool, none
// of them null) as Arrow IPC files (Feather v2, uncompressed), written and read with Arrow C++ from the
// pyarrow wheel (cmake/AttnscopeArrow.cmake). pyarrow, pandas.read_feather and DuckDB read the files with
// no code of ours; the reader reads any file of those column types and says clearly what it cannot. A
// build without Arrow (ATTNSCOPE_ARROW=OFF, or no wheel) has the types but no files: every call fails
// with kNoArrow.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnscope::ipc {

inline constexpr const char* kNoArrow =
    "this build has no Arrow (built without the pyarrow wheel: pip install pyarrow and rebuild)";
// Whether this build has Arrow (files can be written and read).
bool available();

enum class ColumnType { Int64, Float64, Utf8, Bool };

struct Column {
  std::string name;
  ColumnType type = ColumnType::Int64;
  // The values, in the vector of the column's type (the others stay empty).
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::vector<bool> bools;
  size_t size() const;
  bool operator==(const Column&) const = default;
};

struct Table {
  std::vector<Column> columns;
  // The schema's custom_metadata (key, value), in order.
  std::vector<std::pair<std::string, std::string>> metadata;
  int64_t rows() const { return columns.empty() ? 0 : static_cast<int64_t>(columns.front().size()); }
  const Column* column(std::string_view name) const;
  std::string meta(std::string_view key) const;  // "" when absent
  bool operator==(const Table&) const = default;
};

// Helpers to build a table column by column.
Column int64Column(std::string name, std::vector<int64_t> v);
Column float64Column(std::string name, std::vector<double> v);
Column utf8Column(std::string name, std::vector<std::string> v);
Column boolColumn(std::string name, std::vector<bool> v);

// The file's bytes. Every column must have the same length (else `error` is set and "" returned).
std::string encodeFile(const Table& t, std::string* error);
// Parses a file's bytes; on anything it does not understand, sets `error` (what and where) and
// returns false.
bool decodeFile(std::string_view bytes, Table* out, std::string* error);

// To and from disk: the write is atomic (core/write/atomic_file.h); errors name the path.
bool writeFile(const std::string& path, const Table& t, std::string* error);
bool readFile(const std::string& path, Table* out, std::string* error);

}  // namespace attnscope::ipc
