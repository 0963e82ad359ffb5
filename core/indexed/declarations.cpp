#include "indexed/declarations.hpp"

namespace kq::ix {

std::string_view to_string(Role r) {
  switch (r) {
    case Role::input:
      return "input";
    case Role::temporary:
      return "temporary";
    case Role::output:
      return "output";
  }
  return "?";
}

std::string extent_text(const Extent& e) {
  return e.is_dim() ? e.name : std::to_string(e.constant);
}

}  // namespace kq::ix
