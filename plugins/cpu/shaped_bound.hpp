// A shaped program bound to one problem: every dim's value, every index variable's extent, and
// where each tensor's elements are read from: an input's view (its own dtype and strides) or the
// arm's storage of a temporary or an output that later statements read (unrounded, in the type
// its statement computed in, row-major). What the evaluator reads; owned by ShapedRunner.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kq/tensor.hpp"

namespace kq::cpu {

struct Source {
  const void* data = nullptr;
  DType dtype = DType::f32;  // of the elements in memory: storage is f32 or f64
  std::int64_t shape[kMaxRank] = {};
  std::int64_t stride[kMaxRank] = {};  // in elements
};

struct Bound {
  std::vector<std::int64_t> dims;     // by dim
  std::vector<std::int64_t> extents;  // by index variable
  std::vector<Source> sources;        // by tensor
  std::vector<void*> storage;         // by tensor: the arm's storage (the source's data), or null
  std::vector<TensorView> views;      // by tensor: an output's view (rank 0, null otherwise)
};

// An evaluation error (a subscript or gather out of range, an empty argmax, a value an integer
// output cannot hold): the message names the statement and the coordinate. Caught per piece by
// the runner, never thrown across TBB or the plugin boundary.
struct ShapedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kq::cpu
