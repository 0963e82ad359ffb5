// The canonical text of a format-2 program: what an arm compares to recognise the computation it
// implements, structurally and never by the op's name. Names are replaced by their place: inputs
// in0, in1, ... and outputs out0, ... in declaration order, temporaries tmp0, ... in the order
// they are assigned, dims d0, ... and params p0, ... in the order they first appear in the
// tensors' shapes and the statements, index variables i0, ... in the order they first appear in
// their statement.
// Every operation is written as a call with its operands, so spacing, parentheses and names
// play no part. `kq check-spec SPEC` prints it ("canonical form"), for an arm's author to copy.
//
//   softmax:  tmp0[i0] = max(i1, in0[i0, i1])
//             tmp1[i0, i1] = exp(sub(in0[i0, i1], tmp0[i0]))
//             tmp2[i0] = sum(i1, tmp1[i0, i1])
//             out0[i0, i1] = div(tmp1[i0, i1], tmp2[i0])
//             shapes: in0[d0, d1] out0[d0, d1] tmp0[d0] tmp1[d0, d1] tmp2[d0]
//
// An input's pad value follows its shape ("in0[d0, d1, d2] pad -inf"). Derived dims' formulas
// follow the shapes ("derived: d2 = ( d0 - 4 ) / 2 + 1, d3 = d1 - 1").
// Dtypes and the params' values are not part of it: an arm checks those on their own.
#pragma once
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kq/indexed.hpp"

namespace kq::ix {

namespace text_detail {

// Numbers each name at its first sighting.
class Renamer {
 public:
  explicit Renamer(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string operator()(int id) {
    auto [it, fresh] = names_.try_emplace(id, prefix_ + std::to_string(names_.size()));
    return it->second;
  }

 private:
  std::string prefix_;
  std::map<int, std::string> names_;
};

class Printer {
 public:
  explicit Printer(const Program& p) : p_(p) {
    int in = 0, out = 0;
    for (std::size_t t = 0; t < p.decls.tensors.size(); ++t) {
      const Role r = p.decls.tensors[t].role;
      if (r == Role::input) tensor_[static_cast<int>(t)] = "in" + std::to_string(in++);
      if (r == Role::output) tensor_[static_cast<int>(t)] = "out" + std::to_string(out++);
    }
  }

  // Temporaries are numbered as the statements assign them, then dims as the shapes name them
  // (inputs, outputs, temporaries), then params and indices as the statements use them.
  std::string text() {
    std::vector<int> temps;
    for (const Statement& s : p_.statements)
      if (!tensor_.count(s.tensor)) tensor(s.tensor), temps.push_back(s.tensor);
    std::string shapes = "shapes:";
    for (const Role role : {Role::input, Role::output})
      for (std::size_t t = 0; t < p_.decls.tensors.size(); ++t)
        if (p_.decls.tensors[t].role == role) shapes += " " + shape(static_cast<int>(t));
    for (int t : temps) shapes += " " + shape(t);
    std::string body;
    for (const Statement& s : p_.statements) body += statement(s) + "\n";
    std::string derived;
    for (std::size_t d = 0; d < p_.decls.dims.size(); ++d)
      if (p_.decls.dims[d].is_derived())
        derived += (derived.empty() ? " " : ", ") + dim_(static_cast<int>(d)) + " = " +
                   formula(p_.decls.dims[d].derived);
    return body + shapes + "\n" + (derived.empty() ? "" : "derived:" + derived + "\n");
  }

 private:
  std::string tensor(int t) {
    auto it = tensor_.find(t);
    if (it != tensor_.end()) return it->second;
    return tensor_[t] = "tmp" + std::to_string(temps_++);
  }

