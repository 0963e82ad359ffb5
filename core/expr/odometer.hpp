// Walks the elements of several same-shaped strided tensors in row-major order, keeping each
// tensor's element offset. The linear index is decomposed once, at the start; every step after
// that is an increment with a carry, so no division is done per element.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kq/tensor.hpp"

namespace kq::ref {

class Odometer {
 public:
  // `tensors` share `shape` (`rank` extents, none zero); starts at row-major element `start`.
  Odometer(int rank, const std::array<std::int64_t, kMaxRank>& shape,
           std::span<const TensorView* const> tensors, std::int64_t start)
      : rank_(rank), shape_(shape), strides_(tensors.size()), offsets_(tensors.size(), 0) {
    for (std::size_t t = 0; t < tensors.size(); ++t) strides_[t] = tensors[t]->strides;
    for (int d = rank_ - 1; d >= 0; --d) {
      index_[d] = start % shape_[d];
      start /= shape_[d];
      for (std::size_t t = 0; t < strides_.size(); ++t) offsets_[t] += index_[d] * strides_[t][d];
    }
  }

  // Element offset, in elements, of tensor t at the current position.
  std::int64_t offset(std::size_t t) const { return offsets_[t]; }

  void step() {
    for (int d = rank_ - 1; d >= 0; --d) {
      if (++index_[d] < shape_[d]) {
        for (std::size_t t = 0; t < strides_.size(); ++t) offsets_[t] += strides_[t][d];
        return;
      }
      // Carry: back to the start of this dimension, then advance the next one out.
      index_[d] = 0;
      for (std::size_t t = 0; t < strides_.size(); ++t)
        offsets_[t] -= (shape_[d] - 1) * strides_[t][d];
    }
  }

 private:
  int rank_;
  std::array<std::int64_t, kMaxRank> shape_;
  std::array<std::int64_t, kMaxRank> index_{};
  std::vector<std::array<std::int64_t, kMaxRank>> strides_;
  std::vector<std::int64_t> offsets_;
};

}  // namespace kq::ref
