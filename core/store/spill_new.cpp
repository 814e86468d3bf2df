// The program's global operator new and delete through spill::allocate (spill.h): while spilling is on,
// every large allocation of the program (a std::vector's buffer, a string's) is a file mapping, so the
// analyses' own arrays spill with the store's without their types knowing. While it is off, new is
// malloc and delete is free, after one comparison (is the pointer in the spilled range?).
//
// Linked only into the programs that open a user's traces (attnscope, attnscope-cli, attnscope-bench)
// and test_trace_cache, never into the core library: other test binaries and the engine (LibTorch)
// keep the toolchain's allocator. Never under a sanitizer: ASan and TSan replace new and delete with
// their own to see every heap block, and a spilled block would be invisible to them (CMake leaves this
// file out of sanitizer builds; the guard below holds should a sanitizer flag come another way).
#include <cstddef>
#include <new>

#include "core/store/spill.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define ATTNSCOPE_NO_SPILL_NEW 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATTNSCOPE_NO_SPILL_NEW 1
#endif

#ifndef ATTNSCOPE_NO_SPILL_NEW

void* operator new(std::size_t n) { return attnscope::spill::allocate(n); }
void* operator new[](std::size_t n) { return attnscope::spill::allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return attnscope::spill::allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return attnscope::spill::allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { attnscope::spill::deallocate(p, 0); }
void operator delete[](void* p) noexcept { attnscope::spill::deallocate(p, 0); }
void operator delete(void* p, std::size_t n) noexcept { attnscope::spill::deallocate(p, n); }
void operator delete[](void* p, std::size_t n) noexcept { attnscope::spill::deallocate(p, n); }
void operator delete(void* p, const std::nothrow_t&) noexcept { attnscope::spill::deallocate(p, 0); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { attnscope::spill::deallocate(p, 0); }

#endif
