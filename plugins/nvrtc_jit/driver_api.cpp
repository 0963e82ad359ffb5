#include "driver_api.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <stdexcept>

namespace kq::nvrtc {
namespace {

template <class F>
void resolve(const char* symbol, F& fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  // 12000: the ABI of each entry point as of CUDA 12.0, whatever newer driver is installed.
  cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || p == nullptr)
    throw std::runtime_error(std::string("driver entry point ") + symbol + " unavailable: " +
                             (e != cudaSuccess ? cudaGetErrorString(e) : "symbol not found"));
  fn = reinterpret_cast<F>(p);
}

}  // namespace

const DriverApi& driver() {
  static std::once_flag once;
  static DriverApi api;
  static std::string failure;
  std::call_once(once, [] {
    try {
      DriverApi a;
      resolve("cuModuleLoadData", a.module_load_data);
      resolve("cuModuleUnload", a.module_unload);
      resolve("cuModuleGetFunction", a.module_get_function);
      resolve("cuLaunchKernel", a.launch_kernel);
      resolve("cuOccupancyMaxActiveBlocksPerMultiprocessor", a.occupancy);
      resolve("cuFuncGetAttribute", a.func_get_attribute);
      resolve("cuCtxGetCurrent", a.ctx_get_current);
      resolve("cuCtxSetCurrent", a.ctx_set_current);
      resolve("cuGetErrorString", a.get_error_string);
      api = a;
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw std::runtime_error(failure);
  return api;
}

std::string cu_error(const char* what, CUresult r) {
  const char* s = nullptr;
  try {
    if (const DriverApi& d = driver(); d.get_error_string) d.get_error_string(r, &s);
  } catch (...) {  // no description then; the number is enough
  }
  return std::string(what) + ": CUresult " + std::to_string(static_cast<int>(r)) +
         (s ? std::string(" (") + s + ")" : std::string());
}

}  // namespace kq::nvrtc
