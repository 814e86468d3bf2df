// Half-open time intervals [start, end) in ns: merging a list into a sorted, disjoint one, and
// taking from a remainder what a cover covers. The overview's parts and the diagnosis's wait-for
// split both account for every moment of a step with them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace attnscope {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;  // [start, end), sorted, disjoint once merged

inline Intervals merged(Intervals v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());  // a sorted list (a check) as it is
  Intervals out;
  for (const auto& [a, b] : v) {
    if (b <= a) continue;
    if (!out.empty() && a <= out.back().second)
      out.back().second = std::max(out.back().second, b);
    else
      out.emplace_back(a, b);
  }
  return out;
}

// The first interval of `v` at or after `from` that ends after `t` (a binary search: `v` sorted and
// disjoint, so its ends rise). A step's window is a small part of a long trace's lists: walking to it
// one interval at a time made the diagnosis's per-step split quadratic in the trace's length.
inline size_t firstEndingAfter(const Intervals& v, size_t from, int64_t t) {
  return static_cast<size_t>(std::partition_point(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(),
                                                  [t](const std::pair<int64_t, int64_t>& x) { return x.second <= t; }) -
                             v.begin());
}

// Takes from `remaining` (sorted, disjoint) what `cover` (sorted, disjoint) covers; returns how much
// that was. `taken`, when given, receives the pieces taken.
inline int64_t takeCovered(Intervals& remaining, const Intervals& cover, Intervals* taken = nullptr) {
  Intervals left;
  int64_t total = 0;
  size_t j = 0;
  for (auto [a, b] : remaining) {
    j = firstEndingAfter(cover, j, a);
    size_t k = j;
    int64_t cur = a;
    while (k < cover.size() && cover[k].first < b) {
      const int64_t cs = std::max(cover[k].first, cur), ce = std::min(cover[k].second, b);
      if (cs > cur) left.emplace_back(cur, cs);
      if (ce > cs) {
        total += ce - cs;
        if (taken) taken->emplace_back(cs, ce);
      }
      cur = std::max(cur, ce);
      if (cover[k].second > b) break;
      ++k;
    }
    if (cur < b) left.emplace_back(cur, b);
  }
  remaining = std::move(left);
  return total;
}

// The intersection of two sorted, disjoint lists.
inline Intervals intersected(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    // What ends before the other list's interval starts meets nothing after it either: skipped at once.
    if (a[i].second <= b[j].first) {
      i = firstEndingAfter(a, i, b[j].first);
      continue;
    }
    if (b[j].second <= a[i].first) {
      j = firstEndingAfter(b, j, a[i].first);
      continue;
    }
    const int64_t s = std::max(a[i].first, b[j].first), e = std::min(a[i].second, b[j].second);
    if (e > s) out.emplace_back(s, e);
    (a[i].second < b[j].second ? i : j)++;
  }
  return out;
}

}  // namespace attnscope
