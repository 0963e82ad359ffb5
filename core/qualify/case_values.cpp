#include "qualify/case_values.hpp"

#include <tbb/parallel_for.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kq/half.hpp"
#include "plan/case_shapes.hpp"
#include "qualify/values.hpp"

namespace kq {
namespace {

// A counter-based stream per (case, input, generation): position j's hash.
struct Stream {
  std::uint64_t seed;
  std::uint64_t bits(std::int64_t j, std::uint64_t salt = 0) const {
    return splitmix64(seed ^ splitmix64(salt) ^
                      (static_cast<std::uint64_t>(j) * 0x9e3779b97f4a7c15ull));
  }
  double uniform(std::int64_t j, std::uint64_t salt = 0) const {  // [0, 1)
    return static_cast<double>(bits(j, salt) >> 11) * (1.0 / 9007199254740992.0);
  }
  double mixed(std::int64_t j, double scale, std::uint64_t salt = 0) const {
    return (2.0 * uniform(j, salt) - 1.0) * scale;
  }
};

// Row positions where block and vector widths end: a kernel that skips a tail, or stops one
// block short, misses the large value placed there.
bool spike_at(std::int64_t k, std::int64_t row) {
  if (k == 0 || k == row - 1) return true;
  for (std::int64_t b = 32; b <= 8192; b *= 2)
    if (k == b - 1 || k == b) return true;
  return false;
}

// The offset of offset_rows: the noise of ±1 must survive rounding to the dtype.
double row_offset(DType t) { return is_half(t) ? 256.0 : 1e4; }

double shaped_value(const Case& c, const Stream& s, std::int64_t j, std::int64_t row, DType t) {
  const std::int64_t r = row > 0 ? j / row : 0, k = row > 0 ? j % row : 0;
  switch (c.values) {
    case ValueClass::offset_rows:
      return row_offset(t) + s.mixed(j, 1.0);
    case ValueClass::constant_rows:
      return s.mixed(r, 4.0, 1);
    case ValueClass::spikes:
      if (spike_at(k, row)) return (s.uniform(j, 2) < 0.5 ? -1.0 : 1.0) * (40.0 + s.uniform(j, 3));
      return s.mixed(j, 1.0);
    case ValueClass::integers:
      return static_cast<double>(static_cast<std::int64_t>(s.bits(j) % (2 * kIntegerClassMax + 1)) -
                                 kIntegerClassMax);
    case ValueClass::masked_rows:
      if (r == 1 || s.uniform(j, 4) < 0.25) return -std::numeric_limits<double>::infinity();
      return s.mixed(j, 1.0);
    default:
      return s.mixed(j, c.scale);
  }
}

bool shaped_class(ValueClass v) {
  return v == ValueClass::offset_rows || v == ValueClass::constant_rows ||
         v == ValueClass::spikes || v == ValueClass::integers || v == ValueClass::masked_rows;
}

void store_integer(DType t, std::int64_t v, unsigned char* p) {
  if (t == DType::i32) {
    const auto x = static_cast<std::int32_t>(v);
    std::memcpy(p, &x, 4);
  } else if (t == DType::i64) {
    std::memcpy(p, &v, 8);
  } else {
    *p = v != 0 ? 1 : 0;
  }
}

// Integer inputs: within a gather's range, else in [-8, 8] (bool: 0 or 1).
void fill_integers(const Spec& spec, const Case& c, int tensor, DType t, unsigned char* dst,
                   std::int64_t count, const Stream& s) {
  const auto range = gather_range(*spec.op.program, tensor, c.dims);
  const std::size_t es = dtype_size(t);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, count, 1 << 16), [&](const auto& r) {
    for (std::int64_t j = r.begin(); j < r.end(); ++j) {
      std::int64_t v = 0;
      if (t == DType::boolean)
        v = static_cast<std::int64_t>(s.bits(j) & 1);
      else if (range)  // no value is in range where the range is empty: 0, as any other
        v = range->hi >= range->lo
                ? range->lo + static_cast<std::int64_t>(
                                  s.bits(j) % static_cast<std::uint64_t>(range->hi - range->lo + 1))
                : 0;
      else
        v = static_cast<std::int64_t>(s.bits(j) % (2 * kSmallIntegerMax + 1)) - kSmallIntegerMax;
      store_integer(t, v, dst + static_cast<std::size_t>(j) * es);
    }
  });
}

