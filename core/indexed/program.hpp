// A parsed program of indexed statements: the declarations it was parsed against and each
// statement's expression tree. Plain data: the evaluator, the cost and (later) the planner and
// the code generators read it; only the parser builds it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "indexed/declarations.hpp"
#include "kq/expr.hpp"

namespace kq::ix {

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
