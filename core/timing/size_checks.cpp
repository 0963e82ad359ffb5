#include "timing/size_checks.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "qualify/case_checks.hpp"
#include "qualify/case_data.hpp"
#include "util/copy_blocks.hpp"

#if KQ_HAVE_CUDA
#include "device/staged_copy.hpp"
#endif

namespace kq {

namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// How output 0's patch positions go between the host and the device: a few copies, pitched
// along the output's rows and planes.
std::vector<CopyBlock> output_blocks(const std::vector<std::size_t>& at, const TensorView& v) {
  CopyBlockShape shape;
  shape.pitches = row_major_pitches({v.shape.begin(), v.shape.begin() + v.rank});
  return copy_blocks(at, static_cast<std::size_t>(v.numel()), dtype_size(v.dtype), shape);
}

}  // namespace

SizeChecks::SizeChecks(const Spec& spec, const Case& c, std::uint64_t fresh_seed)
    : spec_(spec),
      case_(c),
      rules_(output_rules(spec, c)),
      fresh_(spec, case_, rules_, fresh_seed) {}

void SizeChecks::reference(const CaseTensors& t, void* cuda_stream) {
  cuda_stream_ = cuda_stream;
  on_device_ = ReferenceCopy();  // it reads want_[0], which changes now
  want_.resize(t.outputs());
  bounds_.resize(t.outputs());
  std::vector<unsigned char*> dst;
  std::vector<double*> bounds;
  for (std::size_t o = 0; o < t.outputs(); ++o) {
    // A point above the reference's budget: its samples alone (qualify/reference_samples.hpp).
    const auto n = static_cast<std::size_t>(rules_[o].compared(t.output_view(o).numel()));
    want_[o].resize(n * dtype_size(t.dtype(o)));
    dst.push_back(want_[o].data());
    bounds_[o].assign(rules_[o].by_bound() ? n : 0, 0.0);  // the accumulation bound's E
    bounds.push_back(rules_[o].by_bound() ? bounds_[o].data() : nullptr);
  }
  case_reference(spec_, case_, t.pristine_input_views(), dst, bounds);
  no_device_reference_ = device_reference(t);
}

// The reference made comparable on the device, for the checks of CUDA arms' outputs there; else
// why they are downloaded and compared on the host ("" where no CUDA arm is timed).
std::string SizeChecks::device_reference(const CaseTensors& t) {
  if (!cuda_stream_) return "";
  // The device's kernels compare every element of one float output, by its rule or the bound.
  if (t.outputs() != 1) return "several outputs";
  if (rules_[0].sampled()) return "a sampled reference";
  if (is_integer(t.dtype())) return "an integer output";  // exact, on the host
  if (case_.numel() < std::max<std::int64_t>(device_check_min_elements(), 1))
    return "a small output";
  std::string why;
  const double* bounds = rules_[0].by_bound() ? bounds_[0].data() : nullptr;
  on_device_ =
      ReferenceCopy::make(want_[0].data(), bounds, t.output_view().numel(), t.dtype(), &why);
  return why;
}

OutputFinding SizeChecks::check(const CaseTensors& t, bool cuda_arm) {
  ++checks_;
  const auto t0 = clock_type::now();
  struct Took {  // however the check ends
    double& into;
    clock_type::time_point t0;
    ~Took() { into += since(t0); }
  } took{check_s_, t0};
  // The reference of what this call was given: the size's, with t's changed inputs' region
  // evaluated again, for the comparison alone.
  std::vector<FreshInputs::Patch> patch = fresh_.patches(t);
  const bool on_device = on_device_.usable() && device_checkable(t);
  if (on_device) accept_unknown(patch[0], t);
  // Where the device's copy must follow the patch: computed once, for both swaps.
  const std::vector<CopyBlock> blocks = device_blocks(patch[0], t);
  patch_s_ += since(t0);
  if (!on_device && cuda_arm) {
    ++host_checks_;
    host_checks_why_.insert(!on_device_.usable() ? no_device_reference_
                                                 : "an output the device cannot check");
  }
  swap_patch(patch, t, blocks);
  OutputFinding f;
  try {
    std::vector<std::vector<std::size_t>> unknown;
    for (const FreshInputs::Patch& p : patch) unknown.push_back(p.unknown);
    f = check_timed_output(t, rules_, want_, bounds_, scratch_, on_device ? &on_device_ : nullptr,
                           on_device ? cuda_stream_ : nullptr, unknown);
  } catch (...) {
    swap_patch(patch, t, blocks);
    throw;
  }
  swap_patch(patch, t, blocks);
  return f;
}

