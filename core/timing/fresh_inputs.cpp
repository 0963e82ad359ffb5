#include "timing/fresh_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "device/cuda_check.hpp"
#include "expr/reference.hpp"
#include "indexed/affected.hpp"
#include "plan/case_shapes.hpp"
#include "qualify/case_data.hpp"
#include "qualify/shaped_reference.hpp"
#include "qualify/values.hpp"

namespace kq {
namespace {

ix::Box coordinate(const TensorView& v, std::int64_t index) {
  return ix::coord_of(std::vector<std::int64_t>(v.shape.begin(), v.shape.begin() + v.rank), index);
}

// Position `index` in a sampled output's reference (its samples, ascending), or -1.
std::int64_t sample_position(const OutputRule& r, std::int64_t index) {
  if (!r.sampled()) return index;
  const auto& s = *r.samples;
  auto it = std::lower_bound(s.begin(), s.end(), index);
  return it != s.end() && *it == index ? it - s.begin() : -1;
}

// The longest run a scan of the program walks (1 without scans).
std::int64_t scan_length(const ix::Program& p, const std::vector<std::int64_t>& dims) {
  std::int64_t longest = 1;
  for (const ix::Node& n : p.nodes) {
    if (n.kind != ix::NodeKind::scan || n.over.empty()) continue;
    const ix::Extent& e = p.indices[static_cast<std::size_t>(n.over[0])].extent;
    longest = std::max(longest, e.is_dim() ? dims.at(static_cast<std::size_t>(e.dim)) : e.constant);
  }
  return longest;
}

// The most terms one reduction of the program sums (1 without reductions): a product's K, which
// its inputs' sizes over its output's understate where M is small.
double longest_reduction(const ix::Program& p, const std::vector<std::int64_t>& dims) {
  double longest = 1;
  for (const ix::Node& n : p.nodes) {
    if (n.kind != ix::NodeKind::reduce) continue;
    double terms = 1;
    for (int v : n.over) {
      const ix::Extent& e = p.indices[static_cast<std::size_t>(v)].extent;
      terms *=
          static_cast<double>(e.is_dim() ? dims.at(static_cast<std::size_t>(e.dim)) : e.constant);
    }
    longest = std::max(longest, terms);
  }
  return longest;
}

}  // namespace

FreshInputs::FreshInputs(const Spec& spec, const Case& c, const std::vector<OutputRule>& rules,
                         std::uint64_t seed)
    : spec_(spec), case_(c), rules_(rules), rng_(seed ^ splitmix64(c.seed)) {
  if (!spec.op.program) return;
  const ix::Program& p = *spec.op.program;
  for (std::size_t d = 0; d < p.decls.dims.size(); ++d) dims_[p.decls.dims[d].name] = c.dims.at(d);
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
    if (p.decls.tensors[t].role == ix::Role::input) inputs_.push_back(static_cast<int>(t));
  double largest_input = 1;
  for (const ix::TensorDecl& d : p.decls.tensors)
    if (d.role == ix::Role::input)
      largest_input =
          std::max(largest_input, static_cast<double>(ix::numel_of(declared_shape(d, c.dims))));
  const double scan = static_cast<double>(scan_length(p, c.dims));
  const double reduction = longest_reduction(p, c.dims);
  for (const ix::TensorDecl& d : p.decls.tensors) {
    const double n =
        static_cast<double>(std::max<std::int64_t>(ix::numel_of(declared_shape(d, c.dims)), 1));
    element_cost_.push_back(
        d.role == ix::Role::output ? std::max({1.0, largest_input / n, reduction}) * scan : 0.0);
  }
}

double FreshInputs::evaluation_steps(const std::vector<std::vector<ix::Box>>& regions) const {
  const ix::Program& p = *spec_.op.program;
  double steps = 0;
  for (std::size_t pos = 0; pos < regions.size(); ++pos) {
    if (p.decls.tensors[pos].role != ix::Role::output || regions[pos].empty()) continue;
    if (element_cost_[pos] > kEvaluationSteps) return std::numeric_limits<double>::infinity();
    steps +=
        element_cost_[pos] * static_cast<double>(ix::region_elements(
                                 regions[pos], declared_shape(p.decls.tensors[pos], case_.dims)));
  }
  return steps;
}

std::uint64_t FreshInputs::pristine(const CaseTensors& t, int input, std::int64_t offset) const {
  // The pristine image starts at the data region's first byte (qualify/case_tensors.hpp).
  const CaseTensor& in = t.inputs()[static_cast<std::size_t>(input)];
  const auto es = static_cast<std::int64_t>(dtype_size(in.view.dtype));
  const auto byte = static_cast<std::int64_t>(in.view_offset - data_begin(in)) + offset * es;
  std::uint64_t bits = 0;
  std::memcpy(&bits, in.pristine + byte, static_cast<std::size_t>(es));
  return bits;
}

std::vector<FreshInputs::Element> FreshInputs::draw(const CaseTensors& t) {
  const std::vector<TensorView>& views = t.input_views();
  std::vector<int> drawable;
  for (std::size_t k = 0; k < views.size(); ++k) {
    // A view that reaches one element through several indices (a broadcast) is left alone.
    bool broadcast = false;
    for (int d = 0; d < views[k].rank; ++d)
      broadcast = broadcast || (views[k].strides[d] == 0 && views[k].shape[d] > 1);
    if (views[k].numel() >= 2 && !broadcast) drawable.push_back(static_cast<int>(k));
  }
  std::vector<Element> out;
  if (drawable.empty()) return out;
  const bool shaped = spec_.op.program != nullptr;
  const int total = shaped ? kChanges : kChanges * static_cast<int>(drawable.size());
  for (int j = 0; j < total; ++j) {
    const int k = shaped ? drawable[rng_() % drawable.size()]
                         : drawable[static_cast<std::size_t>(j / kChanges)];
    const TensorView& v = views[static_cast<std::size_t>(k)];
    const auto n = static_cast<std::uint64_t>(v.numel());
    const auto index = static_cast<std::int64_t>(rng_() % n);
    if (std::any_of(out.begin(), out.end(),
                    [&](const Element& e) { return e.input == k && e.index == index; }))
      continue;
    const std::int64_t offset = element_offset(v, index);
    const std::uint64_t was = pristine(t, k, offset);
    // Another element's value of the same input: a few tries for one that differs.
    for (int tries = 0; tries < 4; ++tries) {
      const std::uint64_t now =
          pristine(t, k, element_offset(v, static_cast<std::int64_t>(rng_() % n)));
      if (now == was) continue;
      out.push_back({k, index, offset, now});
      break;
    }
    if (!shaped || out.empty()) continue;
    // Format 2: no change whose elements cannot be evaluated again (they would go unchecked);
    // past the first, stop before the evaluation outgrows kEvaluationSteps.
    std::vector<ix::ChangedElement> changed;
    for (const Element& e : out)
      changed.push_back({inputs_[static_cast<std::size_t>(e.input)],
                         coordinate(views[static_cast<std::size_t>(e.input)], e.index)});
    const double steps = evaluation_steps(ix::affected_regions(*spec_.op.program, changed));
    if (std::isinf(steps)) {
      out.pop_back();
      continue;
    }
    if (steps > kEvaluationSteps && out.size() > 1) {
      out.pop_back();
      break;
    }
  }
  return out;
}

void FreshInputs::write(CaseTensors& t, const std::vector<Element>& elements, bool changed,
                        void* stream) {
  const std::vector<TensorView>& views = t.input_views();
  bool on_device = false;
  for (const Element& e : elements) {
    const TensorView& v = views[static_cast<std::size_t>(e.input)];
    const std::size_t es = dtype_size(v.dtype);
    const std::uint64_t bits = changed ? e.now : pristine(t, e.input, e.offset);
    auto* dst = static_cast<unsigned char*>(v.data) + e.offset * static_cast<std::int64_t>(es);
    if (v.device == Device::cpu) {
      std::memcpy(dst, &bits, es);
      continue;
    }
#if KQ_HAVE_CUDA
    // From pageable memory: staged before the call returns, so `bits` may go.
    cuda_check(
        cudaMemcpyAsync(dst, &bits, es, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)),
        "changing an input element before a timed call");
    on_device = true;
#endif
  }
#if KQ_HAVE_CUDA
  if (on_device)
    cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
               "changing input elements before a timed call");
