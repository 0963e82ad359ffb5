#include "qualify/compare.hpp"

#include "kq/half.hpp"
#include "qualify/exact_integers.hpp"
#include "qualify/reference_samples.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace kq {
namespace {

// Maps a float's bits to an integer line on which adjacent floats are adjacent integers and
// -0 and +0 coincide.
std::int64_t ordered(DType dtype, std::uint64_t bits) {
  if (is_half(dtype)) {
    auto b = static_cast<std::uint16_t>(bits);
    std::int64_t mag = b & 0x7fffu;
    return (b >> 15) ? -mag : mag;
  }
  if (dtype == DType::f32) {
    auto b = static_cast<std::uint32_t>(bits);
    std::int64_t mag = b & 0x7fffffffu;
    return (b >> 31) ? -mag : mag;
  }
  std::int64_t mag = static_cast<std::int64_t>(bits & 0x7fffffffffffffffull);
  return (bits >> 63) ? -mag : mag;
}

// The exponent field and the significand of a float dtype's bit pattern (sign dropped).
struct Fields {
  std::uint64_t exponent, significand;
};
Fields fields(DType dtype, std::uint64_t bits) {
  switch (dtype) {
    case DType::f16:
      return {bits & 0x7c00u, bits & 0x03ffu};
    case DType::bf16:
      return {bits & 0x7f80u, bits & 0x007fu};
    case DType::f32:
      return {bits & 0x7f800000u, bits & 0x007fffffu};
    default:
      return {bits & 0x7ff0000000000000ull, bits & 0x000fffffffffffffull};
  }
}

bool is_subnormal(DType dtype, std::uint64_t bits) {
  const Fields f = fields(dtype, bits);
  return f.exponent == 0 && f.significand != 0;
}

bool is_zero(DType dtype, std::uint64_t bits) {
  const Fields f = fields(dtype, bits);
  return f.exponent == 0 && f.significand == 0;
}

// What a wrong element's two values say of its cause, where they name a usual one, else "".
std::string mismatch_cause(DType dtype, std::uint64_t want_bits, std::uint64_t got_bits) {
  if (is_integer(dtype)) return "";
  if (is_subnormal(dtype, want_bits) && is_zero(dtype, got_bits))
    return "a subnormal result flushed to zero";
  if (is_zero(dtype, want_bits) && is_zero(dtype, got_bits)) return "a zero of the other sign";
  return "";
}

}  // namespace

double bits_to_double(DType dtype, std::uint64_t bits) {
  return load_as_double(dtype, &bits);  // little-endian: the low bytes are the element
}

std::string describe_bits(DType dtype, std::uint64_t bits) {
  char buf[96];
  if (is_integer(dtype))
    std::snprintf(buf, sizeof buf, "%.0f", bits_to_double(dtype, bits));
  else if (is_half(dtype))
    std::snprintf(buf, sizeof buf, "%.5g (0x%04x)", bits_to_double(dtype, bits),
                  static_cast<unsigned>(bits & 0xffffu));
  else if (dtype == DType::f32)
    std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", bits_to_double(dtype, bits),
                  static_cast<unsigned>(bits));
  else
    std::snprintf(buf, sizeof buf, "%.17g (0x%016llx)", bits_to_double(dtype, bits),
                  static_cast<unsigned long long>(bits));
  return buf;
}

std::string describe_mismatch(DType dtype, std::uint64_t want_bits, std::uint64_t got_bits) {
  std::string text =
      "expected " + describe_bits(dtype, want_bits) + ", got " + describe_bits(dtype, got_bits);
  const std::string cause = mismatch_cause(dtype, want_bits, got_bits);
  return cause.empty() ? text : text + " (" + cause + ")";
}

bool element_matches(const CompareRule& rule, DType dtype, std::uint64_t want_bits,
                     std::uint64_t got_bits) {
  if (want_bits == got_bits) return true;
  if (is_integer(dtype)) return false;  // indices, targets, masks: exact, whatever the rule
  const double want = bits_to_double(dtype, want_bits);
  const double got = bits_to_double(dtype, got_bits);
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  switch (rule.kind) {
    case CompareRule::Kind::bitwise:
      return false;
    case CompareRule::Kind::ulp: {
      if (std::isinf(want) || std::isinf(got)) return want == got;
      std::int64_t d = ordered(dtype, want_bits) - ordered(dtype, got_bits);
      if (d < 0) d = -d;
      return d <= rule.max_ulp;
    }
    case CompareRule::Kind::tolerance:
      if (std::isinf(want) || std::isinf(got)) return want == got;
      return std::fabs(got - want) <= rule.atol + rule.rtol * std::fabs(want);
  }
  return false;
}

