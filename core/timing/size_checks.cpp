#include "timing/size_checks.hpp"

#include <algorithm>
#include <chrono>

#include "qualify/case_checks.hpp"
#include "qualify/case_data.hpp"

namespace kq {

namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
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
  patch_s_ += since(t0);
  const bool unknown_any = std::any_of(
      patch.begin(), patch.end(), [](const FreshInputs::Patch& p) { return !p.unknown.empty(); });
  const bool on_device = on_device_.usable() && device_checkable(t) && !unknown_any;
  if (!on_device && cuda_arm) {
    ++host_checks_;
    host_checks_why_.insert(!on_device_.usable() ? no_device_reference_
                            : unknown_any        ? "inputs changed where the reference is not known"
                                                 : "an output the device cannot check");
  }
  swap_patch(patch, t);
  OutputFinding f;
  try {
    std::vector<std::vector<std::size_t>> unknown;
    for (const FreshInputs::Patch& p : patch) unknown.push_back(p.unknown);
    f = check_timed_output(t, rules_, want_, bounds_, scratch_, on_device ? &on_device_ : nullptr,
                           on_device ? cuda_stream_ : nullptr, unknown);
  } catch (...) {
    swap_patch(patch, t);
    throw;
  }
  swap_patch(patch, t);
  return f;
}

// Exchanges the reference's elements with the patch's (twice: as it was), on the device too
// where the reference is there whole: one upload a run of consecutive positions (a scan's
// changed region is the rest of its row, thousands of them).
void SizeChecks::swap_patch(std::vector<FreshInputs::Patch>& patch, const CaseTensors& t) {
  for (std::size_t o = 0; o < patch.size(); ++o) {
    FreshInputs::Patch& p = patch[o];
    const std::size_t es = dtype_size(t.dtype(o));
    for (std::size_t j = 0; j < p.at.size(); ++j) {
      std::swap_ranges(want_[o].data() + p.at[j] * es, want_[o].data() + (p.at[j] + 1) * es,
                       p.values.data() + j * es);
      if (!p.bounds.empty()) std::swap(bounds_[o][p.at[j]], p.bounds[j]);
    }
    if (o != 0) continue;
    std::size_t j = 0;
    while (j < p.at.size()) {
      std::size_t end = j + 1;
      while (end < p.at.size() && p.at[end] == p.at[end - 1] + 1) ++end;
      on_device_.changed(p.at[j], end - j);
      j = end;
    }
  }
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
