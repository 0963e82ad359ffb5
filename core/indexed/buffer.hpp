// A tensor's elements in host memory, dense and row-major, in the tensor's own dtype: what the
// reference reads its inputs from and writes its outputs to.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kq/indexed.hpp"
#include "util/host_buffer.hpp"

namespace kq::ix {

// A reference's float64 elements: like HostBytes, not zeroed by one thread as they grow (a
// reference of 2^31 elements is 17 GB), so the parallel code that fills them first faults them in.
using Values = std::vector<double, HostAllocator<double>>;

// n zeros in `v`, written on every core.
void zero_fill(Values& v, std::size_t n);

struct Buffer {
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  HostBytes bytes;  // the elements, unless they are the caller's
  // Elements held by the caller (bytes is then empty): read where they are (borrow()), or
  // written there (place()).
  const unsigned char* borrowed = nullptr;
  unsigned char* placed = nullptr;

  // A read-only buffer over numel(shape) elements at `data`, which must outlive it: a large
  // input is read in place, not copied (a 1.6G-element one is 6.4 GB faulted in and copied).
  static Buffer borrow(DType dtype, std::vector<std::int64_t> shape, const void* data);
  // A buffer whose elements are written at `data` (numel(shape) of them, dense, not cleared
  // here), which must outlive it: an output computed straight into its destination.
  static Buffer place(DType dtype, std::vector<std::int64_t> shape, void* data);
  // Where the elements are, and how many bytes they take.
  const unsigned char* data() const { return placed ? placed : borrowed ? borrowed : bytes.data(); }
  // Where set() writes (a buffer not borrowed).
  unsigned char* written() { return placed ? placed : bytes.data(); }
  std::size_t size_bytes() const;

  // Every element zero (on every core, for a large one).
  static Buffer zeros(DType dtype, std::vector<std::int64_t> shape);
  // `values` (row-major, numel of them) each stored as set() stores it, in parallel.
  static Buffer of(DType dtype, std::vector<std::int64_t> shape, std::span<const double> values);

  std::int64_t numel() const;
  // Element `i` (row-major), exactly, as a double.
  double get(std::int64_t i) const;
  // Elements first, first + step, ... (`count` of them) into out, each as get() gives it.
  void get_run(std::int64_t first, std::int64_t step, int count, double* out) const;
  // Stores `v` into element `i` (of a buffer not borrowed): rounded once to nearest even for the
  // value types; for the integer types `v` must be representable (see representable()), bool stores
  // v != 0.
  void set(std::int64_t i, double v);
  // Elements first .. first + count - 1 set from v[0 .. count - 1], each as set() stores it.
  void set_run(std::int64_t first, int count, const double* v);
};

// The elements of a row-major shape (1 for a scalar's empty shape), and the coordinate of its
// element at logical index `linear`.
std::int64_t numel_of(const std::vector<std::int64_t>& shape);
std::vector<std::int64_t> coord_of(const std::vector<std::int64_t>& shape, std::int64_t linear);

// Whether `v` can be stored exactly in an integer dtype (always true for the value types, which
// round): an integral, finite value in the type's range; bool takes any non-NaN value.
bool representable(DType dtype, double v);

}  // namespace kq::ix
