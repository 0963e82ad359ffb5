#include "indexed/names.hpp"

namespace kq::ix {

std::optional<std::string> declaration_problem(Declarations& d) {
  std::vector<std::string> seen;
  auto check_name = [&](const std::string& name,
                        std::string_view what) -> std::optional<std::string> {
    if (name.empty()) return std::string(what) + " with an empty name";
    if (is_reserved(name))
      return std::string(what) + " '" + name + "' is named like a function, reduction or constant";
    for (const std::string& s : seen)
      if (s == name) return "the name '" + name + "' is declared twice";
    seen.push_back(name);
    return std::nullopt;
  };
  for (const DimDecl& x : d.dims)
    if (auto e = check_name(x.name, "a dim")) return e;
  for (const ParamDecl& x : d.params)
    if (auto e = check_name(x.name, "a param")) return e;
  for (TensorDecl& t : d.tensors) {
    if (auto e = check_name(t.name, "a tensor")) return e;
    for (Extent& e : t.shape) {
      if (!e.is_dim()) {
        if (e.constant < 0) return "tensor '" + t.name + "' has a negative extent";
        continue;
      }
      e.dim = find_named(d.dims, e.name);
      if (e.dim < 0) return "tensor '" + t.name + "' has the undeclared dim '" + e.name + "'";
    }
  }
  return std::nullopt;
}

}  // namespace kq::ix
