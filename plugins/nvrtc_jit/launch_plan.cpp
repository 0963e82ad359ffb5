#include "launch_plan.hpp"

#include <algorithm>

namespace kq::nvrtc {
namespace {

std::uintptr_t addr(const TensorView& v) { return reinterpret_cast<std::uintptr_t>(v.data); }

// A sufficient test that no two elements of `v` share an address: sorted by |stride|, each
// dimension's stride steps over everything the inner ones reach. Written by one thread per
// element, an output that overlaps itself has no defined result.
bool overlaps_itself(const TensorView& v) {
  std::int64_t ext[kMaxRank], st[kMaxRank];
  int r = 0;
  for (int d = 0; d < v.rank; ++d) {
    if (v.shape[d] == 1) continue;
    ext[r] = v.shape[d];
    st[r] = v.strides[d] < 0 ? -v.strides[d] : v.strides[d];
    ++r;
  }
  for (int i = 1; i < r; ++i)  // insertion sort by |stride|: rank <= 8
    for (int j = i; j > 0 && st[j] < st[j - 1]; --j) {
      std::swap(st[j], st[j - 1]);
      std::swap(ext[j], ext[j - 1]);
    }
  std::int64_t reach = 0;  // the largest offset the inner dimensions reach
  for (int i = 0; i < r; ++i) {
    if (st[i] <= reach) return true;
    reach += st[i] * (ext[i] - 1);
  }
  return false;
}

}  // namespace

const char* to_string(Path p) {
  switch (p) {
    case Path::empty:
      return "empty";
    case Path::vector:
      return "vector";
    case Path::scalar:
      return "scalar";
    case Path::strided:
      return "strided";
  }
  return "?";
}

std::string plan_launch(std::span<const TensorView> inputs, const TensorView& out,
                        bool allow_vector, LaunchArgs& a) {
  a = LaunchArgs{};
  const int ni = static_cast<int>(inputs.size());
  if (ni > kMaxInputs) return "more than " + std::to_string(kMaxInputs) + " inputs";
  if (out.rank < 0 || out.rank > kMaxRank) return "rank outside 0.." + std::to_string(kMaxRank);
  a.n = out.numel();
  if (a.n == 0) return {};
  if (overlaps_itself(out)) return "the output view overlaps itself";

  const std::int64_t es = static_cast<std::int64_t>(dtype_size(out.dtype));
  const std::uintptr_t olo = addr(out);
  for (const TensorView& v : inputs) {
    // Any byte overlap between the output and an input (check_contract admits exact aliases
    // only): the kernels without __restrict__ and __ldg are the defined ones then.
    std::int64_t lo = 0, hi = 0, olo_off = 0, ohi_off = 0;
    for (int d = 0; d < out.rank; ++d) {
      std::int64_t ri = (v.shape[d] - 1) * v.strides[d], ro = (out.shape[d] - 1) * out.strides[d];
      (ri < 0 ? lo : hi) += ri;
      (ro < 0 ? olo_off : ohi_off) += ro;
    }
    const std::uintptr_t ilo = addr(v) + static_cast<std::uintptr_t>(lo * es);
    const std::uintptr_t ihi = addr(v) + static_cast<std::uintptr_t>((hi + 1) * es);
    const std::uintptr_t lo_o = olo + static_cast<std::uintptr_t>(olo_off * es);
    const std::uintptr_t hi_o = olo + static_cast<std::uintptr_t>((ohi_off + 1) * es);
    if (ilo < hi_o && lo_o < ihi) a.alias = true;
  }

  // Merge dimensions, innermost last: drop extent 1; fold d into d+1 when every tensor has
  // stride[d] == stride[d+1] * shape[d+1].
  const int nt = ni + 1;
  auto stride_of = [&](int t, int d) { return t < ni ? inputs[t].strides[d] : out.strides[d]; };
  int r = 0;
  for (int d = 0; d < out.rank; ++d) {
    if (out.shape[d] == 1) continue;
    bool merge = r > 0;
    for (int t = 0; t < nt && merge; ++t)
      merge = a.layout.stride[t][r - 1] == stride_of(t, d) * out.shape[d];
    if (merge) {
      a.layout.shape[r - 1] *= out.shape[d];
      for (int t = 0; t < nt; ++t) a.layout.stride[t][r - 1] = stride_of(t, d);
    } else {
      a.layout.shape[r] = out.shape[d];
      for (int t = 0; t < nt; ++t) a.layout.stride[t][r] = stride_of(t, d);
      ++r;
    }
  }
  if (r == 0) {  // a single element
    r = 1;
    a.layout.shape[0] = 1;
    for (int t = 0; t < nt; ++t) a.layout.stride[t][0] = 1;
  }
  a.rank = r;
  bool contiguous = r == 1;
  for (int t = 0; t < nt && contiguous; ++t) contiguous = a.layout.stride[t][0] == 1;
  if (!contiguous) {
    a.path = Path::strided;
    return {};
  }
  // Vectors need every pointer at the same offset from a 16-byte boundary, a whole number of
  // elements, so that one head length serves them all.
  const std::uintptr_t mis = olo % 16;
  bool vec = allow_vector && mis % static_cast<std::uintptr_t>(es) == 0;
  for (const TensorView& v : inputs) vec = vec && addr(v) % 16 == mis;
  if (!vec) {
    a.path = Path::scalar;
    return {};
  }
  a.path = Path::vector;
  a.head = std::min<std::int64_t>(a.n, static_cast<std::int64_t>((16 - mis) % 16) / es);
  return {};
}

}  // namespace kq::nvrtc
