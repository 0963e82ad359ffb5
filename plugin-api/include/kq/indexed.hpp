// A format-2 (shaped) operation as plain data: its dims, params and tensors (the declarations)
// and its indexed statements, parsed (y[m, n] = exp(x[m, n] - mx[m]) / s[m], with reductions,
// scans, gathers and index arithmetic). The host's parser builds it from the spec; arms read it
// in supports() to recognise what they compute (a structural match, never the op's name) and
// code generators lower it. docs/indexed-statements.md is the language.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kq/expr.hpp"
#include "kq/tensor.hpp"

namespace kq::ix {

// A dim's kind drives the planner's cases and the tolerances; the language only reads it for
// messages.
enum class DimKind : std::uint8_t { free, reduced };

// A derived dim is not given at a point but computed from the others by `derived`, integer
// arithmetic over base dims (+ - * and / rounding down): a pooling's output length
// "(H + 2 - 4) / 1 + 1", as the framework computes it from its input's. Empty: a base dim.
struct DimDecl {
  std::string name;
  DimKind kind = DimKind::free;
  std::string derived;

  bool is_derived() const { return !derived.empty(); }
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
  DType dtype = DType::f32;
  std::vector<Extent> shape;  // empty for a scalar
  // An input read outside its extent gives this value (a padded pooling's -inf, a convolution's
  // 0) where the spec declares one (`pad:`); without it such a read is an evaluation error.
  std::optional<double> pad;
};

struct Declarations {
  std::vector<DimDecl> dims;
  std::vector<ParamDecl> params;
  std::vector<TensorDecl> tensors;
};

inline std::string_view to_string(Role r) {
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

// "M" or "4".
inline std::string extent_text(const Extent& e) {
  return e.is_dim() ? e.name : std::to_string(e.constant);
}

// ---- the parsed statements

enum class NodeKind : std::uint8_t {
  number,  // value
  param,   // ref: params[ref]
  dim,     // ref: dims[ref], its value as a number
  index,   // ref: indices[ref], its value as a number
  access,  // ref: tensors[ref]; args: one subscript node per dimension
  apply,   // op (a kq::Op of arity args.size()) on args
  reduce,  // reduction over `over` of args[0]
  scan,    // scan along over[0] (an index the left-hand side binds) of args[0]
};

enum class Reduction : std::uint8_t { sum, prod, max, min, argmax, argmin };

// "sum", ... as the statements write it.
inline std::string_view to_string(Reduction r) {
  switch (r) {
    case Reduction::sum:
      return "sum";
    case Reduction::prod:
      return "prod";
    case Reduction::max:
      return "max";
    case Reduction::min:
      return "min";
    case Reduction::argmax:
      return "argmax";
    case Reduction::argmin:
      return "argmin";
  }
  return "?";
}
enum class ScanKind : std::uint8_t { cumsum, cumprod };

struct Node {
  NodeKind kind = NodeKind::number;
  double value = 0.0;
  int ref = -1;
  Op op = Op::constant;
  std::vector<int> args;  // operand node indices, all smaller than this node's index
  std::vector<int> over;  // reduce, scan: the index variables, outermost first
  Reduction reduction = Reduction::sum;
  ScanKind scan = ScanKind::cumsum;
  bool exclusive = false;  // scan: the element itself is left out
  bool reverse = false;    // scan: runs from the last element down to the first
  int column = 0;          // 1-based, in its statement's line
};

// One index variable, bound by a statement's left-hand side or by a reduction. Variables are
// numbered across the whole program, so an evaluator keeps one slot per variable.
struct IndexVar {
  std::string name;
  Extent extent;  // resolved: a dim or a constant
  int statement = -1;
  // A reduction's index with its range written (`max(p : 4, ...)`, a pooling window), not
  // learnt from a subscript: the canonical form writes it.
  bool ranged = false;
};

struct Statement {
  int tensor = -1;       // the tensor assigned
  std::vector<int> lhs;  // index variables, one per dimension of the tensor
  int root = -1;         // the right-hand side's node
  int scan_index = -1;   // the index variable the statement's scans run along, or -1
  int line = 0;          // 1-based line in the program text
  std::string text;      // the statement's line, for messages
};

struct Program {
  Declarations decls;  // shapes resolved: every Extent names a dim by its position
  std::vector<IndexVar> indices;
  std::vector<Node> nodes;
  std::vector<Statement> statements;
};

}  // namespace kq::ix
