#include "device/fenced.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "device/cuda_check.hpp"

#if KQ_HAVE_CUDA
#include <cuda.h>
#endif

namespace kq {
namespace {

std::size_t round_up(std::size_t n, std::size_t g) { return (n + g - 1) / g * g; }

FencedBlock host_alloc(std::size_t bytes, Fence fence) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  FencedBlock b;
  b.mapped_bytes = round_up(bytes == 0 ? 1 : bytes, page);
  b.reserved_bytes = b.mapped_bytes + 2 * page;
  void* p = mmap(nullptr, b.reserved_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap of a fenced host buffer failed");
  char* mapped = static_cast<char*>(p) + page;
  if (mprotect(mapped, b.mapped_bytes, PROT_READ | PROT_WRITE) != 0) {
    munmap(p, b.reserved_bytes);
    throw std::runtime_error("mprotect of a fenced host buffer failed");
  }
  b.reserved = p;
  b.data = fence == Fence::after ? mapped + b.mapped_bytes - bytes : mapped;
  return b;
}

#if KQ_HAVE_CUDA
// Driver entry points through the runtime, so kq needs no link against libcuda.
template <typename F>
F driver(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  cuda_check(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q), name);
  if (!fn || q != cudaDriverEntryPointSuccess)
    throw std::runtime_error(std::string("no driver entry point ") + name);
  return reinterpret_cast<F>(fn);
}

void cu_check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed (CUresult " + std::to_string(r) + ")");
}

FencedBlock cuda_alloc(std::size_t bytes, Fence fence) {
  int dev = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_check(cudaFree(nullptr), "creating the CUDA context");
  auto get_gran = driver<decltype(&cuMemGetAllocationGranularity)>("cuMemGetAllocationGranularity");
  auto reserve = driver<decltype(&cuMemAddressReserve)>("cuMemAddressReserve");
  auto create = driver<decltype(&cuMemCreate)>("cuMemCreate");
  auto map = driver<decltype(&cuMemMap)>("cuMemMap");
  auto access = driver<decltype(&cuMemSetAccess)>("cuMemSetAccess");

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  std::size_t gran = 0;
  cu_check(get_gran(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
           "cuMemGetAllocationGranularity");
  FencedBlock b;
  b.mapped_bytes = round_up(bytes == 0 ? 1 : bytes, gran);
  b.reserved_bytes = b.mapped_bytes + 2 * gran;
  CUdeviceptr base = 0;
  cu_check(reserve(&base, b.reserved_bytes, gran, 0, 0), "cuMemAddressReserve");
  CUmemGenericAllocationHandle h = 0;
  cu_check(create(&h, b.mapped_bytes, &prop, 0), "cuMemCreate");
  cu_check(map(base + gran, b.mapped_bytes, 0, h, 0), "cuMemMap");
  CUmemAccessDesc ad{};
  ad.location = prop.location;
  ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  cu_check(access(base + gran, b.mapped_bytes, &ad, 1), "cuMemSetAccess");
  b.handle = h;
  b.reserved = reinterpret_cast<void*>(base);
  char* mapped = reinterpret_cast<char*>(base + gran);
  b.data = fence == Fence::after ? mapped + b.mapped_bytes - bytes : mapped;
  return b;
}
#endif

}  // namespace

FencedBlock fenced_alloc(Device device, std::size_t bytes, Fence fence) {
  if (device == Device::cpu) return host_alloc(bytes, fence);
#if KQ_HAVE_CUDA
  return cuda_alloc(bytes, fence);
#else
  throw std::runtime_error("this kq was built without CUDA");
#endif
}

void fenced_free(Device device, FencedBlock& b) {
  if (!b.reserved) return;
  if (device == Device::cpu) {
    munmap(b.reserved, b.reserved_bytes);
  } else {
#if KQ_HAVE_CUDA
    try {
      auto unmap = driver<decltype(&cuMemUnmap)>("cuMemUnmap");
      auto release = driver<decltype(&cuMemRelease)>("cuMemRelease");
      auto free_va = driver<decltype(&cuMemAddressFree)>("cuMemAddressFree");
      const std::size_t gran = (b.reserved_bytes - b.mapped_bytes) / 2;
      auto base = reinterpret_cast<CUdeviceptr>(b.reserved);
      unmap(base + gran, b.mapped_bytes);
      release(b.handle);
      free_va(base, b.reserved_bytes);
    } catch (...) {
      // A poisoned context cannot free; the worker is about to exit anyway.
    }
#endif
  }
  b = {};
}

}  // namespace kq
