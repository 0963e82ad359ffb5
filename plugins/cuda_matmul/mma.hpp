// The launch interface of cuda_matmul's kernel (mma.cu), for host code that sees no CUDA types:
// one product C = epilogue(A B) of 16-bit operands on strided views, the stream as void*.
#pragma once
#include <cstdint>
#include <string>

#include "kq/status.hpp"

namespace kq::mma {

// A strided matrix: element (r, c) of matrix z is at base + z * bs + r * rs + c * cs.
struct Strides {
  std::int64_t rs = 0, cs = 0, bs = 0;
};

struct MmaArgs {
  const void* a = nullptr;     // M x K
  const void* b = nullptr;     // K x N
  const void* bias = nullptr;  // N elements of C's type, stride bias_s, or null
  void* c = nullptr;           // M x N
  std::int64_t M = 0, N = 0, K = 0, batch = 1, bias_s = 0;
  Strides sa, sb, sc;
  bool bf16 = true;  // bf16, else f16 (A, B, C and the bias)
  bool gelu = false;
};

// Which kernel a problem gets: 16-byte cp.async loads where every row of A and B starts on a
// 16-byte boundary and holds whole vectors, else element loads; B staged k-major (an (N, K)
// weight) or n-major (a (K, N) matrix), by its unit stride.
struct MmaChoice {
  bool vec = false;
  bool b_k_major = true;
};
MmaChoice choose(const MmaArgs& a);

// Sets each kernel's shared-memory size once (prepare: never under stream capture).
Status prepare_kernels();

// Enqueues the product on `stream`; the launch is checked.
Status launch(const MmaArgs& a, void* stream);

// The tile shapes and the rules above, for the arm's notes.
std::string describe_kernels();
std::string describe(const MmaChoice& c);

}  // namespace kq::mma
