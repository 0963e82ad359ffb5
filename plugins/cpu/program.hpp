// The compiled form of a semantics expression: a short list of instructions over numbered values,
// independent of tensor shapes, so it is built once in prepare() and reused by every run().
//
// Compilation keeps only nodes the root depends on, merges identical nodes (the same input read
// twice is gathered once per block), folds constant-only subexpressions in float64 as the
// reference evaluates them (kq/expr_fold.hpp) and rounds each once to the program's dtype, and
// assigns every value a scratch slot, reusing the slots of temporaries whose last reader has run,
// so the working set of a block stays small.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kq/expr.hpp"
#include "kq/tensor.hpp"

namespace kq::cpu {

// Limits that bound the per-block scratch memory and the per-thread pointer table.
inline constexpr int kMaxInputs = 16;
inline constexpr int kMaxNodes = 256;

enum class ValueKind : std::uint8_t { input, constant, temp };

struct Value {
  ValueKind kind = ValueKind::temp;
  int input = -1;         // input: index into the spec's inputs
  double constant = 0.0;  // constant: already rounded to the program's dtype (its arithmetic)
  // Scratch slot: where a strided input is gathered, a constant is broadcast, or a temp lives.
  int slot = -1;
};

struct Instr {
  Op op = Op::add;
  int dst = -1;               // value index written
  int src[3] = {-1, -1, -1};  // value indices read (arity(op) of them)
};

struct Program {
  DType dtype = DType::f32;  // the arithmetic: spec.compute (f32 or f64)
  std::vector<Value> values;
  std::vector<Instr> instrs;  // evaluation order
  int root = -1;              // value index of the result
  int num_slots = 0;
  std::string text;  // the expression's source text, for the listing

  // A readable listing of the values and instructions (the "source" artifact).
  std::string listing(const std::vector<std::string>& input_names, std::int64_t block) const;
};

// Empty when `e` is well-formed over `num_inputs` inputs (kq::expr_problem, kq/expr_checks.hpp)
// and within kMaxNodes; otherwise the first problem found.
std::string check_expr(const Expr& e, int num_inputs);

struct CompileResult {
  std::optional<Program> program;
  std::string error;  // set when program is empty
};

// Compiles a checked expression for arithmetic in `dtype` (float32 for f32, float64 for f64): the
// spec's compute type, which may be wider than the elements in memory.
CompileResult compile(const Expr& e, int num_inputs, DType dtype);

}  // namespace kq::cpu
