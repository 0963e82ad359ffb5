#include "indexed/derived_dims.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string_view>

namespace kq::ix {
namespace {

struct Failure {
  std::string message;
  std::size_t at = 0;
};

// Recursive descent over the formula, evaluating as it goes. With `values` empty it checks only
// (every name a base dim; values taken as 1, no arithmetic failure).
class Formula {
 public:
  Formula(std::string_view text, const Declarations& d, const std::vector<std::int64_t>* values)
      : text_(text), d_(d), values_(values) {}

  std::int64_t value() {
    const std::int64_t v = sum();
    skip();
    if (at_ < text_.size()) fail("unexpected '" + std::string(1, text_[at_]) + "'");
    return v;
  }

  // The dims value() read, in order, repeated where read again.
  const std::vector<int>& named() const { return named_; }

 private:
  std::int64_t sum() {
    std::int64_t v = product();
    for (skip(); at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-'); skip()) {
      const char op = text_[at_++];
      const std::int64_t r = product();
      const bool over =
          op == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v);
      checked(over);
    }
    return v;
  }

  std::int64_t product() {
    std::int64_t v = unary();
    for (skip(); at_ < text_.size() && (text_[at_] == '*' || text_[at_] == '/'); skip()) {
      const char op = text_[at_++];
      const std::int64_t r = unary();
      if (op == '*') {
        checked(__builtin_mul_overflow(v, r, &v));
      } else if (values_ == nullptr) {
        v = 1;
      } else if (r == 0) {
        fail("divides by 0");
      } else if (v == std::numeric_limits<std::int64_t>::min() && r == -1) {
        fail("leaves int64");
      } else {
        v = v / r - ((v % r != 0) && ((v < 0) != (r < 0)) ? 1 : 0);  // floor
      }
    }
    return v;
  }

  std::int64_t unary() {
    skip();
    if (at_ < text_.size() && text_[at_] == '-') {
      if (++minus_ > kMaxDepth) fail("more than " + std::to_string(kMaxDepth) + " minus signs");
      ++at_;
      const std::int64_t v = unary();
      std::int64_t r = 0;
      checked(__builtin_sub_overflow(std::int64_t{0}, v, &r));
      return r;
    }
    return primary();
  }

  std::int64_t primary() {
    skip();
    if (at_ >= text_.size()) fail("an operand is missing at the end");
    const char c = text_[at_];
    if (c == '(') {
      // A hostile spec's "((((..." must not exhaust the stack.
      if (++depth_ > kMaxDepth) fail("parentheses nested deeper than " + std::to_string(kMaxDepth));
      ++at_;
      const std::int64_t v = sum();
      --depth_;
      skip();
      if (at_ >= text_.size() || text_[at_] != ')') fail("')' is missing");
      ++at_;
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t v = 0;
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        const std::int64_t digit = text_[at_++] - '0';
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, digit, &v))
          fail("a number beyond int64");
      }
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
    fail("unexpected '" + std::string(1, c) +
         "' (a formula has integers, dims, + - * / and "
         "parentheses)");
  }

  std::int64_t name() {
    const std::size_t start = at_;
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_'))
      ++at_;
    const std::string n(text_.substr(start, at_ - start));
    for (std::size_t i = 0; i < d_.dims.size(); ++i) {
      if (d_.dims[i].name != n) continue;
      if (d_.dims[i].is_derived()) {
        at_ = start;
        fail("'" + n + "' is derived too; a formula names base dims only");
      }
      named_.push_back(static_cast<int>(i));
      return values_ ? (*values_)[i] : 1;
    }
    at_ = start;
    fail("unknown name '" + n + "' (a formula names the spec's dims)");
  }

  // Checking alone (no values), every operand is 1 and nothing overflows.
  void checked(bool overflowed) {
    if (overflowed && values_ != nullptr) fail("leaves int64");
  }

  void skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }

  [[noreturn]] void fail(const std::string& message) { throw Failure{message, at_}; }

  static constexpr int kMaxDepth = 64;
  int depth_ = 0;
  int minus_ = 0;  // unary minus recurses too
  std::string_view text_;
  std::vector<int> named_;  // the dims read, in order, repeated where read again
  const Declarations& d_;
  const std::vector<std::int64_t>* values_;
  std::size_t at_ = 0;
};

// "H=5, W=7": the base dims the formula's value came from.
std::string base_values(const Declarations& d, const std::vector<std::int64_t>& dims) {
  std::string s;
  for (std::size_t i = 0; i < d.dims.size(); ++i) {
    if (d.dims[i].is_derived()) continue;
    s += (s.empty() ? "" : ",") + d.dims[i].name + "=" + std::to_string(dims[i]);
  }
  return s;
}

}  // namespace

std::optional<DimFormulaError> check_dim_formula(const Declarations& d, int dim) {
  const DimDecl& decl = d.dims.at(static_cast<std::size_t>(dim));
  try {
    Formula(decl.derived, d, nullptr).value();
  } catch (const Failure& f) {
    return DimFormulaError{f.message, static_cast<int>(f.at) + 1};
  }
  return std::nullopt;
}

std::optional<std::string> complete_dims(const Declarations& d, std::vector<std::int64_t>& dims) {
  if (dims.size() != d.dims.size())
    return "a point gives " + std::to_string(dims.size()) + " values for " +
           std::to_string(d.dims.size()) + " dims";
  for (std::size_t i = 0; i < d.dims.size(); ++i) {
    const DimDecl& decl = d.dims[i];
    if (!decl.is_derived()) continue;
    const std::string what = decl.name + " = " + decl.derived;
    try {
      dims[i] = Formula(decl.derived, d, &dims).value();
    } catch (const Failure& f) {
      return what + " " + f.message + " at " + base_values(d, dims);
    }
    if (dims[i] < 1) {
      return what + " is " + std::to_string(dims[i]) + " at " + base_values(d, dims) +
             "; every dim is at least 1";
    }
  }
  return std::nullopt;
}

std::vector<int> formula_dims(const Declarations& d, int dim) {
  const DimDecl& decl = d.dims.at(static_cast<std::size_t>(dim));
  if (!decl.is_derived()) return {};
  Formula f(decl.derived, d, nullptr);
  try {
    f.value();
  } catch (const Failure&) {
    return {};  // check_dim_formula reports it
  }
  std::vector<int> out;
  for (int i : f.named())
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  return out;
}

bool complete_dims_growing(const Declarations& d, std::vector<std::int64_t>& dims) {
  for (int tries = 0; tries < 24; ++tries) {
    if (!complete_dims(d, dims)) return true;
    bool grew = false;
    for (std::size_t i = 0; i < d.dims.size(); ++i) {
      if (!d.dims[i].is_derived() || dims[i] >= 1) continue;
      for (int b : formula_dims(d, static_cast<int>(i))) {
        auto& v = dims[static_cast<std::size_t>(b)];
        if (v > (std::int64_t{1} << 40)) return false;
        v = 2 * v + 1;
        grew = true;
      }
    }
    if (!grew) return false;  // a division by 0, or a formula that no growth mends
  }
  return !complete_dims(d, dims);
}

}  // namespace kq::ix
