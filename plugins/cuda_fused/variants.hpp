// The launch shapes the cuda_fused plugin exports, one arm per (op, variant):
// cuda_fused_<op>_<suffix>. Each names the kernel it runs when every pointer sits at the same
// offset from 16 bytes on contiguous views; the fallbacks (pointers at different offsets: the
// coalesced scalar kernel; strided views: the strided kernel) are shared by all.
//
// What was measured (tools/bench_cuda_fused.cu, relu(x + residual) at 2^28 elements on one H200,
// 256 MiB memset before each sample, medians of 40 interleaved rounds, 12 bytes per element; the
// device-to-device copy ran 509 us, 4.21 TB/s at 8 bytes per element; repeat runs agreed within
// about 1 us):
//   - one pass (a block per chunk, grid = the data: 65536 blocks of 1024 threads, ~250 waves)
//     beats a grid-stride loop over 1-2 waves of resident blocks by ~5% (771 vs 734 us at 256
//     threads) and over 16 waves by ~4% (761 vs 731 us at 1024). Our reading: blocks are
//     dispatched in order, so with one pass the blocks in flight cover one compact window that
//     advances through the arrays; grid-stride threads drift apart and scatter their accesses
//     over more DRAM pages. Hence every grid here is one pass.
//   - loads: plain ld.global and ld.global.nc tie (nc maybe 0.2% behind); ld.global.cs (__ldcs)
//     costs ~10% (826 vs 734 us), as did L1::no_allocate / L1::evict_first in inline PTX. Stores:
//     st.global.cs (__stcs) and plain tie within ~0.3%. Plain loads and stores at 1024 threads
//     were the best row in every run (729.1-729.2 us on one machine, 730.5-731.2 on another,
//     4.41-4.42 TB/s), ~2.5 us ahead of plain loads with cs stores (730.8-733.2 us). But nc loads
//     with plain stores, capped at 32 registers, ran 766 us: keep the pairs measured here.
//   - 1024-thread blocks beat 256 by ~0.5-0.8% for two inputs (729-731 vs 733-737 us) but lose
//     7-11% for one (leaky_relu: 540-563 vs 506-509 us); 2 float4 per input per thread in flight
//     ties with 1 at 1024 threads (730-732 us) and 4 loses ~1% at 256 (740-743 us).
//   - the scalar fallback with 4 floats per input per thread and 1024-thread blocks ran as fast
//     as the float4 path (731.7 us with x one element off); 2 or 8 per thread ran 840 and 814 us.
#pragma once
#include <string>

#include "launch.hpp"

