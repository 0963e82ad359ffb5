#include "indexed/buffer.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include "kq/half.hpp"
#include "util/parallel_copy.hpp"

namespace kq::ix {

void zero_fill(Values& v, std::size_t n) {
  v.clear();
  v.resize(n);
  parallel_memset(v.data(), 0, n * sizeof(double));  // 0.0 is all zero bits
}

Buffer Buffer::zeros(DType dtype, std::vector<std::int64_t> shape) {
  Buffer b;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.bytes.resize(static_cast<std::size_t>(b.numel()) * dtype_size(dtype));
  parallel_memset(b.bytes.data(), 0, b.bytes.size());
  return b;
}

Buffer Buffer::borrow(DType dtype, std::vector<std::int64_t> shape, const void* data) {
  Buffer b;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.borrowed = static_cast<const unsigned char*>(data);
  return b;
}

Buffer Buffer::place(DType dtype, std::vector<std::int64_t> shape, void* data) {
  Buffer b;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.placed = static_cast<unsigned char*>(data);
  return b;
}

std::size_t Buffer::size_bytes() const {
  return placed || borrowed ? static_cast<std::size_t>(numel()) * dtype_size(dtype) : bytes.size();
}

Buffer Buffer::of(DType dtype, std::vector<std::int64_t> shape, std::span<const double> values) {
  Buffer b = zeros(dtype, std::move(shape));
  const auto n =
      static_cast<std::int64_t>(std::min(values.size(), static_cast<std::size_t>(b.numel())));
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, 1 << 16),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t i = r.begin(); i < r.end(); ++i)
                        b.set(i, values[static_cast<std::size_t>(i)]);
                    });
  return b;
}

std::int64_t numel_of(const std::vector<std::int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

std::vector<std::int64_t> coord_of(const std::vector<std::int64_t>& shape, std::int64_t linear) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    c[d] = linear % shape[d];
    linear /= shape[d];
  }
  return c;
}

std::int64_t Buffer::numel() const { return numel_of(shape); }

double Buffer::get(std::int64_t i) const {
  return load_as_double(dtype, data() + static_cast<std::size_t>(i) * dtype_size(dtype));
}

void Buffer::get_run(std::int64_t first, std::int64_t step, int count, double* out) const {
  const auto at = [&](int l) {
    return data() + static_cast<std::size_t>(first + l * step) * dtype_size(dtype);
  };
  // The common value types with the dtype's switch out of the loop; the others through get().
  switch (dtype) {
    case DType::f32:
      for (int l = 0; l < count; ++l) {
        float f;
        std::memcpy(&f, at(l), 4);
        out[l] = f;
      }
      return;
    case DType::f64:
      for (int l = 0; l < count; ++l) std::memcpy(&out[l], at(l), 8);
      return;
    default:
      for (int l = 0; l < count; ++l) out[l] = load_as_double(dtype, at(l));
  }
}

void Buffer::set(std::int64_t i, double v) {
  unsigned char* p = written() + static_cast<std::size_t>(i) * dtype_size(dtype);
  switch (dtype) {
    case DType::i32: {
      const auto x = static_cast<std::int32_t>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case DType::i64: {
      const auto x = static_cast<std::int64_t>(v);
      std::memcpy(p, &x, 8);
      return;
    }
    case DType::boolean:
      *p = v != 0.0 ? 1 : 0;
      return;
    default:
      store_rounded(dtype, v, p);
  }
}

void Buffer::set_run(std::int64_t first, int count, const double* v) {
  unsigned char* p = written() + static_cast<std::size_t>(first) * dtype_size(dtype);
  switch (dtype) {  // as get_run: the common value types with the switch out of the loop
    case DType::f32:
      for (int l = 0; l < count; ++l) {
        const auto f = static_cast<float>(v[l]);
        std::memcpy(p + 4 * l, &f, 4);
      }
      return;
    case DType::f64:
      std::memcpy(p, v, 8 * static_cast<std::size_t>(count));
      return;
    default:
      for (int l = 0; l < count; ++l) set(first + l, v[l]);
  }
}

bool representable(DType dtype, double v) {
  switch (dtype) {
    case DType::i32:
      return std::trunc(v) == v && v >= -2147483648.0 && v <= 2147483647.0;
    case DType::i64:
      return std::trunc(v) == v && v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    case DType::boolean:
      return !std::isnan(v);
    default:
      return true;
  }
}

}  // namespace kq::ix
