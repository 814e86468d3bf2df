// Arrow IPC file format by hand (see arrow_ipc.h). Flatbuffers are laid out front to back: a table's
// vtable, then the table (its scalars aligned to their size from the buffer's start), then what its
// offset fields point to, each offset patched once its target is placed (flatbuffers offsets point
// forward, vtable offsets either way).
#include "core/ranks/arrow_ipc.h"

#include <algorithm>
#include <cstring>

#include "core/write/atomic_file.h"

namespace attnscope::arrow {

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

namespace {

// Format constants (Schema.fbs, Message.fbs).
constexpr uint64_t kV5 = 4;  // MetadataVersion.V5
constexpr uint8_t kTypeInt = 2, kTypeFloat = 3, kTypeUtf8 = 5, kTypeBool = 6;
constexpr uint8_t kHeaderSchema = 1, kHeaderRecordBatch = 3;
constexpr uint64_t kDouble = 2;  // Precision.DOUBLE
constexpr char kMagic[] = "ARROW1";

// ---- Writing ----

// An object to lay out: a table, a string, a vector of offsets to objects, or a vector of structs.
struct Obj {
  enum Kind { TableK, StringK, ObjVecK, StructVecK } kind = TableK;
  struct Field {
    int id = 0;
    int size = 0;  // 1, 2, 4, 8; an offset field is 4
    uint64_t bits = 0;
    int child = -1;  // an offset field: index into kids
  };
  std::vector<Field> fields;
  std::vector<Obj> kids;  // a table's offset targets, or a vector's elements
  std::string bytes;      // a string's characters, or a struct vector's elements
  uint32_t count = 0;     // a struct vector's length
  size_t align = 8;       // a struct vector's element alignment