namespace kq::fused {

struct Variant {
  const char* suffix;
  KernelId kernel;  // the main path; grid: one pass, a block per per_thread*threads vectors
  const char* why;
  // Whether the arm also takes f16 and bf16 specs (kHalfKernels below). A 16-byte vector is 8
  // halves, so a half kernel moves the bytes per thread of its float twin: the float
  // measurements carry over, and three shapes (the best, the 256-thread one, the scalar
  // baseline) keep the instance count, and nvcc's time, modest.
  bool half = false;
};

// clang-format off
inline constexpr Variant kVariants[] = {
    {"v4_b1024", {Path::vector, 1, 1024, Load::plain, Store::plain},
     "one float4 per input per thread, 1024-thread blocks, one pass, plain loads and stores "
     "(st.global.cs for silu_mul, see main_kernel): the fastest shape measured for residual_relu "
     "(729-731 us at 2^28 on two H200s, 4.40-4.42 TB/s at 12 B/element; the arm itself 731.3-731.4 "
     "us on the slower one); plain loads also serve in place", true},
    {"v4x2_b1024", {Path::vector, 2, 1024, Load::nc, Store::cs},
     "two float4 per input per thread loaded before the first is used (4 independent 16-byte "
     "loads in flight for two inputs), 1024-thread blocks, one pass, ld.global.nc loads and "
     "st.global.cs stores: measured 730 us, a tie with v4_b1024"},
    {"v4_b256", {Path::vector, 1, 256, Load::nc, Store::cs},
     "one float4 per input per thread, 256-thread blocks, one pass, ld.global.nc loads and "
     "st.global.cs stores: the float4 kernel of ANCHORS.md (738 us there), measured 733-734 us "
     "(4.39 TB/s); the fastest for one-input leaky_relu (509 us, the copy's speed)", true},
    {"v4x4_b256", {Path::vector, 4, 256, Load::nc, Store::cs},
     "four float4 per input per thread in flight (8 independent 16-byte loads for two inputs) "
     "before the first use, 256-thread blocks, one pass: more bytes in flight did not help "
     "(740 us), kept as the deep-pipeline data point"},
    {"scalar_b256", {Path::scalar, 1, 256, Load::nc, Store::cs},
     "baseline: one float per input per thread, 256-thread blocks, one pass, coalesced 4-byte "
     "accesses (942 us, 3.42 TB/s)", true},
};
// clang-format on

// The main kernel of a variant for an op. silu_mul keeps st.global.cs where a variant asks for
// plain stores: with plain stores ptxas needs 46 registers for it (one 1024-thread block per SM)
// or spills at the 32 that two blocks allow; the volatile cs store keeps it at 32, no spill, and
// measured as fast (silu_mul at 1024 threads with cs stores: 729.7-734.0 us).
constexpr KernelId main_kernel(FusedOp op, KernelId k) {
  if (op == FusedOp::silu_mul && k.path == Path::vector && k.store == Store::plain)
    k.store = Store::cs;
  return k;
}

// The same kernel with coherent loads, for an output overlapping an input (in place):
// ld.global.nc is only valid for memory no thread writes during the kernel.
constexpr KernelId aliasing_safe(KernelId k) {
  if (k.load == Load::nc) k.load = Load::plain;
  return k;
}

// Pointers at different offsets from 16 bytes: the coalesced scalar kernel, 4 floats per input
// per thread in flight, 1024-thread blocks (as fast as float4, see above).
inline constexpr KernelId kScalarFallback{Path::scalar, 4, 1024, Load::nc, Store::cs};
inline constexpr KernelId kStrided{Path::strided, 1, 256, Load::plain, Store::plain};

// Every kernel the arms can launch, and so every instance launch.cu compiles (a duplicate, as
// aliasing_safe of a plain-load kernel, is harmless: the first match is used).
inline constexpr KernelId kKernels[] = {
    kVariants[0].kernel,
    aliasing_safe(kVariants[0].kernel),
    kVariants[1].kernel,
    aliasing_safe(kVariants[1].kernel),
    kVariants[2].kernel,
    aliasing_safe(kVariants[2].kernel),
    kVariants[3].kernel,
    aliasing_safe(kVariants[3].kernel),
    kVariants[4].kernel,
    aliasing_safe(kVariants[4].kernel),
    kScalarFallback,
    aliasing_safe(kScalarFallback),
    main_kernel(FusedOp::silu_mul, kVariants[0].kernel),
    kStrided,
};

// The kernels compiled for f16 and bf16 too: those of the half variants, their aliasing-safe
// twins and the shared fallbacks (duplicates harmless, as above).
inline constexpr KernelId kHalfKernels[] = {
    kVariants[0].kernel,
    main_kernel(FusedOp::silu_mul, kVariants[0].kernel),
    kVariants[2].kernel,
    aliasing_safe(kVariants[2].kernel),
    kVariants[4].kernel,
    aliasing_safe(kVariants[4].kernel),
    kScalarFallback,
    aliasing_safe(kScalarFallback),
    kStrided,
};

constexpr bool has_half(const KernelId& k) {
  for (const KernelId& h : kHalfKernels)
    if (h == k) return true;
  return false;
}

// Every kernel a half variant may launch has its half instances.
constexpr bool half_variants_complete() {
  for (const Variant& v : kVariants)
    if (v.half)
      for (FusedOp op : {FusedOp::residual_relu, FusedOp::silu_mul, FusedOp::leaky_relu})
        if (!has_half(main_kernel(op, v.kernel)) ||
            !has_half(aliasing_safe(main_kernel(op, v.kernel))))
          return false;
  return has_half(kScalarFallback) && has_half(aliasing_safe(kScalarFallback)) &&
         has_half(kStrided);
}
static_assert(half_variants_complete(), "a half variant launches a kernel kHalfKernels lacks");

// The suffixes of the half variants, for a refusal's reason.
inline std::string half_variant_names() {
  std::string s;
  for (const Variant& v : kVariants)
    if (v.half) s += (s.empty() ? "" : ", ") + std::string(v.suffix);
  return s;
}

}  // namespace kq::fused