#else
  (void)stream;
  (void)on_device;
#endif
}

void FreshInputs::change(CaseTensors& t, void* stream) {
  if (t.aliased()) return;  // an output in an input: the call itself changes it
  std::vector<Element>& now = changed_[&t];
  write(t, now, false, stream);
  now = draw(t);
  write(t, now, true, stream);
}

std::vector<FreshInputs::Patch> FreshInputs::patches(const CaseTensors& t) {
  auto it = changed_.find(&t);
  if (it == changed_.end() || it->second.empty()) return std::vector<Patch>(t.outputs());
  return spec_.op.program ? format2_patches(t, it->second) : format1_patches(t, it->second);
}

std::vector<FreshInputs::Patch> FreshInputs::format1_patches(const CaseTensors& t,
                                                             const std::vector<Element>& changed) {
  std::vector<std::int64_t> indices;
  for (const Element& e : changed) indices.push_back(e.index);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  const std::vector<TensorView>& views = t.input_views();
  std::vector<Patch> out(1);
  const DType out_type = t.dtype(0);
  const std::size_t oes = dtype_size(out_type);
  for (std::int64_t i : indices) {
    const std::int64_t at = sample_position(rules_[0], i);
    if (at < 0) continue;
    // Every input's element i as this call sees it, one element each.
    std::vector<std::uint64_t> bits(views.size());
    std::vector<TensorView> one;
    for (std::size_t k = 0; k < views.size(); ++k) {
      const std::int64_t offset = element_offset(views[k], i);
      bits[k] = pristine(t, static_cast<int>(k), offset);
      for (const Element& e : changed)
        if (e.input == static_cast<int>(k) && e.index == i) bits[k] = e.now;
      one.push_back(view_of(&bits[k], views[k].dtype, Device::cpu, {1}, {1}));
    }
    std::uint64_t value = 0;
    eval_reference(spec_.op.semantics, one, view_of(&value, out_type, Device::cpu, {1}, {1}));
    out[0].at.push_back(static_cast<std::size_t>(at));
    const std::size_t n = out[0].values.size();
    out[0].values.resize(n + oes);
    std::memcpy(out[0].values.data() + n, &value, oes);
  }
  return out;
}

