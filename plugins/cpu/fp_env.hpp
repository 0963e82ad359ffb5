// The floating-point environment a run computes in: round to nearest, denormals neither flushed on
// output (FTZ) nor treated as zero on input (DAZ). The reference is IEEE, and a host process (or a
// library it loaded) may have set FTZ/DAZ on the calling thread; this guard sets the IEEE defaults
// for the duration of a run and restores the caller's state afterwards. TBB workers take the same
// settings through a task_group_context that captures them (executor.hpp).
#pragma once
#include <cfenv>
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define KQ_CPU_HAVE_MXCSR 1
#endif

namespace kq::cpu {

class IeeeFpEnv {
 public:
  IeeeFpEnv() : round_(std::fegetround()) {
    std::fesetround(FE_TONEAREST);
#ifdef KQ_CPU_HAVE_MXCSR
    csr_ = _mm_getcsr();
    _mm_setcsr(csr_ & ~(kFtz | kDaz));
#endif
  }
  ~IeeeFpEnv() {
#ifdef KQ_CPU_HAVE_MXCSR
    _mm_setcsr(csr_);
#endif
    std::fesetround(round_);
  }
  IeeeFpEnv(const IeeeFpEnv&) = delete;
  IeeeFpEnv& operator=(const IeeeFpEnv&) = delete;

 private:
  int round_;
#ifdef KQ_CPU_HAVE_MXCSR
  static constexpr unsigned kFtz = 1u << 15;
  static constexpr unsigned kDaz = 1u << 6;
  unsigned csr_ = 0;
#endif
};

}  // namespace kq::cpu
