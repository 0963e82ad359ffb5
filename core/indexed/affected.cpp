#include "indexed/affected.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace kq::ix {
namespace {

// Whether box a holds every element of box b.
bool holds(const Box& a, const Box& b) {
  for (std::size_t d = 0; d < a.size(); ++d)
    if (a[d] != kWhole && a[d] != b[d]) return false;
  return true;
}

void add(std::vector<Box>& region, Box b) {
  for (const Box& r : region)
    if (holds(r, b)) return;
  std::erase_if(region, [&](const Box& r) { return holds(b, r); });
  region.push_back(std::move(b));
}

// The access nodes of the subtree rooted at node `n`.
void accesses(const Program& p, int n, std::vector<int>& out) {
  const Node& node = p.nodes[static_cast<std::size_t>(n)];
  if (node.kind == NodeKind::access) out.push_back(n);
  for (int a : node.args) accesses(p, a, out);
}

// The left-hand side's box when `access` reads changed box `b`, or nothing where the access
// cannot read it (one variable pinned to two indices).
std::optional<Box> through(const Program& p, const Statement& s, const Node& access, const Box& b) {
  std::map<int, std::int64_t> pinned;  // index variable -> index
  for (std::size_t d = 0; d < access.args.size() && d < b.size(); ++d) {
    if (b[d] == kWhole) continue;
    const Node& sub = p.nodes[static_cast<std::size_t>(access.args[d])];
    if (sub.kind != NodeKind::index) continue;  // pins nothing: the box only grows
    auto [it, fresh] = pinned.emplace(sub.ref, b[d]);
    if (!fresh && it->second != b[d]) return std::nullopt;
  }
  Box out(s.lhs.size(), kWhole);
  for (std::size_t q = 0; q < s.lhs.size(); ++q) {
    const int v = s.lhs[q];
    if (v == s.scan_index) continue;
    if (auto it = pinned.find(v); it != pinned.end()) out[q] = it->second;
  }
  return out;
}

}  // namespace

std::vector<std::vector<Box>> affected_regions(const Program& p,
                                               const std::vector<ChangedElement>& changed) {
  std::vector<std::vector<Box>> regions(p.decls.tensors.size());
  for (const ChangedElement& c : changed)
    add(regions[static_cast<std::size_t>(c.tensor)], c.coordinate);
  for (const Statement& s : p.statements) {
    std::vector<int> reads;
    accesses(p, s.root, reads);
    std::vector<Box> lhs;
    for (int n : reads) {
      const Node& access = p.nodes[static_cast<std::size_t>(n)];
      for (const Box& b : regions[static_cast<std::size_t>(access.ref)])
        if (auto box = through(p, s, access, b)) add(lhs, std::move(*box));
    }
    for (Box& b : lhs) add(regions[static_cast<std::size_t>(s.tensor)], std::move(b));
  }
  return regions;
}

std::int64_t region_elements(const std::vector<Box>& region,
                             const std::vector<std::int64_t>& shape) {
  std::int64_t total = 0;
  for (const Box& b : region) {
    std::int64_t n = 1;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (b[d] == kWhole) n *= shape[d];
    total += n;
  }
  return total;
}

std::vector<std::int64_t> region_indices(const std::vector<Box>& region,
                                         const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> out;
  const std::size_t rank = shape.size();
  for (const Box& b : region) {
    // Walk the box's whole dims as an odometer.
    bool empty = false;
    std::vector<std::int64_t> at(rank, 0);
    for (std::size_t d = 0; d < rank; ++d) {
      if (b[d] != kWhole) at[d] = b[d];
      empty = empty || (b[d] == kWhole && shape[d] == 0);
    }
    for (bool done = empty; !done;) {
      std::int64_t linear = 0;
      for (std::size_t d = 0; d < rank; ++d) linear = linear * shape[d] + at[d];
      out.push_back(linear);
      done = true;
      for (std::size_t d = rank; d-- > 0;) {
        if (b[d] != kWhole) continue;
        if (++at[d] < shape[d]) {
          done = false;
          break;
        }
        at[d] = 0;
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace kq::ix
