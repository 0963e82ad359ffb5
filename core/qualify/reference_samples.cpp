#include "qualify/reference_samples.hpp"

#include <algorithm>
#include <set>

#include "indexed/buffer.hpp"
#include "indexed/cost.hpp"
#include "plan/case_shapes.hpp"
#include "qualify/values.hpp"
#include "util/env_number.hpp"

namespace kq {
namespace {

// Offsets where 32-bit element offsets wrap: signed, then unsigned.
constexpr std::int64_t kWraps[] = {std::int64_t{1} << 31, std::int64_t{1} << 32};
// The block and tile widths whose boundaries a kernel may get wrong.
constexpr std::int64_t kBlocks[] = {32, 128, 1024, 4096};

// Counter-based draws from the case's seed, one stream per output.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : seed_(seed) {}
  std::int64_t below(std::int64_t n) {  // in [0, n), n > 0
    return static_cast<std::int64_t>(splitmix64(seed_ ^ splitmix64(++count_)) %
                                     static_cast<std::uint64_t>(n));
  }

 private:
  std::uint64_t seed_;
  std::uint64_t count_ = 0;
};

// Indices of a dim of extent n worth checking: its edges and the indices around the first two,
// the middle and the last two multiples of each block width below n.
std::set<std::int64_t> boundary_indices(std::int64_t n) {
  std::set<std::int64_t> s;
  auto add = [&](std::int64_t i) {
    if (i >= 0 && i < n) s.insert(i);
  };
  for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, n - 2, n - 1}) add(i);
  for (std::int64_t b : kBlocks) {
    const std::int64_t last = (n - 1) / b;  // the last multiple of b below n, in units of b
    for (std::int64_t k : {std::int64_t{1}, std::int64_t{2}, last / 2, last - 1, last}) {
      if (k < 1) continue;
      for (std::int64_t d : {-1, 0, 1}) add(k * b + d);
    }
  }
  return s;
}

std::int64_t linear_of(const std::vector<std::int64_t>& shape,
                       const std::vector<std::int64_t>& coord) {
  std::int64_t l = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) l = l * shape[d] + coord[d];
  return l;
}

// Dim values (by dim; -1 unset) that tensor t's elements at and around the wrap offsets have:
// the element before, at and after each, the first and last of its row and of the next row.
std::vector<std::vector<std::int64_t>> wrap_assignments(const ix::Program& p,
                                                        const std::vector<std::int64_t>& dims) {
  std::vector<std::vector<std::int64_t>> out;
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role == ix::Role::temporary) continue;
    const std::vector<std::int64_t> shape = declared_shape(t, dims);
    const std::int64_t n = ix::numel_of(shape);
    if (shape.empty()) continue;
    const std::int64_t row = shape.back();
    for (std::int64_t w : kWraps) {
      if (w >= n || row == 0) continue;
      const std::int64_t start = w - w % row;
      for (std::int64_t l :
           {w - 1, w, w + 1, start, start + row - 1, start + row, start + 2 * row - 1}) {
        if (l < 0 || l >= n) continue;
        const std::vector<std::int64_t> c = ix::coord_of(shape, l);
        std::vector<std::int64_t> a(dims.size(), -1);
        for (std::size_t k = 0; k < t.shape.size(); ++k)
          if (t.shape[k].is_dim() && a[static_cast<std::size_t>(t.shape[k].dim)] < 0)
            a[static_cast<std::size_t>(t.shape[k].dim)] = c[k];
        out.push_back(std::move(a));
      }
    }
  }
  return out;
}

std::vector<std::int64_t> samples_of(const ix::TensorDecl& t, const std::vector<std::int64_t>& dims,
                                     const std::vector<std::vector<std::int64_t>>& wraps,
                                     Draws& draws) {
  const std::vector<std::int64_t> shape = declared_shape(t, dims);
  const std::int64_t n = ix::numel_of(shape);
  std::vector<std::int64_t> all;
  if (n <= kReferenceSamples) {
    for (std::int64_t i = 0; i < n; ++i) all.push_back(i);
    return all;
  }
  const std::size_t r = shape.size();
  std::set<std::int64_t> s;
  // Every corner.
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << r); ++mask) {
    std::vector<std::int64_t> c(r);
    for (std::size_t d = 0; d < r; ++d) c[d] = (mask >> d) & 1 ? shape[d] - 1 : 0;
    s.insert(linear_of(shape, c));
  }
  // Along each dim, its boundaries; the others first, last, random.
  for (std::size_t d = 0; d < r; ++d) {
    for (std::int64_t v : boundary_indices(shape[d])) {
      for (int others = 0; others < 3; ++others) {
        std::vector<std::int64_t> c(r);
        for (std::size_t e = 0; e < r; ++e)
          c[e] = e == d ? v : others == 0 ? 0 : others == 1 ? shape[e] - 1 : draws.below(shape[e]);
        s.insert(linear_of(shape, c));
      }
    }
  }
  // Where some tensor's 32-bit offsets wrap, through the dims this output shares with it.
  for (const std::vector<std::int64_t>& a : wraps) {
    std::vector<std::int64_t> c(r);
    for (std::size_t e = 0; e < r; ++e) {
      const int dim = t.shape[e].dim;
      const std::int64_t v = dim >= 0 ? a[static_cast<std::size_t>(dim)] : -1;
      c[e] = v >= 0 && v < shape[e] ? v : draws.below(shape[e]);
    }
    s.insert(linear_of(shape, c));
  }
  // Random ones up to the count (a bounded number of draws: the set may hold most of n).
  for (std::int64_t tries = 0;
       static_cast<std::int64_t>(s.size()) < kReferenceSamples && tries < 4 * kReferenceSamples;
       ++tries)
    s.insert(draws.below(n));
  return {s.begin(), s.end()};
}

}  // namespace

double reference_work_budget() {
  if (const auto v = env_number("KQ_REFERENCE_WORK_BUDGET")) return static_cast<double>(*v);
  return kReferenceWorkBudget;
}

double reference_work(const ix::Program& p, const std::vector<std::int64_t>& dims) {
  ix::DimValues values;
  for (std::size_t d = 0; d < p.decls.dims.size() && d < dims.size(); ++d)
    values[p.decls.dims[d].name] = dims[d];
  double work = ix::default_cost(p, values).flops;
  for (const ix::Statement& s : p.statements) {
    double n = 1.0;
    for (std::int64_t x : declared_shape(p.decls.tensors[static_cast<std::size_t>(s.tensor)], dims))
      n *= static_cast<double>(x);
    work += n;
  }
  return work;
}

bool reference_sampled(const Spec& spec, const Case& c) {
  if (!spec.op.program || c.dims.empty()) return false;
  return reference_work(*spec.op.program, c.dims) > reference_work_budget();
}

std::vector<std::vector<std::int64_t>> reference_samples(const Spec& spec, const Case& c) {
  const ix::Program& p = *spec.op.program;
  const auto wraps = wrap_assignments(p, c.dims);
  std::vector<std::vector<std::int64_t>> out;
  std::uint64_t k = 0;
  for (const ix::TensorDecl& t : p.decls.tensors) {
    if (t.role != ix::Role::output) continue;
    Draws draws(splitmix64(c.seed ^ splitmix64(0x5a3b1e5ull + ++k)));
    out.push_back(samples_of(t, c.dims, wraps, draws));
  }
  return out;
}

}  // namespace kq
