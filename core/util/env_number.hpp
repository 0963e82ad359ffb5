// A whole number from the environment, for kq's KQ_* settings.
#pragma once
#include <cstdint>
#include <optional>

namespace kq {

// The value of `name` when it is a whole number from 0 up (digits only); nullopt when it is
// unset, empty, negative, out of range or anything else.
std::optional<std::uint64_t> env_number(const char* name);

}  // namespace kq
