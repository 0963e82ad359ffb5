// The ABI version of the host/arm contract. The host refuses a plugin whose version differs.
// Bump it on any change to a type that crosses the plugin boundary (this directory).
#pragma once
#include <cstdint>

namespace kq {
inline constexpr std::uint32_t kAbiVersion = 2;  // 2: Problem::stream, OpSpec::compare
}  // namespace kq
