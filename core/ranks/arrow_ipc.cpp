// The per-rank summaries' tables as Arrow IPC files, written and read with Arrow C++ (the pyarrow
// wheel's libarrow, cmake/AttnscopeArrow.cmake). Without Arrow in the build, encoding and decoding
// fail with a message that says so.
#include "core/ranks/arrow_ipc.h"

#include "core/write/atomic_file.h"

#ifdef ATTNSCOPE_HAVE_ARROW
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>
#endif

namespace attnscope::ipc {

size_t Column::size() const {
  switch (type) {
    case ColumnType::Int64:
      return ints.size();
    case ColumnType::Float64:
      return floats.size();
    case ColumnType::Utf8:
      return strings.size();
    case ColumnType::Bool:
      return bools.size();
  }
  return 0;
}

const Column* Table::column(std::string_view name) const {
  for (const Column& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

std::string Table::meta(std::string_view key) const {
  for (const auto& [k, v] : metadata)
    if (k == key) return v;
  return {};
}

Column int64Column(std::string name, std::vector<int64_t> v) {
  Column c;
  c.name = std::move(name);
  c.type = ColumnType::Int64;
  c.ints = std::move(v);
  return c;
}
Column float64Column(std::string name, std::vector<double> v) {
  Column c;
  c.name = std::move(name);
  c.type = ColumnType::Float64;
  c.floats = std::move(v);
  return c;
}
Column utf8Column(std::string name, std::vector<std::string> v) {
  Column c;
  c.name = std::move(name);
  c.type = ColumnType::Utf8;
  c.strings = std::move(v);
  return c;
}
Column boolColumn(std::string name, std::vector<bool> v) {
  Column c;
  c.name = std::move(name);
  c.type = ColumnType::Bool;
  c.bools = std::move(v);
  return c;
}

#ifdef ATTNSCOPE_HAVE_ARROW

bool available() { return true; }

namespace {

template <typename Builder, typename V>
std::shared_ptr<::arrow::Array> build(const V& values, std::string* error) {
  Builder b;
  std::shared_ptr<::arrow::Array> out;
  ::arrow::Status st = b.Reserve(static_cast<int64_t>(values.size()));
  for (size_t i = 0; st.ok() && i < values.size(); ++i) st = b.Append(values[i]);
  if (st.ok()) st = b.Finish(&out);
  if (!st.ok()) *error = st.ToString();
  return out;
}

}  // namespace

std::string encodeFile(const Table& t, std::string* error) {
  error->clear();
  const int64_t rows = t.rows();
  ::arrow::FieldVector fields;
  ::arrow::ArrayVector arrays;
  for (const Column& c : t.columns) {
    if (static_cast<int64_t>(c.size()) != rows) {
      *error = "column '" + c.name + "' has " + std::to_string(c.size()) + " values, the table " + std::to_string(rows);
      return {};
    }
    std::shared_ptr<::arrow::Array> a;
    switch (c.type) {
      case ColumnType::Int64:
        a = build<::arrow::Int64Builder>(c.ints, error);
        break;
      case ColumnType::Float64:
        a = build<::arrow::DoubleBuilder>(c.floats, error);
        break;
      case ColumnType::Utf8:
        a = build<::arrow::StringBuilder>(c.strings, error);
        break;
      case ColumnType::Bool:
        a = build<::arrow::BooleanBuilder>(c.bools, error);
        break;
    }
    if (!a) return {};
    fields.push_back(::arrow::field(c.name, a->type(), /*nullable=*/false));
    arrays.push_back(std::move(a));
  }
  std::vector<std::string> keys, values;
  for (const auto& [k, v] : t.metadata) keys.push_back(k), values.push_back(v);
  auto schema = ::arrow::schema(fields, ::arrow::key_value_metadata(keys, values));
  auto sink = ::arrow::io::BufferOutputStream::Create();
  if (!sink.ok()) return *error = sink.status().ToString(), std::string();
  auto writer = ::arrow::ipc::MakeFileWriter(*sink, schema);
  if (!writer.ok()) return *error = writer.status().ToString(), std::string();
  ::arrow::Status st = (*writer)->WriteRecordBatch(*::arrow::RecordBatch::Make(schema, rows, arrays));
  if (st.ok()) st = (*writer)->Close();
  auto buf = st.ok() ? (*sink)->Finish() : ::arrow::Result<std::shared_ptr<::arrow::Buffer>>(st);
  if (!buf.ok()) return *error = buf.status().ToString(), std::string();
  return (*buf)->ToString();
}

namespace {

bool readColumn(const std::string& name, const ::arrow::ChunkedArray& chunks, Column* c, std::string* error) {
  c->name = name;
  const auto id = chunks.type()->id();
  for (const auto& a : chunks.chunks()) {
    if (a->null_count() > 0) {
      *error = "column '" + name + "' has null values (not read here)";
      return false;
    }
    const int64_t n = a->length();
    if (id == ::arrow::Type::INT64) {
      c->type = ColumnType::Int64;
      const auto& x = static_cast<const ::arrow::Int64Array&>(*a);
      for (int64_t i = 0; i < n; ++i) c->ints.push_back(x.Value(i));
    } else if (id == ::arrow::Type::DOUBLE) {
      c->type = ColumnType::Float64;
      const auto& x = static_cast<const ::arrow::DoubleArray&>(*a);
      for (int64_t i = 0; i < n; ++i) c->floats.push_back(x.Value(i));
    } else if (id == ::arrow::Type::STRING) {
      c->type = ColumnType::Utf8;
      const auto& x = static_cast<const ::arrow::StringArray&>(*a);
      for (int64_t i = 0; i < n; ++i) c->strings.emplace_back(x.GetView(i));
    } else if (id == ::arrow::Type::BOOL) {
      c->type = ColumnType::Bool;
      const auto& x = static_cast<const ::arrow::BooleanArray&>(*a);
      for (int64_t i = 0; i < n; ++i) c->bools.push_back(x.Value(i));
    } else {
      *error = "column '" + name + "' is of type " + chunks.type()->ToString() +
               " (int64, float64, utf8 and bool are read here)";
      return false;
    }
  }
  return true;
}

}  // namespace

namespace {

bool decode(std::string_view bytes, Table* out, std::string* error) {
  auto input = std::make_shared<::arrow::io::BufferReader>(std::make_shared<::arrow::Buffer>(
      reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size())));
  auto reader = ::arrow::ipc::RecordBatchFileReader::Open(input);
  if (!reader.ok()) {
    *error = "not an Arrow IPC file: " + reader.status().message();
    return false;
  }
  auto table = (*reader)->ToTable();
  ::arrow::Status st = table.ok() ? (*table)->ValidateFull() : table.status();
  if (!st.ok()) {
    *error = "unreadable Arrow IPC file: " + st.message();
    return false;
  }
  const auto& schema = (*table)->schema();
  if (const auto& md = schema->metadata())
    for (int64_t i = 0; i < md->size(); ++i) out->metadata.emplace_back(md->key(i), md->value(i));
  for (int i = 0; i < (*table)->num_columns(); ++i) {
    Column c;
    if (!readColumn(schema->field(i)->name(), *(*table)->column(i), &c, error)) return false;
    out->columns.push_back(std::move(c));
  }
  return true;
}

}  // namespace

bool decodeFile(std::string_view bytes, Table* out, std::string* error) {
  *out = {};
  error->clear();
  try {
    if (decode(bytes, out, error)) return true;
  } catch (const std::exception& e) {
    // Damage Arrow's checks let through into a length or a count (a huge string, say).
    *error = std::string("unreadable Arrow IPC file: ") + e.what();
  }
  *out = {};
  return false;
}

bool readFile(const std::string& path, Table* out, std::string* error) {
  auto file = ::arrow::io::ReadableFile::Open(path);
  if (!file.ok()) {
    *error = path + ": cannot open";
    return false;
  }
  auto size = (*file)->GetSize();
  auto bytes = size.ok() ? (*file)->Read(*size) : ::arrow::Result<std::shared_ptr<::arrow::Buffer>>(size.status());
  if (!bytes.ok()) {
    *error = path + ": " + bytes.status().message();
    return false;
  }
  if (!decodeFile(
          std::string_view(reinterpret_cast<const char*>((*bytes)->data()), static_cast<size_t>((*bytes)->size())), out,
          error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

#else  // no Arrow in this build

bool available() { return false; }

std::string encodeFile(const Table&, std::string* error) {
  *error = kNoArrow;
  return {};
}
bool decodeFile(std::string_view, Table* out, std::string* error) {
  *out = {};
  *error = kNoArrow;
  return false;
}
bool readFile(const std::string& path, Table* out, std::string* error) {
  *out = {};
  *error = path + ": " + kNoArrow;
  return false;
}

#endif

bool writeFile(const std::string& path, const Table& t, std::string* error) {
  std::string e;
  const std::string bytes = encodeFile(t, &e);
  if (!e.empty()) {
    *error = path + ": " + e;
    return false;
  }
  return writeFileAtomic(path, bytes, error);
}

}  // namespace attnscope::ipc
