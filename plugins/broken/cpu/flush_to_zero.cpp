// Flaw: the loop runs with MXCSR's FTZ and DAZ bits set (what -ffast-math's startup code does to
// a whole process), so subnormal inputs read as zero and subnormal sums flush to zero.
// Caught by: values (values/denormal).
#include <memory>

#include "cpu_common.hpp"
#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define KQ_BROKEN_HAVE_MXCSR 1
#endif

namespace kq::broken::cpu {
namespace {

class FlushToZero final : public CpuArm {
 public:
  FlushToZero() : CpuArm("flush_to_zero", "values") {}

 protected:
  Status on_supports(const OpSpec& spec) const override {
#ifdef KQ_BROKEN_HAVE_MXCSR
    return CpuArm::on_supports(spec);
#else
    (void)spec;
    return Status::unsupported("needs x86's MXCSR to flush denormals");
#endif
  }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
#ifdef KQ_BROKEN_HAVE_MXCSR
    auto [x, r, o, n] = dense2(in, out);
    const unsigned saved = _mm_getcsr();
    _mm_setcsr(saved | (1u << 15) | (1u << 6));  // FTZ | DAZ
    asm volatile("" ::: "memory");               // keep the loop between the two writes
    for (std::int64_t i = 0; i < n; ++i) o[i] = relu(x[i] + r[i]);
    asm volatile("" ::: "memory");
    _mm_setcsr(saved);
    return Status::ok();
#else
    (void)in, (void)out;
    return Status::unsupported("needs x86's MXCSR to flush denormals");
#endif
  }
};

}  // namespace

std::unique_ptr<IKernelArm> make_flush_to_zero() { return std::make_unique<FlushToZero>(); }

}  // namespace kq::broken::cpu
