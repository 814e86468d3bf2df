// A large sort on the open's threads: halves sorted at once on two threads (each half split again while
// threads remain), then merged. For a comparison that is a strict total order (no two items equal, as an
// item's place in a list breaks every tie) the result is std::sort's, item for item.
#pragma once

#include <algorithm>
#include <cstddef>

#include "core/store/threads.h"

namespace attnscope {

namespace detail {
template <typename It, typename Less>
void sortInParts(It first, It last, const Less& less, size_t minItems, unsigned parts) {
  const auto n = static_cast<size_t>(last - first);
  if (parts < 2 || n < minItems) {
    std::sort(first, last, less);
    return;
  }
  const It mid = first + static_cast<std::ptrdiff_t>(n / 2);
  runBoth(
      true, [&] { sortInParts(first, mid, less, minItems, parts / 2); },
      [&] { sortInParts(mid, last, less, minItems, parts - parts / 2); });
  std::inplace_merge(first, mid, last, less);
}
}  // namespace detail

// Sorts [first, last) by `less` on up to workerThreads() threads when it holds at least `usualMin` items
// (parallelMinEvents(usualMin): the tests lower it), else here.
template <typename It, typename Less>
void parallelSort(It first, It last, const Less& less, size_t usualMin = size_t{1} << 18) {
  detail::sortInParts(first, last, less, parallelMinEvents(usualMin), workerThreads());
}

}  // namespace attnscope
