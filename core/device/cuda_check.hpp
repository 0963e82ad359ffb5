// Checked CUDA runtime calls for the host. Every call's status is checked; a failure throws
// CudaError with the call's description and the runtime's message.
#pragma once
#include <stdexcept>
#include <string>

#if KQ_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kq {

class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& what, int code, bool sticky)
      : std::runtime_error(what), code_(code), sticky_(sticky) {}
  int code() const { return code_; }
  // A sticky error (illegal address, launch failure...) poisons the context: the process can
  // run no more CUDA work and must exit.
  bool sticky() const { return sticky_; }

 private:
  int code_;
  bool sticky_;
};

// Inside a catch block: rethrows the exception being handled when it is a sticky CUDA error,
// which no caller may swallow; returns otherwise.
inline void rethrow_if_sticky(const std::exception& e) {
  if (const auto* c = dynamic_cast<const CudaError*>(&e); c != nullptr && c->sticky()) throw;
}

#if KQ_HAVE_CUDA
inline bool cuda_error_is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorIllegalInstruction:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

// The device had no memory for an allocation: the caller may try a smaller one.
inline bool out_of_device_memory(const CudaError& e) {
  return e.code() == static_cast<int>(cudaErrorMemoryAllocation);
}

inline void cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  throw CudaError(
      std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")",
      static_cast<int>(e), cuda_error_is_sticky(e));
}
#endif

}  // namespace kq