int input_tensor(const ix::Program& p, int input) {
  int seen = 0;
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
    if (p.decls.tensors[t].role == ix::Role::input && seen++ == input) return static_cast<int>(t);
  return -1;
}

void fill_shaped(const Spec& spec, const Case& c, int input, void* dst, std::int64_t count,
                 std::uint64_t generation) {
  const ix::Program& p = *spec.op.program;
  const int tensor = input_tensor(p, input);
  const ix::TensorDecl& d = p.decls.tensors[static_cast<std::size_t>(tensor)];
  const Stream s{splitmix64(c.seed ^ splitmix64(static_cast<std::uint64_t>(input) + 1) ^
                            (generation * 0x51ed27ull))};
  auto* bytes = static_cast<unsigned char*>(dst);
  if (is_integer(d.dtype)) return fill_integers(spec, c, tensor, d.dtype, bytes, count, s);
  if (!shaped_class(c.values)) return fill_input_values(c, input, d.dtype, dst, count, generation);
  const auto shape = declared_shape(d, c.dims);
  const std::int64_t row = shape.empty() ? 1 : shape.back();
  const std::size_t es = dtype_size(d.dtype);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, count, 1 << 16), [&](const auto& r) {
    for (std::int64_t j = r.begin(); j < r.end(); ++j)
      store_rounded(d.dtype, shaped_value(c, s, j, row, d.dtype),
                    bytes + static_cast<std::size_t>(j) * es);
  });
}

// Whether node `n` reads through integer tensor `tensor`, directly (t[m]).
bool reads(const ix::Program& p, int n, int tensor) {
  const ix::Node& node = p.nodes[static_cast<std::size_t>(n)];
  return node.kind == ix::NodeKind::access && node.ref == tensor;
}

// Where subscript `n` reads through `tensor` as `t[..]` or `rest + t[..]` (either order), the
// values `rest` takes ({0, 0} for a direct read); nullopt otherwise.
std::optional<ix::IndexRange> offset_of_gather(const ix::Program& p, int n, int tensor,
                                               const std::vector<std::int64_t>& dims) {
  if (reads(p, n, tensor)) return ix::IndexRange{0, 0};
  const ix::Node& node = p.nodes[static_cast<std::size_t>(n)];
  if (node.kind != ix::NodeKind::apply || node.op != Op::add || node.args.size() != 2)
    return std::nullopt;
  for (int side = 0; side < 2; ++side)
    if (reads(p, node.args[static_cast<std::size_t>(side)], tensor))
      return ix::subscript_values(p, node.args[static_cast<std::size_t>(1 - side)], dims);
  return std::nullopt;
}

}  // namespace

std::optional<ix::IndexRange> gather_range(const ix::Program& p, int tensor,
                                           const std::vector<std::int64_t>& dims) {
  std::optional<ix::IndexRange> range;
  for (const ix::Node& n : p.nodes) {
    if (n.kind != ix::NodeKind::access) continue;
    const ix::TensorDecl& target = p.decls.tensors[static_cast<std::size_t>(n.ref)];
    for (std::size_t k = 0; k < n.args.size() && k < target.shape.size(); ++k) {
      const auto rest = offset_of_gather(p, n.args[k], tensor, dims);
      constexpr std::int64_t kFar = std::int64_t{1} << 50;  // beyond any tensor's extent
      if (!rest || rest->lo < -kFar || rest->hi > kFar) continue;
      const ix::Extent& e = target.shape[k];
      const std::int64_t size = e.is_dim() ? dims.at(static_cast<std::size_t>(e.dim)) : e.constant;
      // rest + t in [0, size) for every value of rest.
      const ix::IndexRange r{-rest->lo, size - 1 - rest->hi};
      range = range ? ix::IndexRange{std::max(range->lo, r.lo), std::min(range->hi, r.hi)} : r;
    }
  }
  return range;
}

void fill_case_input(const Spec& spec, const Case& c, int input, void* dst, std::int64_t count,
                     std::uint64_t generation) {
  if (spec.op.program) return fill_shaped(spec, c, input, dst, count, generation);
  fill_input_values(c, input, spec.op.dtype, dst, count, generation);
}

}  // namespace kq
