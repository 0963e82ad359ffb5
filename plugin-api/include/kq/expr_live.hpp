// The nodes of a semantics expression that its root depends on. A node list may carry dead
// nodes (a hand-built list, or one whose user was folded away); code generators skip them.
#pragma once
#include <vector>

#include "kq/expr.hpp"

namespace kq {

// Per node: whether the root reads it, directly or through other nodes (the root itself is
// live). `e` must be well-formed (kq/expr_checks.hpp).
inline std::vector<bool> live_nodes(const Expr& e) {
  const int n = static_cast<int>(e.nodes.size());
  std::vector<bool> live(e.nodes.size(), false);
  if (n > 0) live[n - 1] = true;
  for (int i = n - 1; i >= 0; --i) {
    if (!live[i]) continue;
    for (int k = 0; k < arity(e.nodes[i].op); ++k) live[e.nodes[i].args[k]] = true;
  }
  return live;
}

}  // namespace kq