std::vector<FreshInputs::Patch> FreshInputs::format2_patches(const CaseTensors& t,
                                                             const std::vector<Element>& changed) {
  const ix::Program& p = *spec_.op.program;
  if (dense_.empty()) {
    const std::vector<TensorView> views = t.pristine_input_views();
    for (std::size_t k = 0; k < views.size(); ++k)
      dense_[p.decls.tensors[static_cast<std::size_t>(inputs_[k])].name] = dense_copy(views[k]);
  }
  // The changes on the dense copies, for the evaluation; taken off after it.
  std::vector<ix::ChangedElement> where;
  for (const Element& e : changed) {
    const ix::TensorDecl& d =
        p.decls.tensors[static_cast<std::size_t>(inputs_[static_cast<std::size_t>(e.input)])];
    const std::size_t es = dtype_size(d.dtype);
    std::memcpy(dense_[d.name].bytes.data() + static_cast<std::size_t>(e.index) * es, &e.now, es);
    where.push_back({inputs_[static_cast<std::size_t>(e.input)],
                     coordinate(t.input_views()[static_cast<std::size_t>(e.input)], e.index)});
  }
  const auto regions = ix::affected_regions(p, where);
  std::vector<Patch> out;
  std::vector<ix::Sample> samples;
  std::vector<std::size_t> of_output;  // by sample
  bool bounds = false;
  // Above kCheckSteps in all (a change of a product's row, a first change of a long scan's row),
  // each element is evaluated with the probability that keeps to them: a result cache returns
  // stale values all over the changed region, so a random part of it catches one.
  const double steps = evaluation_steps(regions);
  double costliest = 0;
  for (std::size_t pos = 0; pos < regions.size(); ++pos)
    if (!regions[pos].empty()) costliest = std::max(costliest, element_cost_[pos]);
  const double budget = std::max(kCheckSteps, costliest);
  const double keep = steps > budget ? budget / steps : 1.0;
  std::uniform_real_distribution<double> draw01(0.0, 1.0);
  for (std::size_t pos = 0; pos < p.decls.tensors.size(); ++pos) {
    const ix::TensorDecl& d = p.decls.tensors[pos];
    if (d.role != ix::Role::output) continue;
    const std::size_t o = out.size();
    out.emplace_back();
    bounds = bounds || rules_[o].by_bound();
    const std::vector<std::int64_t> shape = declared_shape(d, case_.dims);
    for (std::int64_t i : ix::region_indices(regions[pos], shape)) {
      const std::int64_t at = sample_position(rules_[o], i);
      if (at < 0) continue;
      if (keep < 1.0 && draw01(rng_) >= keep) {
        out[o].unknown.push_back(static_cast<std::size_t>(at));
        continue;
      }
      out[o].at.push_back(static_cast<std::size_t>(at));
      samples.push_back({d.name, ix::coord_of(shape, i)});
      of_output.push_back(o);
    }
  }
  auto restore = [&] {  // the dense copies as they were
    for (const Element& c : changed) {
      const ix::TensorDecl& d =
          p.decls.tensors[static_cast<std::size_t>(inputs_[static_cast<std::size_t>(c.input)])];
      const std::size_t es = dtype_size(d.dtype);
      const std::uint64_t was = pristine(t, c.input, c.offset);
      std::memcpy(dense_[d.name].bytes.data() + static_cast<std::size_t>(c.index) * es, &was, es);
    }
  };
  // Every element on demand (no tensor computed whole): the changed rows alone.
  ix::SampledEvaluation e;
  try {
    e = bounds ? ix::evaluate_at_with_bounds(p, dims_, dense_, samples, 0)
               : ix::SampledEvaluation{ix::evaluate_at(p, dims_, dense_, samples, 0), {}};
  } catch (...) {
    restore();
    throw;
  }
  restore();
  for (std::size_t j = 0; j < samples.size(); ++j) {
    const std::size_t o = of_output[j];
    ix::Buffer one = ix::Buffer::zeros(t.dtype(o), {});
    one.set(0, e.values[j]);  // exact: the value is the dtype's already
    const std::size_t n = out[o].values.size();
    out[o].values.resize(n + one.bytes.size());
    std::memcpy(out[o].values.data() + n, one.bytes.data(), one.bytes.size());
    if (rules_[o].by_bound()) out[o].bounds.push_back(e.bounds[j]);
  }
  return out;
}

}  // namespace kq
