// What a program is parsed against: its dims, params and tensors. The spec loader will fill
// this from a spec's `dims`, `params`, `inputs` and `outputs` (and temporaries).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "indexed/dtype.hpp"

namespace kq::ix {

// A dim's kind drives the planner's cases and the tolerances; the language only reads it for
// messages.
enum class DimKind : std::uint8_t { free, reduced };

struct DimDecl {
  std::string name;
  DimKind kind = DimKind::free;
};

struct ParamDecl {
  std::string name;
  double value = 0.0;
};

// One dimension of a tensor's shape: a dim by name or an integer constant. After parsing, `dim`
// holds the dim's position in Declarations::dims (or -1 for a constant).
struct Extent {
  Extent() = default;
  Extent(const char* dim_name) : name(dim_name) {}             // NOLINT: shapes read as {"M", "N"}
  Extent(std::string dim_name) : name(std::move(dim_name)) {}  // NOLINT
  Extent(std::int64_t size) : constant(size) {}                // NOLINT
  Extent(int size) : constant(size) {}                         // NOLINT

  std::string name;  // empty for a constant
  std::int64_t constant = 0;
  int dim = -1;

  bool is_dim() const { return !name.empty(); }
  friend bool operator==(const Extent& a, const Extent& b) {
    return a.is_dim() == b.is_dim() && (a.is_dim() ? a.name == b.name : a.constant == b.constant);
  }
};

enum class Role : std::uint8_t { input, temporary, output };

struct TensorDecl {
  std::string name;
  Role role = Role::input;
  Dtype dtype = Dtype::f32;
  std::vector<Extent> shape;  // empty for a scalar
};

struct Declarations {
  std::vector<DimDecl> dims;
  std::vector<ParamDecl> params;
  std::vector<TensorDecl> tensors;
};

std::string_view to_string(Role r);
std::string extent_text(const Extent& e);  // "M" or "4"

}  // namespace kq::ix
