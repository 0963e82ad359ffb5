// Element types of indexed programs: the four value types of kq/tensor.hpp and the integer types
// of indices, targets and masks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kq/tensor.hpp"

namespace kq::ix {

enum class Dtype : std::uint8_t { f32, f64, f16, bf16, i32, i64, boolean };

inline constexpr bool is_integer(Dtype t) {
  return t == Dtype::i32 || t == Dtype::i64 || t == Dtype::boolean;
}

inline constexpr std::size_t size_of(Dtype t) {
  switch (t) {
    case Dtype::f64:
    case Dtype::i64:
      return 8;
    case Dtype::f32:
    case Dtype::i32:
      return 4;
    case Dtype::f16:
    case Dtype::bf16:
      return 2;
    case Dtype::boolean:
      return 1;
  }
  return 0;
}

inline constexpr std::string_view to_string(Dtype t) {
  switch (t) {
    case Dtype::f32:
      return "f32";
    case Dtype::f64:
      return "f64";
    case Dtype::f16:
      return "f16";
    case Dtype::bf16:
      return "bf16";
    case Dtype::i32:
      return "i32";
    case Dtype::i64:
      return "i64";
    case Dtype::boolean:
      return "bool";
  }
  return "?";
}

// The kq::DType of a value type; nothing for the integer types.
inline constexpr std::optional<DType> value_dtype(Dtype t) {
  switch (t) {
    case Dtype::f32:
      return DType::f32;
    case Dtype::f64:
      return DType::f64;
    case Dtype::f16:
      return DType::f16;
    case Dtype::bf16:
      return DType::bf16;
    default:
      return std::nullopt;
  }
}

}  // namespace kq::ix