  Obj& scalar(int id, int size, uint64_t bits) {
    fields.push_back({id, size, bits, -1});
    return *this;
  }
  Obj& child(int id, Obj o) {
    fields.push_back({id, 4, 0, static_cast<int>(kids.size())});
    kids.push_back(std::move(o));
    return *this;
  }
};

Obj str(std::string_view s) {
  Obj o;
  o.kind = Obj::StringK;
  o.bytes = s;
  return o;
}
Obj vec(std::vector<Obj> v) {
  Obj o;
  o.kind = Obj::ObjVecK;
  o.kids = std::move(v);
  return o;
}
Obj structs(std::string bytes, uint32_t count) {
  Obj o;
  o.kind = Obj::StructVecK;
  o.bytes = std::move(bytes);
  o.count = count;
  return o;
}

void putLE(std::string& b, uint64_t v, int size) {
  for (int i = 0; i < size; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void padTo(std::string& b, size_t align) {
  while (b.size() % align) b.push_back('\0');
}
void patch32(std::string& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

size_t layout(std::string& b, const Obj& o) {
  switch (o.kind) {
    case Obj::StringK: {
      padTo(b, 4);
      const size_t at = b.size();
      putLE(b, o.bytes.size(), 4);
      b += o.bytes;
      b.push_back('\0');
      return at;
    }
    case Obj::StructVecK: {
      padTo(b, 4);
      while ((b.size() + 4) % o.align) b.push_back('\0');  // elements aligned, the length just before
      const size_t at = b.size();
      putLE(b, o.count, 4);
      b += o.bytes;
      return at;
    }
    case Obj::ObjVecK: {
      padTo(b, 4);
      const size_t at = b.size();
      putLE(b, o.kids.size(), 4);
      const size_t slots = b.size();
      b.append(4 * o.kids.size(), '\0');
      for (size_t i = 0; i < o.kids.size(); ++i) {
        const size_t c = layout(b, o.kids[i]);
        patch32(b, slots + 4 * i, static_cast<uint32_t>(c - (slots + 4 * i)));
      }
      return at;
    }
    case Obj::TableK:
      break;
  }
  int maxId = -1;
  for (const Obj::Field& f : o.fields) maxId = std::max(maxId, f.id);
  const size_t vtSize = 4 + 2 * static_cast<size_t>(maxId + 1);
  padTo(b, 2);
  const size_t vt = b.size();
  b.append(vtSize, '\0');
  padTo(b, 8);
  const size_t t = b.size();
  b.append(4, '\0');  // the soffset to the vtable
  std::vector<size_t> order(o.fields.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return o.fields[x].size > o.fields[y].size; });
  std::vector<size_t> pos(o.fields.size());
  std::vector<uint16_t> slot(static_cast<size_t>(maxId + 1), 0);
  for (size_t i : order) {
    const Obj::Field& f = o.fields[i];
    padTo(b, static_cast<size_t>(f.size));
    pos[i] = b.size();
    slot[static_cast<size_t>(f.id)] = static_cast<uint16_t>(pos[i] - t);
    putLE(b, f.bits, f.size);
  }
  std::string vtBytes;
  putLE(vtBytes, vtSize, 2);
  putLE(vtBytes, b.size() - t, 2);
  for (uint16_t s : slot) putLE(vtBytes, s, 2);
  b.replace(vt, vtSize, vtBytes);
  patch32(b, t, static_cast<uint32_t>(t - vt));
  for (size_t i = 0; i < o.fields.size(); ++i)
    if (o.fields[i].child >= 0) {
      const size_t c = layout(b, o.kids[static_cast<size_t>(o.fields[i].child)]);
      patch32(b, pos[i], static_cast<uint32_t>(c - pos[i]));
    }
  return t;
}

// A whole flatbuffer: the root offset, then the root table.
std::string finish(const Obj& root) {
  std::string b(8, '\0');
  const size_t at = layout(b, root);
  patch32(b, 0, static_cast<uint32_t>(at));
  padTo(b, 8);
  return b;
}

Obj schemaObj(const Table& t) {
  std::vector<Obj> fields;
  for (const Column& c : t.columns) {
    Obj f;
    f.child(0, str(c.name)).scalar(1, 1, 0);  // name; nullable: false (no nulls are written)
    Obj type;
    uint8_t typeId = 0;
    switch (c.type) {
      case ColumnType::Int64:
        typeId = kTypeInt;
        type.scalar(0, 4, 64).scalar(1, 1, 1);  // bitWidth, is_signed
        break;
      case ColumnType::Float64:
        typeId = kTypeFloat;
        type.scalar(0, 2, kDouble);
        break;
      case ColumnType::Utf8:
        typeId = kTypeUtf8;
        break;
      case ColumnType::Bool:
        typeId = kTypeBool;
        break;
    }
    f.scalar(2, 1, typeId).child(3, std::move(type)).child(5, vec({}));  // type_type, type, children
    fields.push_back(std::move(f));
  }
  std::vector<Obj> kvs;
  for (const auto& [k, v] : t.metadata) {
    Obj kv;
    kv.child(0, str(k)).child(1, str(v));
    kvs.push_back(std::move(kv));
  }
  Obj s;
  s.scalar(0, 2, 0).child(1, vec(std::move(fields)));  // endianness Little, fields
  if (!kvs.empty()) s.child(2, vec(std::move(kvs)));
  return s;
}

// An encapsulated message: continuation, metadata length, the flatbuffer padded to 8, the body.
std::string message(uint8_t headerType, Obj header, int64_t bodyLength) {
  Obj m;
  m.scalar(0, 2, kV5).scalar(1, 1, headerType).child(2, std::move(header));
  m.scalar(3, 8, static_cast<uint64_t>(bodyLength));
  std::string fb = finish(m);
  std::string out;
  putLE(out, 0xffffffffu, 4);
  putLE(out, fb.size(), 4);
  return out + fb;
}

void appendBuffer(std::string& body, std::string& bufs, const std::string& data) {
  putLE(bufs, body.size(), 8);
  putLE(bufs, data.size(), 8);
  body += data;
  padTo(body, 8);
}

}  // namespace

std::string encodeFile(const Table& t, std::string* error) {
  const size_t rows = t.columns.empty() ? 0 : t.columns.front().size();
  for (const Column& c : t.columns)
    if (c.size() != rows) {
      *error = "column '" + c.name + "' has " + std::to_string(c.size()) + " values, not " + std::to_string(rows);
      return {};
    }
  // The record batch's body: per column its validity buffer (empty: no nulls), then its values.
  std::string body, nodes, bufs;
  uint32_t nBufs = 0;
  for (const Column& c : t.columns) {
    putLE(nodes, rows, 8);
    putLE(nodes, 0, 8);
    appendBuffer(body, bufs, {});
    std::string data;
    switch (c.type) {
      case ColumnType::Int64:
        for (int64_t v : c.ints) putLE(data, static_cast<uint64_t>(v), 8);
        break;
      case ColumnType::Float64:
        for (double v : c.floats) {
          uint64_t bits = 0;
          std::memcpy(&bits, &v, 8);
          putLE(data, bits, 8);
        }
        break;
      case ColumnType::Bool:
        data.assign((rows + 7) / 8, '\0');
        for (size_t i = 0; i < rows; ++i)
          if (c.bools[i]) data[i / 8] = static_cast<char>(data[i / 8] | (1 << (i % 8)));
        break;
      case ColumnType::Utf8: {
        std::string offsets;
        size_t total = 0;
        putLE(offsets, 0, 4);
        for (const std::string& s : c.strings) {
          total += s.size();
          if (total > 0x7fffffff) {
            *error = "column '" + c.name + "' holds over 2 GiB of text";
            return {};
          }
          putLE(offsets, total, 4);
          data += s;
        }
        appendBuffer(body, bufs, offsets);
        ++nBufs;
        break;
      }
    }
    appendBuffer(body, bufs, data);
    nBufs += 2;
  }
  Obj batch;
  batch.scalar(0, 8, rows);
  batch.child(1, structs(nodes, static_cast<uint32_t>(t.columns.size())));
  batch.child(2, structs(bufs, nBufs));

  std::string out = std::string(kMagic) + std::string(2, '\0');
  out += message(kHeaderSchema, schemaObj(t), 0);
  const size_t batchAt = out.size();
  const std::string meta = message(kHeaderRecordBatch, std::move(batch), static_cast<int64_t>(body.size()));
  out += meta;
  out += body;
  putLE(out, 0xffffffffu, 4);  // end of stream
  putLE(out, 0, 4);
  std::string block;
  putLE(block, batchAt, 8);
  putLE(block, meta.size(), 4);
  putLE(block, 0, 4);  // padding
  putLE(block, body.size(), 8);
  Obj footer;
  footer.scalar(0, 2, kV5).child(1, schemaObj(t)).child(2, structs({}, 0)).child(3, structs(block, 1));
  const std::string fb = finish(footer);
  out += fb;
  putLE(out, fb.size(), 4);
  out += kMagic;
  return out;
}

bool writeFile(const std::string& path, const Table& t, std::string* error) {
  std::string e;
  const std::string bytes = encodeFile(t, &e);
  if (!e.empty()) {
    *error = path + ": " + e;
    return false;
  }
  return writeFileAtomic(path, bytes, error);
}

}  // namespace attnscope::arrow
