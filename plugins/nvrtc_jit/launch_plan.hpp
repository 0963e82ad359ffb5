// Which kernel a call takes, from the views alone: host-side, pure, no allocation (run() uses it
// on every call). Dimensions of extent 1 are dropped and neighbours that are contiguous in every
// tensor at once are merged, so a "strided" view that is really dense (a transposed 1 x n, or
// any row-major view) takes the contiguous kernels, and a real strided one keeps few dimensions.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "codegen.hpp"
#include "kq/tensor.hpp"

namespace kq::nvrtc {

enum class Path { empty, vector, scalar, strided };

struct LaunchArgs {
  Path path = Path::empty;
  bool alias = false;     // the output overlaps an input: take the _alias kernels
  std::int64_t n = 0;     // elements
  std::int64_t head = 0;  // vector path: elements before the first 16-byte boundary
  int rank = 0;           // strided path: dimensions after merging
  StridedLayout layout{};
};

// Fills `a` for `inputs` -> `out` (shapes already checked equal by check_contract). Returns an
// empty string, or why the call is refused (an output that overlaps itself, too many inputs).
// `allow_vector` false keeps contiguous calls on the scalar kernels.
std::string plan_launch(std::span<const TensorView> inputs, const TensorView& out,
                        bool allow_vector, LaunchArgs& a);

const char* to_string(Path p);

}  // namespace kq::nvrtc
