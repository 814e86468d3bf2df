// A small binary archive for the cache's nested records (the explanation, the tables' rows, the
// trace's metadata): little-endian scalars, length-prefixed strings and vectors, written front to back
// and read back in the same order. Reading never runs past the end: a short or damaged archive sets
// `bad` and yields zeros, and the cache that held it is rebuilt.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnscope::cache {

class ArchiveOut {
 public:
  template <typename T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void put(T v) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
  }
  void put(std::string_view s) {
    put<uint64_t>(s.size());
    bytes_.append(s.data(), s.size());
  }
  void put(const std::string& s) { put(std::string_view(s)); }
  void put(const char* s) { put(std::string_view(s)); }
  template <typename T>
  void put(const std::optional<T>& v) {
    put<uint8_t>(v.has_value());
    if (v) putItem(*v);
  }
  template <typename A, typename B>
  void put(const std::pair<A, B>& p) {
    putItem(p.first);
    putItem(p.second);
  }
  // Vectors of anything with a put(ArchiveOut&, const T&) or a put() overload above.
  template <typename T, typename Alloc>
  void put(const std::vector<T, Alloc>& v) {
    put<uint64_t>(v.size());
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const size_t at = bytes_.size();
      bytes_.resize(at + v.size() * sizeof(T));
      if (!v.empty()) std::memcpy(bytes_.data() + at, v.data(), v.size() * sizeof(T));
    } else {
      for (const auto& x : v) putItem(x);
    }
  }
  template <typename T, size_t N>
  void put(const T (&a)[N]) {
    for (const auto& x : a) putItem(x);
  }
  // A map as its (key, value) pairs by key, so equal maps give equal bytes.
  template <typename K, typename V>
  void put(const std::unordered_map<K, V>& m) {
    std::vector<std::pair<K, V>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end());
    put(v);
  }
  template <typename T>
  void putItem(const T& x) {
    if constexpr (requires { put(x); })
      put(x);
    else
      save(*this, x);
  }
  // ar(a, b, c): each in turn (the records' field lists use it for both directions).
  template <typename... T>
  void operator()(const T&... xs) {
    (putItem(xs), ...);
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class ArchiveIn {
 public:
  explicit ArchiveIn(std::string_view bytes) : p_(bytes) {}
  bool bad() const { return bad_; }
  bool atEnd() const { return at_ == p_.size(); }

  template <typename T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void get(T& v) {
    if (!take(sizeof(T))) {
      v = T{};
      return;
    }
    if constexpr (std::is_same_v<T, bool>) {
      v = p_[at_ - 1] != 0;  // any byte reads as a valid bool
    } else {
      std::memcpy(&v, p_.data() + at_ - sizeof(T), sizeof(T));
    }
  }
  void get(std::string& s) {
    uint64_t n = 0;
    get(n);
    if (!take(n)) {
      s.clear();
      return;
    }
    s.assign(p_.data() + at_ - n, n);
  }
  template <typename T>
  void get(std::optional<T>& v) {
    uint8_t has = 0;
    get(has);
    if (!has) {
      v.reset();
      return;
    }
    T x{};
    getItem(x);
    v = std::move(x);
  }
  template <typename A, typename B>
  void get(std::pair<A, B>& p) {
    getItem(p.first);
    getItem(p.second);
  }
  template <typename T, typename Alloc>
  void get(std::vector<T, Alloc>& v) {
    uint64_t n = 0;
    get(n);
    v.clear();
    // Each element takes at least one byte: a count past what is left is damage, not a huge vector.
    if (bad_ || n > p_.size() - at_) {
      bad_ = true;
      return;
    }
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      if (!take(n * sizeof(T))) return;
      v.resize(n);
      if (n) std::memcpy(v.data(), p_.data() + at_ - n * sizeof(T), n * sizeof(T));
    } else {
      v.resize(n);
      for (auto& x : v) {
        if (bad_) break;
        getItem(x);
      }
    }
  }
  template <typename T, size_t N>
  void get(T (&a)[N]) {
    for (auto& x : a) getItem(x);
  }
  template <typename K, typename V>
  void get(std::unordered_map<K, V>& m) {
    std::vector<std::pair<K, V>> v;
    get(v);
    m.clear();
    for (auto& [k, x] : v) m.emplace(k, std::move(x));
  }
  template <typename T>
  void getItem(T& x) {
    if constexpr (requires { get(x); })
      get(x);
    else
      load(*this, x);
  }
  template <typename... T>
  void operator()(T&... xs) {
    (getItem(xs), ...);
  }
  template <typename T>
  T read() {
    T x{};
    getItem(x);
    return x;
  }

 private:
  bool take(uint64_t n) {
    if (bad_ || n > p_.size() - at_) {
      bad_ = true;
      return false;
    }
    at_ += n;
    return true;
  }
  std::string_view p_;
  size_t at_ = 0;
  bool bad_ = false;
};

}  // namespace attnscope::cache
