#include "qualify/sanitize_setup.hpp"

#include "qualify/qualify_stage.hpp"

namespace kq {

SanitizeSetup set_up_sanitize(const std::vector<std::string>& tools, std::ostream& out) {
  SanitizeSetup s;
  if (tools.empty()) return s;
  s.sanitizer = find_compute_sanitizer();
  if (s.sanitizer.empty()) {
    out << "kq: --sanitize: compute-sanitizer is not on PATH; qualifying without it\n";
    return s;
  }
  s.tools = tools;
  return s;
}

}  // namespace kq