double ulp_at(DType dtype, std::uint64_t bits) {
  const std::uint64_t sign = std::uint64_t{1} << (8 * dtype_size(dtype) - 1);
  const std::uint64_t mag = bits & (sign - 1);
  const double a = bits_to_double(dtype, mag);
  const double up = bits_to_double(dtype, mag + 1);
  return std::isfinite(up) ? up - a : a - bits_to_double(dtype, mag - 1);
}

bool element_matches(const OutputRule& rule, DType dtype, double bound, std::uint64_t want_bits,
                     std::uint64_t got_bits) {
  if (!rule.by_bound()) return element_matches(rule.rule, dtype, want_bits, got_bits);
  if (want_bits == got_bits) return true;
  if (is_integer(dtype)) return false;
  const double want = bits_to_double(dtype, want_bits);
  const double got = bits_to_double(dtype, got_bits);
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return want == got;
  if (std::isnan(bound)) return true;
  return std::fabs(got - want) <=
         rule.bound_scale * bound + rule.bound_ulps * ulp_at(dtype, want_bits);
}

}  // namespace kq

namespace kq {

bool output_by_bound(const Spec& spec, std::size_t k) {
  return spec.shaped && k < spec.shaped->compare.size() &&
         spec.shaped->compare[k].kind == ShapedCompare::Kind::accumulation_bound;
}

std::vector<OutputRule> output_rules(const Spec& spec, const Case& c) {
  if (!spec.shaped) return {spec.op.compare};
  const ShapedContract& sc = *spec.shaped;
  const Point at{c.dims};
  std::vector<OutputRule> rules;
  for (const ShapedCompare& sh : sc.compare) {
    OutputRule o;
    CompareRule& r = o.rule;
    switch (sh.kind) {
      case ShapedCompare::Kind::bitwise:
        r.kind = CompareRule::Kind::bitwise;
        break;
      case ShapedCompare::Kind::ulp:
        r.kind = CompareRule::Kind::ulp;
        r.max_ulp = sh.max_ulp;
        break;
      case ShapedCompare::Kind::tolerance:
        r.kind = CompareRule::Kind::tolerance;
        r.atol = sh.atol ? evaluate(*sh.atol, sc, at) : 0.0;
        r.rtol = sh.rtol ? evaluate(*sh.rtol, sc, at) : 0.0;
        break;
      case ShapedCompare::Kind::accumulation_bound:
        o.bound_scale = kAccumulationBoundFactor * contract_roundoff(sc);
        o.bound_ulps = static_cast<double>(sh.max_ulp);
        break;
    }
    const DType dtype = sc.program->decls.tensors[static_cast<std::size_t>(sh.output)].dtype;
    // Bitwise stays bitwise: {ulp: 0} would admit a zero of the other sign.
    if (c.values == ValueClass::integers && !is_integer(dtype) &&
        sh.kind != ShapedCompare::Kind::bitwise &&
        exact_integer_output(*sc.program, sh.output, c.dims, sc.compute)) {
      o = OutputRule{};
      o.rule.kind = CompareRule::Kind::ulp;
      o.rule.max_ulp = 0;
      o.exact = true;
    }
    rules.push_back(o);
  }
  if (reference_sampled(spec, c)) {
    std::vector<std::vector<std::int64_t>> samples = reference_samples(spec, c);
    for (std::size_t k = 0; k < rules.size() && k < samples.size(); ++k)
      rules[k].samples = std::make_shared<const std::vector<std::int64_t>>(std::move(samples[k]));
  }
  return rules;
}

std::vector<CompareRule> compare_rules(const Spec& spec, const Case& c) {
  std::vector<CompareRule> rules;
  for (const OutputRule& o : output_rules(spec, c)) {
    if (o.by_bound())
      throw std::runtime_error(
          "compare: bound: accumulation needs the reference's bounds; this check takes none "
          "(it must take output_rules and case_reference's bounds)");
    rules.push_back(o.rule);
  }
  return rules;
}

}  // namespace kq
