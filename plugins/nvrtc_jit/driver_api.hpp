// The few driver API entry points the arm needs, resolved at run time through the CUDA runtime
// (cudaGetDriverEntryPointByVersion), so that the plugin does not link libcuda.so.1 and loads on
// machines without a driver. <cuda.h> is included for the types only.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace kq::nvrtc {

struct DriverApi {
  PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
  PFN_cuModuleUnload_v2000 module_unload = nullptr;
  PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
  PFN_cuLaunchKernel_v4000 launch_kernel = nullptr;
  PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050 occupancy = nullptr;
  PFN_cuFuncGetAttribute_v2020 func_get_attribute = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current = nullptr;
  PFN_cuGetErrorString_v6000 get_error_string = nullptr;
};

// Resolved once per process (thread-safe). Throws std::runtime_error naming the entry point the
// driver could not give (no driver, or one older than CUDA 12.0).
const DriverApi& driver();

// "cuXxx: CUDA_ERROR_... (the driver's description)".
std::string cu_error(const char* what, CUresult r);

}  // namespace kq::nvrtc
