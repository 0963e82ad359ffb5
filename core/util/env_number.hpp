// A whole number from text or from the environment, for kq's KQ_* settings and number lists.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace kq {

// `text` when it is a whole number from 0 up (digits only); nullopt when it is empty, negative,
// out of range or anything else (" 1", "1x", "+1").
std::optional<std::uint64_t> whole_number(std::string_view text);

// The value of `name` as whole_number reads it; nullopt when it is unset too.
std::optional<std::uint64_t> env_number(const char* name);

}  // namespace kq
