#include "spec/spec.hpp"

namespace kq {
namespace {

// "file:line:column: field: message"; the field part is left out when there is none (an
// unreadable file, a YAML syntax error).
std::string format_spec_error(const std::string& file, int line, int column,
                              const std::string& field, const std::string& message) {
  std::string s = file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  if (!field.empty()) s += field + ": ";
  return s + message;
}

}  // namespace

SpecError::SpecError(std::string file, int line, int column, std::string field, std::string message)
    : std::runtime_error(format_spec_error(file, line, column, field, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      field_(std::move(field)),
      message_(std::move(message)) {}

}  // namespace kq