// Output 0's patch positions as the copies that take them to the device's copy of the reference
// (util/copy_blocks.hpp: a few, where one a run of consecutive positions made a product's
// changed column thousands); none where that copy is streamed, or there is none.
std::vector<CopyBlock> SizeChecks::device_blocks(const FreshInputs::Patch& p,
                                                 const CaseTensors& t) const {
  if (!on_device_.usable() || on_device_.streamed()) return {};
  std::vector<std::size_t> at = p.at;  // the unknown ones joined it unsorted
  std::sort(at.begin(), at.end());
  return output_blocks(at, t.output_view());
}

// Exchanges the reference's elements with the patch's (twice: as it was), on the device too
// through output 0's `blocks`.
void SizeChecks::swap_patch(std::vector<FreshInputs::Patch>& patch, const CaseTensors& t,
                            const std::vector<CopyBlock>& blocks) {
  for (std::size_t o = 0; o < patch.size(); ++o) {
    FreshInputs::Patch& p = patch[o];
    const std::size_t es = dtype_size(t.dtype(o));
    for (std::size_t j = 0; j < p.at.size(); ++j) {
      std::swap_ranges(want_[o].data() + p.at[j] * es, want_[o].data() + (p.at[j] + 1) * es,
                       p.values.data() + j * es);
      if (!p.bounds.empty()) std::swap(bounds_[o][p.at[j]], p.bounds[j]);
    }
  }
  for (const CopyBlock& b : blocks) on_device_.changed(b);
}

// The host's check accepts whatever the output holds where the reference is not known (a long
// scan's changed rows, a product's changed column, evaluated only in part); on the device the
// reference takes the output's own bits there (equal bits match under every rule): downloaded
// a block at a time, they join the patch's positions.
void SizeChecks::accept_unknown(FreshInputs::Patch& p, const CaseTensors& t) {
  if (p.unknown.empty()) return;
#if KQ_HAVE_CUDA
  const std::size_t es = dtype_size(t.dtype());
  const std::size_t known = p.at.size();
  p.values.resize((known + p.unknown.size()) * es);
  std::vector<unsigned char> rows;
  for (const CopyBlock& b : output_blocks(p.unknown, t.output_view())) {
    rows.resize(b.covered() * es);
    block_download(rows.data(), t.output_view().data, b, es,
                   static_cast<cudaStream_t>(cuda_stream_));
    for (const std::size_t j : b.members)
      std::memcpy(p.values.data() + (known + j) * es,
                  rows.data() + b.dense_index(p.unknown[j]) * es, es);
  }
  for (const std::size_t at : p.unknown) {
    p.at.push_back(at);
    if (!bounds_[0].empty()) p.bounds.push_back(bounds_[0][at]);  // kept as it is
  }
  p.unknown.clear();
#else
  (void)t;
#endif
}

void SizeChecks::restart_counts() {
  check_s_ = patch_s_ = 0;
  checks_ = host_checks_ = 0;
  host_checks_why_.clear();
}

void SizeChecks::count_into(rec::SizeEnd& end) const {
  end.check_s = check_s_;
  end.patch_s = patch_s_;
  end.checks = checks_;
  end.host_checks = host_checks_;
  for (const std::string& why : host_checks_why_)
    end.host_checks_why += (end.host_checks_why.empty() ? "" : "; ") + why;
}

}  // namespace kq
