// Host memory for a case's large buffers (inputs drawn here, references, outputs downloaded):
// large allocations are advised into transparent huge pages, and a HostBytes vector is not
// zeroed when it grows, so that the parallel code that fills it first is also what faults its
// pages in, on every core. A zeroing resize faulted a 2^31-element case's 17 GB of inputs on
// one thread: 19 s of its 28 on the H200.
#pragma once
#include <cstddef>
#include <new>
#include <vector>

namespace kq {

// At least `bytes` (and at least one) of host memory, 256-byte aligned; from 4 MiB, 2 MiB aligned
// and advised into huge pages. Throws std::bad_alloc. Freed by host_free.
void* host_alloc(std::size_t bytes);
void host_free(void* p) noexcept;

template <class T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <class U>
  HostAllocator(const HostAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(host_alloc(n * sizeof(T))); }
  void deallocate(T* p, std::size_t) noexcept { host_free(p); }
  // Growing default-initialises: the bytes are whatever the first writer puts there.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(static_cast<A&&>(a)...);
  }
  friend bool operator==(const HostAllocator&, const HostAllocator&) { return true; }
};

using HostBytes = std::vector<unsigned char, HostAllocator<unsigned char>>;

}  // namespace kq
