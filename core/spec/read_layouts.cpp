// layouts: which tensor views the caller may pass (contiguity, alignment, ranks).
#include <algorithm>

#include "spec/map_fields.hpp"
#include "spec/sections.hpp"

namespace kq::spec_detail {
namespace {

// TensorView::alignment() reports at most 256, so a larger promise could not be checked.
constexpr std::int64_t kMaxAlignment = 256;

}  // namespace

LayoutContract read_layouts(const std::optional<Field>& f, DType dtype) {
  LayoutContract c;
  const auto elem = static_cast<std::int64_t>(dtype_size(dtype));
  c.min_alignment_bytes = std::max<std::int64_t>(c.min_alignment_bytes, elem);
  if (!f) return c;
  MapFields m(*f, {"contiguous_only", "min_alignment_bytes", "ranks"});
  if (auto v = m.get("contiguous_only")) c.contiguous_only = read_bool(*v);
  if (auto v = m.get("min_alignment_bytes")) {
    const std::int64_t a = read_int(*v);
    if (a <= 0 || (a & (a - 1)) != 0) {
      v->fail("must be a power of two, got " + std::to_string(a));
    }
    if (a % elem != 0) {
      v->fail("must be a multiple of the dtype size (" + std::to_string(elem) + " bytes for " +
              std::string(to_string(dtype)) + "), got " + std::to_string(a));
    }
    if (a > kMaxAlignment) {
      v->fail("must be at most " + std::to_string(kMaxAlignment) + ", got " + std::to_string(a));
    }
    c.min_alignment_bytes = a;
  }
  if (auto v = m.get("ranks")) {
    const std::vector<Field> items = read_list(*v);
    if (items.empty()) v->fail("at least one rank is required");
    c.ranks.clear();
    for (const Field& item : items) {
      const std::int64_t r = read_int(item);
      if (r < 1 || r > kMaxRank) {
        item.fail("rank must be between 1 and " + std::to_string(kMaxRank) + ", got " +
                  std::to_string(r));
      }
      if (std::find(c.ranks.begin(), c.ranks.end(), r) != c.ranks.end()) {
        item.fail("rank " + std::to_string(r) + " is listed twice");
      }
      c.ranks.push_back(static_cast<int>(r));
    }
  }
  return c;
}

}  // namespace kq::spec_detail
