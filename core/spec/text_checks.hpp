// Checks on a spec's raw bytes before YAML sees them: text that is too large, holds a NUL or
// another control character, or is not valid UTF-8 is refused at the offending line and column.
// Internal to the spec loader.
#pragma once
#include <string>

#include "spec/yaml_field.hpp"

namespace kq::spec_detail {

// "the file is SIZE bytes; a spec is at most 1048576 bytes (1 MiB)" (kMaxSpecBytes).
std::string too_large_message(const std::string& size);

// Fails through src.fail() on the first problem; columns count UTF-8 characters, as an editor
// does.
void check_text(const Source& src);

}  // namespace kq::spec_detail
