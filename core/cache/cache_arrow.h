// Internal to core/cache: Arrow arrays over our columns (no copy) and our columns over Arrow arrays
// read from a mapped file (no copy), and the names the cache's files share.
#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/store/column.h"
#include "core/store/event_store.h"

namespace attnscope::cache::detail {

inline constexpr const char* kVersionKey = "attnscope_cache_version";
inline constexpr const char* kGenerationKey = "attnscope_cache_generation";
inline constexpr const char* kTableKey = "attnscope_table";
// The manifest keeps a hash of every block of this many bytes of every file. A cache of at most
// kWholeCheckBytes is checked whole on open; a larger one by each file's first and last block and
// kSampledBlocks blocks drawn at random (reading a huge cache whole would cost what the cache saves).
// The pages read for the check are given back at once.
inline constexpr size_t kBlockBytes = size_t{64} << 10;
inline constexpr uint64_t kWholeCheckBytes = uint64_t{64} << 20;
inline constexpr int kSampledBlocks = 16;

// The Arrow type that holds a column of T (enums by their underlying integer).
template <typename T>
std::shared_ptr<::arrow::DataType> arrowType() {
  using U = typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>, std::type_identity<T>>::type;
  if constexpr (std::is_same_v<U, int64_t>) return ::arrow::int64();
  if constexpr (std::is_same_v<U, uint64_t>) return ::arrow::uint64();
  if constexpr (std::is_same_v<U, int32_t>) return ::arrow::int32();
  if constexpr (std::is_same_v<U, uint32_t>) return ::arrow::uint32();
  if constexpr (std::is_same_v<U, uint16_t>) return ::arrow::uint16();
  if constexpr (std::is_same_v<U, uint8_t>) return ::arrow::uint8();
  if constexpr (std::is_same_v<U, float>) return ::arrow::float32();
  if constexpr (std::is_same_v<U, double>) return ::arrow::float64();
}

// An Arrow array over `n` values at `p` (not copied: they must outlive the write).
template <typename T>
std::shared_ptr<::arrow::Array> wrap(const T* p, size_t n) {
  auto buf =
      std::make_shared<::arrow::Buffer>(reinterpret_cast<const uint8_t*>(p), static_cast<int64_t>(n * sizeof(T)));
  return ::arrow::MakeArray(::arrow::ArrayData::Make(arrowType<T>(), static_cast<int64_t>(n), {nullptr, buf}, 0));
}

// One binary value (an archive of records) as a one-row array, not copied.
std::shared_ptr<::arrow::Array> wrapBlob(const std::string& bytes, std::vector<int64_t>* offsetsHolder);

// A table to write: named columns of one length, and the schema's metadata.
struct TableOut {
  explicit TableOut(std::string n) : name(std::move(n)) {}
  std::string name;  // file name without ".arrow"
  std::vector<std::shared_ptr<::arrow::Field>> fields;
  std::vector<std::shared_ptr<::arrow::Array>> arrays;
  std::vector<std::pair<std::string, std::string>> meta;
  template <typename T>
  void add(const std::string& col, const T* p, size_t n) {
    fields.push_back(::arrow::field(col, arrowType<T>(), false));
    arrays.push_back(wrap(p, n));
  }
  template <typename C>
  void addColumn(const std::string& col, const C& c) {
    add(col, c.data(), c.size());
  }
};

// A batch read from a mapped file, and the mapping its buffers point into.
struct TableIn {
  std::string name;
  std::shared_ptr<::arrow::RecordBatch> batch;
  std::shared_ptr<const void> keep;  // the mapping
  std::string* error = nullptr;      // the first failure, naming the file and column

  bool fail(const std::string& what) {
    if (error->empty()) *error = name + ".arrow: " + what;
    return false;
  }
  int64_t rows() const { return batch->num_rows(); }
  std::string meta(const std::string& key) const;
  // The column `col` as a view of the mapping; an empty column (and the failure noted) when it is
  // missing, of another type, of another length than `rows` (-1: any) or misaligned.
  template <typename T>
  Col<T> column(const std::string& col, int64_t rows = -1) {
    const auto a = batch->GetColumnByName(col);
    if (!a) return fail("no column '" + col + "'"), Col<T>();
    if (!a->type()->Equals(*arrowType<T>())) return fail("column '" + col + "' is " + a->type()->ToString()), Col<T>();
    if (rows >= 0 && a->length() != rows) return fail("column '" + col + "' has another length"), Col<T>();
    if (a->null_count() != 0) return fail("column '" + col + "' has nulls"), Col<T>();
    const auto& buf = a->data()->buffers[1];
    const uint8_t* p = buf ? buf->data() + a->offset() * static_cast<int64_t>(sizeof(T)) : nullptr;
    if (a->length() > 0 && (!p || reinterpret_cast<uintptr_t>(p) % alignof(T) != 0))
      return fail("column '" + col + "' is not aligned"), Col<T>();
    return Col<T>(reinterpret_cast<const T*>(p), static_cast<size_t>(a->length()), keep);
  }
  // The one binary value of column `col` (an archive), or "" with the failure noted.
  std::string_view blob(const std::string& col);
};

}  // namespace attnscope::cache::detail
