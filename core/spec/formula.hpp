// A formula of a format-2 spec: a small arithmetic expression over the dims, the params, u (the
// unit roundoff of the compute type) and numbers, with + - * / and unary minus, sqrt, log2, max
// and min. Tolerances ("8 * u * sqrt(N)") and cost overrides are formulas, evaluated per point.
// Free of YAML: the reader places errors inside the scalar it was written in.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kq {

struct Formula {
  enum class Kind : std::uint8_t {
    number,
    dim,
    param,
    u,
    neg,
    add,
    sub,
    mul,
    div,
    sqrt,
    log2,
    max,
    min
  };
  struct Node {
    Kind kind = Kind::number;
    double value = 0.0;  // number
    int ref = -1;        // dim or param: its position in the spec's declarations
    int a = -1, b = -1;  // operands: node indices smaller than this node's
  };
  std::vector<Node> nodes;  // the last node is the root
  std::string text;         // as written
};

struct FormulaError {
  int column = 0;  // 1-based, counting characters
  std::string message;
};

struct FormulaParse {
  std::optional<Formula> formula;
  std::optional<FormulaError> error;
};

// Names resolve to the dims, then the params, then u. Never throws for bad text; nesting deeper
// than 64 levels is an error (the text is at most a spec's size, so parsing is linear).
FormulaParse parse_formula(std::string_view text, const std::vector<std::string>& dims,
                           const std::vector<std::string>& params);

// The value at these dim values (by dim position), params (by position) and unit roundoff.
double evaluate(const Formula& f, std::span<const std::int64_t> dims,
                std::span<const double> params, double u);

}  // namespace kq
