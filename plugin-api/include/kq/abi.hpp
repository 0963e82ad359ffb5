// The ABI version of the host/arm contract. The host refuses a plugin whose version differs.
// Bump it on any change to a type that crosses the plugin boundary (this directory).
#pragma once
#include <cstdint>

namespace kq {
// 2: Problem::stream, OpSpec::compare. 3: DType f16 and bf16, OpSpec::compute.
// 4: DType i32, i64 and boolean, OpSpec::program (format-2 specs). 5: ArmIdentity::origin and
// ::tampering. 6: ix::DimDecl::derived, ix::TensorDecl::pad.
inline constexpr std::uint32_t kAbiVersion = 6;
}  // namespace kq
