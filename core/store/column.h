// One column of the store: values it owns (a spill::Vector, so a huge column may live in a file) or a
// read-only view of someone else's memory (the columnar cache's mapping, kept alive by `keep`).
// Move-only; the data pointer survives a move. `uninitialized` gives a column of its own whose values the
// caller writes once (no pass of zeros before: the store's builder fills its columns on several threads).
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/store/spill.h"

namespace attnscope {

template <typename T>
class Col {
 public:
  Col() = default;
  explicit Col(spill::Vector<T> v) : own_(std::move(v)), p_(own_.data()), n_(own_.size()) {}
  Col(const T* p, size_t n, std::shared_ptr<const void> keep) : keep_(std::move(keep)), p_(p), n_(n) {}
  Col(Col&& o) noexcept
      : own_(std::move(o.own_)), keep_(std::move(o.keep_)), p_(o.p_), n_(o.n_), allocated_(o.allocated_) {
    o.p_ = nullptr;
    o.n_ = 0;
    o.allocated_ = false;
  }
  Col& operator=(Col&& o) noexcept {
    if (this != &o) {
      own_ = std::move(o.own_);
      keep_ = std::move(o.keep_);
      p_ = o.p_;
      n_ = o.n_;
      allocated_ = o.allocated_;
      o.p_ = nullptr;
      o.n_ = 0;
      o.allocated_ = false;
    }
    return *this;
  }
  // `n` values of its own, not initialised; `*out` is where the caller writes them (before any read).
  static Col uninitialized(size_t n, T** out) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
    Col c;
    *out = nullptr;
    if (n == 0) return c;
    T* p = static_cast<T*>(spill::allocate(n * sizeof(T)));
    c.keep_ = std::shared_ptr<const void>(p, [n](T* q) { spill::deallocate(q, n * sizeof(T)); });
    c.p_ = p;
    c.n_ = n;
    c.allocated_ = true;
    *out = p;
    return c;
  }
  Col(const Col&) = delete;
  Col& operator=(const Col&) = delete;

  const T* data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T& operator[](size_t i) const { return p_[i]; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }
  const T& back() const { return p_[n_ - 1]; }
  std::span<const T> span() const { return {p_, n_}; }
  operator std::span<const T>() const { return span(); }  // NOLINT: a column reads as a span
  bool owned() const { return !keep_ || allocated_; }     // not a view of a mapping

 private:
  spill::Vector<T> own_;
  std::shared_ptr<const void> keep_;
  const T* p_ = nullptr;
  size_t n_ = 0;
  bool allocated_ = false;  // keep_ frees memory of its own (uninitialized)
};

}  // namespace attnscope

namespace attnscope {

// A list of event ids that a table row or a finding owns (a spill::Vector while it is built) or
// reads from the columnar cache's mapping. Copyable; reads like a std::vector.
template <typename T>
class ListOf {
 public:
  ListOf() = default;
  ListOf(std::initializer_list<T> v) : own_(v) { sync(); }
  ListOf(const T* p, size_t n, std::shared_ptr<const void> keep) : keep_(std::move(keep)), p_(p), n_(n) {}
  ListOf(const ListOf& o) : own_(o.own_), keep_(o.keep_), p_(o.p_), n_(o.n_) {
    if (!keep_) sync();
  }
  ListOf(ListOf&& o) noexcept : own_(std::move(o.own_)), keep_(std::move(o.keep_)), p_(o.p_), n_(o.n_) {
    if (!keep_) sync();
    o.p_ = nullptr;
    o.n_ = 0;
  }
  ListOf& operator=(const ListOf& o) {
    if (this != &o) *this = ListOf(o);
    return *this;
  }
  ListOf& operator=(ListOf&& o) noexcept {
    if (this != &o) {
      own_ = std::move(o.own_);
      keep_ = std::move(o.keep_);
      p_ = o.p_;
      n_ = o.n_;
      if (!keep_) sync();
      o.p_ = nullptr;
      o.n_ = 0;
    }
    return *this;
  }
  template <typename Alloc>
  ListOf(const std::vector<T, Alloc>& v) : own_(v.begin(), v.end()) {  // NOLINT: a vector converts
    sync();
  }

  // Building (an owned list; a view becomes owned first).
  void push_back(T v) {
    own();
    own_.push_back(v);
    sync();
  }
  void reserve(size_t n) {
    own();
    own_.reserve(n);
    sync();
  }
  void clear() {
    own_.clear();
    keep_.reset();
    sync();
  }

  const T* data() const { return p_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T& operator[](size_t i) const { return p_[i]; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }
  const T& front() const { return p_[0]; }
  const T& back() const { return p_[n_ - 1]; }
  std::span<const T> span() const { return {p_, n_}; }
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT: reads as a vector
  bool operator==(const ListOf& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }

 private:
  void own() {
    if (keep_) {
      own_.assign(p_, p_ + n_);
      keep_.reset();
    }
  }
  void sync() {
    p_ = own_.data();
    n_ = own_.size();
  }
  spill::Vector<T> own_;
  std::shared_ptr<const void> keep_;
  const T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace attnscope
