// Reading and writing one block of a tensor's elements in logical (row-major) order.
//
// A view is first reduced to its simplest equivalent layout: extents of 1 are dropped and
// neighbouring dimensions that step through memory as one (stride[i] == stride[i+1] * shape[i+1])
// are merged. A dense view becomes one dimension of stride 1 and is read in place; a broadcast of
// one value becomes one dimension of stride 0; a transposed matrix stays two dimensions.
//
// A block [start, start + n) is walked with an incremental multi-index: the index of `start` is
// found once per block (a few divisions), then each run along the innermost dimension is one tight
// loop and the carry into outer dimensions adds and subtracts strides. No division per element.
// Offsets are std::int64_t throughout, so views above 2^31 elements and negative strides work.
//
// The elements in memory (S: float, double, kq::Half, kq::BFloat16) may differ from the type the
// program computes in (T: float or double): gather widens each element exactly, scatter rounds
// each result once, to nearest even (convert below).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kq/half.hpp"
#include "kq/tensor.hpp"

namespace kq::cpu {

template <class T>
struct StridedLayout {
  T* base = nullptr;  // the element at multi-index 0
  int rank = 0;       // after simplification; 0 means a single element
  std::int64_t shape[kMaxRank] = {};
  std::int64_t stride[kMaxRank] = {};
  bool dense = false;  // element i of the logical order is base[i]
};

template <class T>
StridedLayout<T> simplify(const TensorView& v) {
  StridedLayout<T> l;
  l.base = static_cast<T*>(v.data);
  for (int d = 0; d < v.rank; ++d) {
    if (v.shape[d] == 1) continue;
    if (l.rank > 0 && l.stride[l.rank - 1] == v.strides[d] * v.shape[d]) {
      l.shape[l.rank - 1] *= v.shape[d];
      l.stride[l.rank - 1] = v.strides[d];
    } else {
      l.shape[l.rank] = v.shape[d];
      l.stride[l.rank] = v.strides[d];
      ++l.rank;
    }
  }
  l.dense = l.rank == 0 || (l.rank == 1 && l.stride[0] == 1);
  return l;
}

// One element from S to T: a copy when they are the same type, else through double, which holds
// every value of the four element types exactly, so the only rounding is the last cast (once, to
// nearest even: kq/half.hpp for the half types, the FPU in round-to-nearest for float).
template <class To, class From>
inline To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else {
    return static_cast<To>(static_cast<double>(x));
  }
}

namespace detail {

// Calls run(offset, k, count, stride) for each maximal stretch of the block along the innermost
// dimension: logical elements k .. k+count-1 of the block sit at base[offset + j * stride].
template <class T, class Run>
inline void for_each_run(const StridedLayout<T>& l, std::int64_t start, std::int64_t n, Run&& run) {
  if (l.rank == 0) {  // a single element (the block is then [0, 1))
    run(std::int64_t{0}, std::int64_t{0}, n, std::int64_t{0});
    return;
  }
  std::int64_t idx[kMaxRank];
  std::int64_t off = 0;
  std::int64_t rem = start;
  for (int d = l.rank - 1; d >= 0; --d) {
    idx[d] = rem % l.shape[d];
    rem /= l.shape[d];
    off += idx[d] * l.stride[d];
  }
  const int last = l.rank - 1;
  const std::int64_t s = l.stride[last];
  std::int64_t k = 0;
  while (k < n) {
    const std::int64_t count = std::min(n - k, l.shape[last] - idx[last]);
    run(off, k, count, s);
    k += count;
    off += count * s;
    idx[last] += count;
    for (int d = last; d > 0 && idx[d] == l.shape[d]; --d) {
      off -= l.shape[d] * l.stride[d];
      idx[d] = 0;
      ++idx[d - 1];
      off += l.stride[d - 1];
    }
  }
}

}  // namespace detail

// Copies logical elements [start, start + n) of `l` into dst[0 .. n), converted to T.
template <class T, class S>
void gather(const StridedLayout<S>& l, std::int64_t start, std::int64_t n, T* __restrict dst) {
  const S* base = l.base;
  detail::for_each_run(l, start, n,
                       [&](std::int64_t off, std::int64_t k, std::int64_t count, std::int64_t s) {
                         const S* src = base + off;
                         T* d = dst + k;
                         if (std::is_same_v<T, S> && s == 1) {
                           std::memcpy(d, src, static_cast<std::size_t>(count) * sizeof(T));
                         } else if (s == 0) {
                           const T v = convert<T>(*src);
                           for (std::int64_t j = 0; j < count; ++j) d[j] = v;
                         } else {
                           for (std::int64_t j = 0; j < count; ++j) d[j] = convert<T>(src[j * s]);
                         }
                       });
}

// Writes src[0 .. n) to logical elements [start, start + n) of `l`, each rounded once to S. The
// caller has checked that no two logical elements of `l` share memory (validate.cpp), so blocks
// never race.
template <class T, class S>
void scatter(const StridedLayout<S>& l, std::int64_t start, std::int64_t n, const T* src) {
  if constexpr (std::is_same_v<T, S>) {
    if (l.dense) {
      T* dst = l.base + start;
      // src == dst when an exactly aliased input is written back unchanged (semantics `x`).
      if (dst != src) std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(T));
      return;
    }
  }
  S* base = l.base;
  detail::for_each_run(l, start, n,
                       [&](std::int64_t off, std::int64_t k, std::int64_t count, std::int64_t s) {
                         S* d = base + off;
                         const T* s_src = src + k;
                         for (std::int64_t j = 0; j < count; ++j) d[j * s] = convert<S>(s_src[j]);
                       });
}

}  // namespace kq::cpu