  // A derived dim's formula with the dims by place, one blank between tokens: "(H-4)/2+1" and
  // "(H - 4) / 2 + 1" read alike.
  std::string formula(const std::string& text) {
    std::string out, token;
    auto flush = [&] {
      if (token.empty()) return;
      const bool name = !(token[0] >= '0' && token[0] <= '9');
      std::string t = token;
      for (std::size_t d = 0; name && d < p_.decls.dims.size(); ++d)
        if (p_.decls.dims[d].name == token) t = dim_(static_cast<int>(d));
      out += (out.empty() ? "" : " ") + t;
      token.clear();
    };
    for (char c : text) {
      const bool word =
          (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
      if (word) {
        token += c;
        continue;
      }
      flush();
      if (c != ' ' && c != '\t') token = std::string(1, c), flush();
    }
    flush();
    return out;
  }

  std::string extent(const Extent& e) {
    return e.is_dim() ? dim_(e.dim) : std::to_string(e.constant);
  }

  std::string shape(int t) {
    std::string s = tensor(t) + "[";
    const auto& sh = p_.decls.tensors[static_cast<std::size_t>(t)].shape;
    for (std::size_t k = 0; k < sh.size(); ++k) s += (k ? ", " : "") + extent(sh[k]);
    const auto& pad = p_.decls.tensors[static_cast<std::size_t>(t)].pad;
    return s + "]" + (pad ? " pad " + number(*pad) : "");
  }

  static std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
  }

  // Index variables are numbered afresh in each statement: each binds its own.
  std::string statement(const Statement& s) {
    index_ = Renamer("i");
    std::string lhs = tensor(s.tensor);
    if (!s.lhs.empty()) {
      lhs += "[";
      for (std::size_t k = 0; k < s.lhs.size(); ++k) lhs += (k ? ", " : "") + index_(s.lhs[k]);
      lhs += "]";
    }
    return lhs + " = " + node(s.root);
  }

  std::string list(const std::vector<int>& nodes) {
    std::string s;
    for (std::size_t k = 0; k < nodes.size(); ++k) s += (k ? ", " : "") + node(nodes[k]);
    return s;
  }

  // A reduction's indices; one whose range is written keeps it (`i1 : 4`, `i1 : d2`).
  std::string over(const std::vector<int>& vars) {
    auto one = [&](int v) {
      const IndexVar& x = p_.indices[static_cast<std::size_t>(v)];
      return index_(v) + (x.ranged ? " : " + extent(x.extent) : "");
    };
    if (vars.size() == 1) return one(vars[0]);
    std::string s = "(";
    for (std::size_t k = 0; k < vars.size(); ++k) s += (k ? ", " : "") + one(vars[k]);
    return s + ")";
  }

  std::string node(int i) {
    const Node& n = p_.nodes[static_cast<std::size_t>(i)];
    switch (n.kind) {
      case NodeKind::number:
        return number(n.value);
      case NodeKind::param:
        return param_(n.ref);
      case NodeKind::dim:
        return dim_(n.ref);
      case NodeKind::index:
        return index_(n.ref);
      case NodeKind::access:
        return n.args.empty() ? tensor(n.ref) : tensor(n.ref) + "[" + list(n.args) + "]";
      case NodeKind::apply:
        return std::string(to_string(n.op)) + "(" + list(n.args) + ")";
      case NodeKind::reduce:
      case NodeKind::scan: {
        // The body first, then the indices: the order in which their first sightings number
        // them, fixed here rather than left to the compiler's order of the operands of `+`
        // (GCC's, which every canonical form written so far follows).
        const std::string body = list(n.args);
        const std::string indices = over(n.over);
        if (n.kind == NodeKind::reduce)
          return std::string(to_string(n.reduction)) + "(" + indices + ", " + body + ")";
        return std::string(n.scan == ScanKind::cumsum ? "cumsum" : "cumprod") + "(" + indices +
               ", " + body + (n.exclusive ? ", exclusive" : "") + (n.reverse ? ", reverse" : "") +
               ")";
      }
    }
    return "?";
  }

  const Program& p_;
  std::map<int, std::string> tensor_;
  int temps_ = 0;
  Renamer dim_{"d"}, param_{"p"}, index_{"i"};
};

}  // namespace text_detail

inline std::string canonical_text(const Program& p) { return text_detail::Printer(p).text(); }

// Whether `p` is the computation whose canonical text is `expected`, blanks aside (runs of
// spaces, tabs and newlines count as one; leading and trailing ones as none).
inline bool computes(const Program& p, std::string_view expected) {
  auto squeeze = [](std::string_view s) {
    std::string out;
    bool blank = false;
    for (char c : s) {
      const bool b = c == ' ' || c == '\t' || c == '\n' || c == '\r';
      if (b) {
        blank = !out.empty();
        continue;
      }
      if (blank) out += ' ';
      blank = false;
      out += c;
    }
    return out;
  };
  return squeeze(canonical_text(p)) == squeeze(expected);
}

}  // namespace kq::ix
