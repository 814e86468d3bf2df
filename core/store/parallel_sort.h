// A large sort over threads: halves sorted at once, the first here and the second on a new thread (each
// split again while `parts` remain), then merged. For a comparison under which no two distinct items are
// equal (an item's place in a list breaks every tie) the result is std::sort's, item for item; where
// items may compare equal, which of them comes first may differ (the evidence's pieces of one stretch,
// summed whatever their order). The merge takes a buffer of up to half the items (std::inplace_merge; a
// slower merge in place if there is no memory for it); std::sort takes none.
#pragma once

#include <algorithm>
#include <cstddef>

#include "core/store/threads.h"

namespace attnscope {

namespace detail {
template <typename It, typename Less>
void sortInParts(It first, It last, const Less& less, size_t minItems, unsigned parts) {
  const auto n = static_cast<size_t>(last - first);
  // At least two items a part: below that a thread costs more than it sorts.
  if (parts < 2 || n < minItems || n < 2 * size_t{parts}) {
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

// Sorts [first, last) by `less` in up to workerThreads() parts when it holds at least `usualMin` items
// (parallelMinEvents(usualMin): the tests lower it), else here. The parts' threads are new ones, on top of
// any the caller runs on (the evidence's causes are jobs on the open's threads already): a large trace's
// few large sorts are worth a thread each.
// Never below 1,024 items, whatever the tests ask: a thread per small sort made a test that forces every
// split (ATTNSCOPE_PARALLEL_MIN_EVENTS=1) start thousands of them, past its time under ASan.
template <typename It, typename Less>
void parallelSort(It first, It last, const Less& less, size_t usualMin = size_t{1} << 18) {
  detail::sortInParts(first, last, less, std::max<size_t>(parallelMinEvents(usualMin), 1024), workerThreads());
}

}  // namespace attnscope
