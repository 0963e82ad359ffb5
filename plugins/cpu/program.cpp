#include "program.hpp"

#include <bit>
#include <map>
#include <sstream>
#include <tuple>

#include "kq/expr_checks.hpp"
#include "kq/expr_fold.hpp"
#include "kq/expr_live.hpp"
#include "kq/half.hpp"

namespace kq::cpu {

std::string check_expr(const Expr& e, int num_inputs) {
  const int n = static_cast<int>(e.nodes.size());
  if (n > kMaxNodes) {
    return "the expression has " + std::to_string(n) + " nodes; cpu_tbb compiles at most " +
           std::to_string(kMaxNodes);
  }
  return expr_problem(e, static_cast<std::size_t>(num_inputs));
}

CompileResult compile(const Expr& e, int num_inputs, DType dtype) {
  CompileResult out;
  if (std::string err = check_expr(e, num_inputs); !err.empty()) {
    out.error = err;
    return out;
  }
  const int n = static_cast<int>(e.nodes.size());

  // Keep what the root depends on; constant-only nodes are the reference's values, rounded once.
  const std::vector<bool> live = live_nodes(e);
  const std::vector<std::optional<double>> folded = fold_constants(e);

  Program p;
  p.dtype = dtype;
  p.text = e.text;
  std::vector<int> value_of(n, -1);
  // Hash-consing key: (op, input, constant bits, operand values). Equal keys compute equal values.
  using Key = std::tuple<int, int, std::uint64_t, int, int, int>;
  std::map<Key, int> seen;

  for (int i = 0; i < n; ++i) {
    if (!live[i]) continue;
    const ExprNode& node = e.nodes[i];
    Value v;
    int src[3] = {-1, -1, -1};
    for (int k = 0; k < arity(node.op); ++k) src[k] = value_of[node.args[k]];
    if (node.op == Op::input) {
      v.kind = ValueKind::input;
      v.input = node.input;
    } else if (folded[i]) {
      v.kind = ValueKind::constant;
      v.constant = kq::round_to(dtype, *folded[i]);
    }
    const Key key{
        v.kind == ValueKind::temp ? static_cast<int>(node.op) : -1 - static_cast<int>(v.kind),
        v.input,
        std::bit_cast<std::uint64_t>(v.constant),
        v.kind == ValueKind::temp ? src[0] : -1,
        v.kind == ValueKind::temp ? src[1] : -1,
        v.kind == ValueKind::temp ? src[2] : -1};
    if (auto it = seen.find(key); it != seen.end()) {
      value_of[i] = it->second;
      continue;
    }
    const int id = static_cast<int>(p.values.size());
    p.values.push_back(v);
    seen.emplace(key, id);
    value_of[i] = id;
    if (v.kind == ValueKind::temp) {
      Instr in;
      in.op = node.op;
      in.dst = id;
      for (int k = 0; k < 3; ++k) in.src[k] = src[k];
      p.instrs.push_back(in);
    }
  }
  p.root = value_of[n - 1];

  // Slots. Inputs and constants keep theirs for the whole block; a temp's slot is taken before its
  // operands' slots are released, so an instruction never writes a slot it reads (the kernels
  // declare their output __restrict).
  int next_slot = 0;
  for (Value& v : p.values) {
    if (v.kind != ValueKind::temp) v.slot = next_slot++;
  }
  std::vector<int> uses(p.values.size(), 0);
  for (const Instr& in : p.instrs) {
    for (int k = 0; k < arity(in.op); ++k) ++uses[in.src[k]];
  }
  std::vector<int> free_slots;
  for (const Instr& in : p.instrs) {
    int slot;
    if (!free_slots.empty()) {
      slot = free_slots.back();
      free_slots.pop_back();
    } else {
      slot = next_slot++;
    }
    p.values[in.dst].slot = slot;
    for (int k = 0; k < arity(in.op); ++k) {
      const int s = in.src[k];
      if (--uses[s] == 0 && p.values[s].kind == ValueKind::temp && s != p.root) {
        free_slots.push_back(p.values[s].slot);
      }
    }
  }
  p.num_slots = next_slot;
  out.program = std::move(p);
  return out;
}

std::string Program::listing(const std::vector<std::string>& input_names,
                             std::int64_t block) const {
  std::ostringstream os;
  os.precision(17);
  os << "# cpu_tbb program for: " << text << "\n"
     << "# arithmetic: " << (dtype == DType::f32 ? "float32" : "float64") << ", block of " << block
     << " elements, " << num_slots << " scratch slots of one block each\n"
     << "# each instruction is one loop over the block; dense inputs are read in place, strided\n"
     << "# ones gathered into their slot; the last one writes a dense output directly\n";
  auto name = [&](int v) { return "%" + std::to_string(v); };
  for (std::size_t i = 0; i < values.size(); ++i) {
    const Value& v = values[i];
    if (v.kind == ValueKind::input) {
      const std::string nm = v.input < static_cast<int>(input_names.size())
                                 ? input_names[v.input]
                                 : "#" + std::to_string(v.input);
      os << name(static_cast<int>(i)) << " = input " << nm << "  [slot " << v.slot << "]\n";
    } else if (v.kind == ValueKind::constant) {
      os << name(static_cast<int>(i)) << " = constant " << v.constant << "  [slot " << v.slot
         << "]\n";
    }
  }
  for (const Instr& in : instrs) {
    os << name(in.dst) << " = " << to_string(in.op);
    for (int k = 0; k < arity(in.op); ++k) os << (k ? ", " : " ") << name(in.src[k]);
    os << "  [slot " << values[in.dst].slot << "]\n";
  }
  os << "out = " << name(root) << "\n";
  return os.str();
}

}  // namespace kq::cpu
