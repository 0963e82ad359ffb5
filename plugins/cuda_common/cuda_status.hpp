// What the CUDA plugins share at the runtime API: a CUDA error as the arm's status, the status
// of the last launch, and how many blocks of a kernel the device holds at once. Header-only;
// for .cu and .cpp files that include cuda_runtime_api.h. (Plugins include plugin-api and their
// vendor library alone; this folder is not a plugin and builds nothing.)
#pragma once
#include <cuda_runtime_api.h>

#include <string>

#include "kq/status.hpp"

namespace kq::cuda_plugin {

// ok, or an error "what: cudaErrorName (its description)".
inline Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return Status::error(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                       cudaGetErrorString(e) + ")");
}

// The status of the launch just made (cudaGetLastError), named `what`.
inline Status launched(const char* what) { return cuda_status(cudaGetLastError(), what); }

// Blocks of `kernel` (launched with `threads` threads and no dynamic shared memory) resident on
// the whole current device at once: SMs x blocks per SM (at least one per SM).
inline Status resident_blocks(const void* kernel, int threads, int& blocks) {
  int dev = 0, sms = 0, per_sm = 0;
  if (Status s = cuda_status(cudaGetDevice(&dev), "cudaGetDevice"); !s.is_ok()) return s;
  if (Status s = cuda_status(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                             "cudaDeviceGetAttribute");
      !s.is_ok())
    return s;
  if (Status s =
          cuda_status(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0),
                      "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      !s.is_ok())
    return s;
  blocks = sms * (per_sm > 0 ? per_sm : 1);
  return Status::ok();
}

}  // namespace kq::cuda_plugin
