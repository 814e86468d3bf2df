// Reading the Arrow IPC files arrow_ipc.cpp writes: the footer, the schema (int64, float64, utf8, bool
// fields), each record batch's nodes and buffers. Every read is bounds-checked: a truncated or foreign
// file gives an error naming what is wrong, never a crash.
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/ranks/arrow_ipc.h"

namespace attnscope::arrow {

namespace {

constexpr uint8_t kTypeInt = 2, kTypeFloat = 3, kTypeUtf8 = 5, kTypeBool = 6;
constexpr uint8_t kHeaderRecordBatch = 3;

// A flatbuffer, read with bounds checks; the first failure is kept in `error`.
struct Fb {
  std::string_view b;
  std::string* error;

  bool fail(const std::string& what) {
    if (error->empty()) *error = what;
    return false;
  }
  uint64_t get(size_t at, int size) {
    if (at > b.size() || b.size() - at < static_cast<size_t>(size)) {
      fail("a read past the end of the metadata (offset " + std::to_string(at) + ")");
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < size; ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(b[at + static_cast<size_t>(i)])) << (8 * i);
    return v;
  }
  size_t root() { return static_cast<size_t>(get(0, 4)); }
  // The position of field `id` of the table at `t`, 0 when absent.
  size_t field(size_t t, int id) {
    const auto so = static_cast<int32_t>(static_cast<uint32_t>(get(t, 4)));
    const int64_t vt = static_cast<int64_t>(t) - so;
    if (vt < 0 || static_cast<size_t>(vt) >= b.size()) {
      fail("a table's vtable lies outside the metadata");
      return 0;
    }
    const size_t vtSize = static_cast<size_t>(get(static_cast<size_t>(vt), 2));
    const size_t slot = 4 + 2 * static_cast<size_t>(id);
    if (slot + 2 > vtSize) return 0;
    const size_t off = static_cast<size_t>(get(static_cast<size_t>(vt) + slot, 2));
    return off ? t + off : 0;
  }
  uint64_t scalar(size_t t, int id, int size, uint64_t dflt) {
    const size_t at = field(t, id);
    return at ? get(at, size) : dflt;
  }
  // The object an offset field points to, 0 when absent.
  size_t ref(size_t t, int id) {
    const size_t at = field(t, id);
    return at ? at + static_cast<size_t>(get(at, 4)) : 0;
  }
  std::string string(size_t t, int id) {
    const size_t s = ref(t, id);
    if (!s) return {};
    const size_t n = static_cast<size_t>(get(s, 4));
    if (s + 4 > b.size() || b.size() - s - 4 < n) {
      fail("a string runs past the end of the metadata");
      return {};
    }
    return std::string(b.substr(s + 4, n));
  }
  size_t length(size_t v) { return v ? static_cast<size_t>(get(v, 4)) : 0; }
  size_t element(size_t v, size_t i) {  // the i-th table of a vector of tables
    const size_t at = v + 4 + 4 * i;
    return at + static_cast<size_t>(get(at, 4));
  }
};

bool readSchema(Fb& fb, size_t schema, Table* out, std::string* error) {
  if (!schema) return fb.fail("the footer has no schema");
  const size_t fields = fb.ref(schema, 1);
  for (size_t i = 0; i < fb.length(fields) && error->empty(); ++i) {
    const size_t f = fb.element(fields, i);
    Column c;
    c.name = fb.string(f, 0);
    const auto typeId = static_cast<uint8_t>(fb.scalar(f, 2, 1, 0));
    const size_t type = fb.ref(f, 3);
    if (fb.ref(f, 4)) return fb.fail("column '" + c.name + "' is dictionary-encoded (not read here)");
    if (typeId == kTypeInt && type && fb.scalar(type, 0, 4, 0) == 64 && fb.scalar(type, 1, 1, 0) == 1) {
      c.type = ColumnType::Int64;
    } else if (typeId == kTypeFloat && type && fb.scalar(type, 0, 2, 0) == 2) {
      c.type = ColumnType::Float64;
    } else if (typeId == kTypeUtf8) {
      c.type = ColumnType::Utf8;
    } else if (typeId == kTypeBool) {
      c.type = ColumnType::Bool;
    } else {
      return fb.fail("column '" + c.name + "' has a type other than int64, float64, utf8 or bool (type id " +
                     std::to_string(typeId) + ")");
    }
    out->columns.push_back(std::move(c));
  }
  const size_t kvs = fb.ref(schema, 2);
  for (size_t i = 0; i < fb.length(kvs) && error->empty(); ++i) {
    const size_t kv = fb.element(kvs, i);
    out->metadata.emplace_back(fb.string(kv, 0), fb.string(kv, 1));
  }
  return error->empty();
}

uint64_t le(std::string_view b, size_t at, int size) {
  uint64_t v = 0;
  for (int i = 0; i < size; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(b[at + static_cast<size_t>(i)])) << (8 * i);
  return v;
}

// One record batch: its message at `offset` (metadata of `metaLen` bytes, then `bodyLen` bytes of body).
bool readBatch(std::string_view file, uint64_t offset, uint64_t metaLen, uint64_t bodyLen, Table* out,
               std::string* error) {
  const std::string where = "the record batch at byte " + std::to_string(offset);
  if (metaLen < 8 || offset > file.size() || file.size() - offset < metaLen ||
      file.size() - offset - metaLen < bodyLen) {
    *error = where + " lies outside the file";
    return false;
  }
  if (le(file, offset, 4) != 0xffffffffu) {
    *error = where + " has no continuation marker";
    return false;
  }
  const uint64_t fbLen = le(file, offset + 4, 4);
  if (fbLen > metaLen - 8) {
    *error = where + ": its metadata is longer than its block";
    return false;
  }
  Fb fb{file.substr(offset + 8, fbLen), error};
  const size_t msg = fb.root();
  if (fb.scalar(msg, 1, 1, 0) != kHeaderRecordBatch) return fb.fail(where + " is not a record batch");
  const size_t rb = fb.ref(msg, 2);
  if (!rb) return fb.fail(where + " has no header");
  if (fb.ref(rb, 3)) return fb.fail(where + " is compressed (not read here)");
  const auto rows = static_cast<size_t>(fb.scalar(rb, 0, 8, 0));
  const size_t nodes = fb.ref(rb, 1), bufs = fb.ref(rb, 2);
  if (!error->empty()) return false;
  const std::string_view body = file.substr(offset + metaLen, bodyLen);
  size_t nextBuf = 0;
  auto buffer = [&](std::string_view* data) {
    if (nextBuf >= fb.length(bufs)) return fb.fail(where + " has fewer buffers than its columns need");
    const size_t at = bufs + 4 + 16 * nextBuf++;
    const uint64_t bo = fb.get(at, 8), bl = fb.get(at + 8, 8);
    if (bo > body.size() || body.size() - bo < bl) return fb.fail(where + ": a buffer lies outside its body");
    *data = body.substr(bo, bl);
    return error->empty();
  };
  if (fb.length(nodes) != out->columns.size()) return fb.fail(where + " has a node count unlike the schema's");
  for (size_t ci = 0; ci < out->columns.size(); ++ci) {
    Column& c = out->columns[ci];
    const size_t node = nodes + 4 + 16 * ci;
    if (fb.get(node, 8) != rows) return fb.fail(where + ": column '" + c.name + "' has a length unlike the batch's");
    std::string_view validity, data, offsets;
    if (!buffer(&validity)) return false;
    if (fb.get(node + 8, 8) != 0) return fb.fail(where + ": column '" + c.name + "' has nulls (not read here)");
    if (c.type == ColumnType::Utf8 && !buffer(&offsets)) return false;
    if (!buffer(&data)) return false;
    const std::string bad =
        where + ": column '" + c.name + "' has a buffer too short for its " + std::to_string(rows) + " values";
    switch (c.type) {
      case ColumnType::Int64:
      case ColumnType::Float64:
        if (data.size() / 8 < rows) return fb.fail(bad);
        for (size_t i = 0; i < rows; ++i) {
          const uint64_t v = le(data, 8 * i, 8);
          if (c.type == ColumnType::Int64) {
            c.ints.push_back(static_cast<int64_t>(v));
          } else {
            double d = 0;
            std::memcpy(&d, &v, 8);
            c.floats.push_back(d);
          }
        }
        break;
      case ColumnType::Bool:
        if (data.size() < (rows + 7) / 8) return fb.fail(bad);
        for (size_t i = 0; i < rows; ++i) c.bools.push_back((static_cast<uint8_t>(data[i / 8]) >> (i % 8)) & 1);
        break;
      case ColumnType::Utf8:
        if (offsets.size() / 4 < rows + 1) return fb.fail(bad);
        for (size_t i = 0; i < rows; ++i) {
          const uint64_t a = le(offsets, 4 * i, 4), z = le(offsets, 4 * i + 4, 4);
          if (a > z || z > data.size()) return fb.fail(where + ": column '" + c.name + "' has a bad string offset");
          c.strings.emplace_back(data.substr(a, z - a));
        }
        break;
    }
  }
  return true;
}

}  // namespace

bool decodeFile(std::string_view bytes, Table* out, std::string* error) {
  *out = {};
  error->clear();
  if (bytes.size() < 18 || bytes.substr(0, 6) != "ARROW1" || bytes.substr(bytes.size() - 6) != "ARROW1") {
    *error = "not an Arrow IPC file (no ARROW1 magic at its start and end)";
    return false;
  }
  const uint64_t footerLen = le(bytes, bytes.size() - 10, 4);
  if (footerLen > bytes.size() - 18) {
    *error = "the footer length (" + std::to_string(footerLen) + ") is larger than the file";
    return false;
  }
  Fb fb{bytes.substr(bytes.size() - 10 - footerLen, footerLen), error};
  const size_t footer = fb.root();
  if (!readSchema(fb, fb.ref(footer, 1), out, error)) return false;
  if (fb.length(fb.ref(footer, 2)) != 0) return fb.fail("the file has dictionaries (not read here)");
  const size_t blocks = fb.ref(footer, 3);
  for (size_t i = 0; i < fb.length(blocks) && error->empty(); ++i) {
    const size_t at = blocks + 4 + 24 * i;
    const uint64_t off = fb.get(at, 8), metaLen = fb.get(at + 8, 4), bodyLen = fb.get(at + 16, 8);
    if (error->empty() && !readBatch(bytes, off, metaLen, bodyLen, out, error)) return false;
  }
  return error->empty();
}

bool readFile(const std::string& path, Table* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!decodeFile(ss.str(), out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

}  // namespace attnscope::arrow
