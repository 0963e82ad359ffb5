// Tensor views: a non-owning description of a caller-owned buffer. Shapes and strides are in
// elements; the data pointer is kept as is, so offsets and alignment are visible to the arm.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kq {

// f16: IEEE binary16; bf16: bfloat16. kq/half.hpp has their host-side values and conversions.
// i32, i64 and boolean (one byte, 0 or 1) are the types of indices, targets and masks: format-2
// (shaped) specs only; the value types are the first four.
enum class DType : std::uint8_t { f32, f64, f16, bf16, i32, i64, boolean };
enum class Device : std::uint8_t { cpu, cuda };

inline constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::f64:
    case DType::i64:
      return 8;
    case DType::i32:
      return 4;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::boolean:
      return 1;
  }
  return 0;
}
inline constexpr std::string_view to_string(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::boolean:
      return "bool";
  }
  return "?";
}
inline constexpr bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }
inline constexpr bool is_integer(DType t) {
  return t == DType::i32 || t == DType::i64 || t == DType::boolean;
}
inline constexpr std::string_view to_string(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }

inline constexpr int kMaxRank = 8;

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  Device device = Device::cpu;
  int rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> strides{};  // in elements; may be 0 (broadcast) or negative

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
  // Row-major dense: the innermost stride is 1 and each outer stride is the product of the
  // extents inside it (extents of 1 may carry any stride).
  bool is_contiguous() const {
    std::int64_t expect = 1;
    for (int i = rank - 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != expect) return false;
      expect *= shape[i];
    }
    return true;
  }
  // The largest power of two (up to 256) that divides the data pointer.
  std::size_t alignment() const {
    auto p = reinterpret_cast<std::uintptr_t>(data);
    std::size_t a = 1;
    while (a < 256 && (p % (a * 2)) == 0) a *= 2;
    return a;
  }
  // Row-major contiguous view of `n` elements starting at `data`, as a rank-1 tensor.
  static TensorView contiguous_1d(void* data, std::int64_t n, DType t, Device d) {
    TensorView v;
    v.data = data;
    v.dtype = t;
    v.device = d;
    v.rank = 1;
    v.shape[0] = n;
    v.strides[0] = 1;
    return v;
  }
};

}  // namespace kq
