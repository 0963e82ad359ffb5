// The language's reserved words and names, and the checks of the declarations a program is
// parsed against.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expr/syntax.hpp"
#include "kq/indexed.hpp"

namespace kq::ix {

// A reduction or scan, called by name; these names, the functions and inf/nan are reserved.
struct Keyword {
  std::string_view name;
  bool scan;
  Reduction reduction;
  ScanKind scan_kind;
};

constexpr Keyword kKeywords[] = {
    {"sum", false, Reduction::sum, ScanKind::cumsum},
    {"prod", false, Reduction::prod, ScanKind::cumsum},
    {"argmax", false, Reduction::argmax, ScanKind::cumsum},
    {"argmin", false, Reduction::argmin, ScanKind::cumsum},
    {"cumsum", true, Reduction::sum, ScanKind::cumsum},
    {"cumprod", true, Reduction::sum, ScanKind::cumprod},
};

inline std::optional<Keyword> keyword_named(std::string_view name) {
  for (const Keyword& k : kKeywords)
    if (k.name == name) return k;
  return std::nullopt;
}

// The spelling of an index variable: a lower-case letter, then lower-case letters, digits, _.
inline bool is_lower_name(std::string_view s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

inline bool is_reserved(std::string_view name) {
  return keyword_named(name) || syntax::function_named(name) || name == syntax::kInf ||
         name == syntax::kNan;
}

// The position of the item called `name`, or -1.
template <typename T>
inline int find_named(const std::vector<T>& items, std::string_view name) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].name == name) return static_cast<int>(i);
  return -1;
}

// Names unique and not reserved, shapes over declared dims (resolving each Extent's dim): a
// problem here is the declarer's, and the parser reports it at line 0.
std::optional<std::string> declaration_problem(Declarations& d);

}  // namespace kq::ix
