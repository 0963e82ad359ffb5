// cudnn_norm: prepare() recognises the norm (norm_match.hpp), builds its NORM_FORWARD graph for
// the problem's rows and cols, searches the engine configurations on the problem's own buffers
// (norm_plan.hpp) and caches the fastest plan that ran and checked out per (spec, rows, cols,
// pointer alignment), with the buffers of ones and zeros that stand in for a weight or bias the
// spec lacks. run() binds the caller's pointers in a variant pack and executes on the caller's
// stream. GuardedArm checks every view against the shaped contract and catches exceptions.
#include "norm_arm.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>
#include <vector>

#include "kq/guarded_arm.hpp"
#include "kq/half.hpp"
#include "norm_plan.hpp"
#include "semantics_notes.hpp"

namespace kq::cudnn_graph {

namespace {

constexpr std::size_t kMaxPacks = 8;

std::string version_text(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// Everything of the spec a plan depends on: the form, the dtypes and eps's bits.
std::string fingerprint(const NormMatch& m) {
  std::uint64_t eps_bits = 0;
  std::memcpy(&eps_bits, &m.eps, sizeof eps_bits);
  std::ostringstream o;
  o << canonical_of(m.form) << '|' << to_string(m.x) << to_string(m.scale) << to_string(m.bias)
    << to_string(m.y) << '|' << eps_bits;
  return o.str();
}

bool same(const NormPointers& a, const NormPointers& b) {
  return a.x == b.x && a.scale == b.scale && a.bias == b.bias && a.y == b.y && a.mean == b.mean &&
         a.inv_variance == b.inv_variance;
}

// N elements of `value` in dtype t on the device (a weight of ones, a bias of zeros).
Status filler(DType t, std::int64_t n, double value, std::shared_ptr<DeviceBuffer>& out) {
  out = std::make_shared<DeviceBuffer>();
  const std::size_t es = dtype_size(t);
  std::vector<unsigned char> host(static_cast<std::size_t>(n) * es);
  for (std::int64_t k = 0; k < n; ++k)
    store_rounded(t, value, host.data() + static_cast<std::size_t>(k) * es);
  cudaError_t e = cudaMalloc(&out->ptr, std::max<std::size_t>(host.size(), 16));
  if (e == cudaSuccess) e = cudaMemcpy(out->ptr, host.data(), host.size(), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Status::error("allocating a filler of " + std::to_string(n) +
                         " elements: " + cuda_text(e));
  }
  return Status::ok();
}

class CudnnNormArm final : public GuardedArm {
 public:
  CudnnNormArm() : GuardedArm(Device::cuda) {}

  ~CudnnNormArm() override {
    cache_.clear();  // plans, packs and buffers before the handle
    if (handle_) cudnnDestroy(handle_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  ArmIdentity identity() const override {
    return build::identity("cudnn_norm", "cudnn_graph", Device::cuda, "1");
  }

 protected:
  bool computes_shaped() const override { return true; }

  Status on_supports(const OpSpec& spec) const override {
    NormMatch m;
    Status s = match_norm(spec, m);
    if (!s.is_ok()) return s;
    const std::size_t v = cudnnGetVersion();
    if (v / 10000 != 9)
      return Status::unsupported("cuDNN runtime " + version_text(v) + " is not 9.x");
    return Status::ok();
  }

  Status on_prepare(const Problem& problem) override {
    NormMatch m;
    Status s = match_norm(spec(), m);
    if (!s.is_ok()) return s;
    match_ = m;
    fp_ = fingerprint(m);
    NormDims d = dims_of(problem.inputs[0]);
    if (d.rows == 0) return Status::ok();
    if (d.cols == 0) {
      for (const TensorView& o : problem.outputs)
        if (o.numel() > 0)
          return Status::unsupported("rows of length 0: cuDNN's norm has nothing to reduce");
      return Status::ok();
    }
    const std::int64_t align = alignment_of(problem.inputs, problem.outputs);
    s = ensure_handle();
    if (!s.is_ok()) return s;
    Key key{fp_, d.rows, d.cols, align};
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      Entry e;
      if (!m.form.scale) s = filler(m.scale, d.cols, 1.0, e.scale_fill);
      if (s.is_ok() && !m.form.bias && m.form.kind == NormKind::layer)
        s = filler(m.bias, d.cols, 0.0, e.bias_fill);
      if (!s.is_ok()) return s;
      NormPointers p = pointers(e, problem.inputs, problem.outputs);
      NormSearch r;
      s = search_norm(handle_, stream_, m, d, p, align, limits(), r);
      append_report(m, d, align, r, s);
      if (!s.is_ok()) return s;
      if (!r.best) return Status::unsupported(no_plan(m, d, r));
      e.plan = std::move(r.best);
      it = cache_.emplace(key, std::move(e)).first;
    }
    // The pack for the prepared pointers now, so that run() on them allocates nothing.
    Desc* pack = nullptr;
    return pack_for(it->second, pointers(it->second, problem.inputs, problem.outputs), pack);
  }

  Status on_run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                void* stream) override {
    const NormDims d = dims_of(inputs[0]);
    if (d.rows == 0 || d.cols == 0) return Status::ok();  // prepare() refused what is not empty
    const std::int64_t align = alignment_of(inputs, outputs);
    Entry* e = find(d, align);
    if (e == nullptr)
      return Status::unsupported("not prepared for " + std::to_string(d.rows) + " x " +
                                 std::to_string(d.cols) + " at " + std::to_string(align) +
                                 "-byte alignment");
    Desc* pack = nullptr;
    Status s = pack_for(*e, pointers(*e, inputs, outputs), pack);
    if (!s.is_ok()) return s;
    s = checked(cudnnSetStream(handle_, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
    if (!s.is_ok()) return s;
    s = checked(cudnnBackendExecute(handle_, e->plan->plan.get(), pack->get()),
                "cudnnBackendExecute");
    if (!s.is_ok()) return s;
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return Status::error("after cudnnBackendExecute: " + cuda_text(ce));
    return Status::ok();
  }

  std::vector<Artifact> on_artifacts() const override {
    std::vector<Artifact> out;
    std::string chosen =
        "| rows | cols | alignment | engine | knobs | workspace | median us |\n"
        "|---:|---:|---:|---:|---|---:|---:|\n";
    for (const auto& [key, e] : cache_) {
      const auto& [fp, rows, cols, align] = key;
      out.push_back({"plan",
                     "plan_" + std::to_string(rows) + "x" + std::to_string(cols) + "_align" +
                         std::to_string(align) + ".json",
                     e.plan->json});
      const Trial& t = e.plan->trial;
      char med[32] = "-";
      if (t.median_us >= 0) std::snprintf(med, sizeof med, "%.2f", t.median_us);
      chosen += "| " + std::to_string(rows) + " | " + std::to_string(cols) + " | " +
                std::to_string(align) + " | " + std::to_string(t.engine) + " | " +
                (t.knobs.empty() ? "-" : t.knobs) + " | " + std::to_string(t.workspace) + " | " +
                med + " |\n";
    }
    if (!cache_.empty()) out.push_back({"choice", "chosen.md", chosen});
    if (!report_.empty()) out.push_back({"notes", "search.md", report_});
    out.push_back({"notes", "semantics.md", norm_semantics_notes()});
    out.push_back({"flags", "flags.txt",
                   std::string(build::compile_flags()) + "\ncuDNN headers " +
                       version_text(CUDNN_VERSION) + ", runtime " +
                       version_text(cudnnGetVersion()) + "\n"});
    return out;
  }

 private:
  using Key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>;

  struct Pack {
    NormPointers p;
    Desc desc;
  };

  struct Entry {
    std::unique_ptr<NormPlan> plan;
    std::shared_ptr<DeviceBuffer> scale_fill, bias_fill;
    std::vector<Pack> packs;  // most recently built last
  };

  static SearchLimits limits() {
    SearchLimits l;
    l.max_plans = 16;
    return l;
  }

  // Rows are x's first extent, cols the product of the others (contiguous, by the contract).
  static NormDims dims_of(const TensorView& x) {
    NormDims d;
    d.rows = x.rank > 0 ? x.shape[0] : 1;
    d.cols = 1;
    for (int k = 1; k < x.rank; ++k) d.cols *= x.shape[k];
    return d;
  }

  // The smallest pointer alignment among the views, capped at 16 (what cuDNN engines ask for).
  static std::int64_t alignment_of(std::span<const TensorView> a, std::span<const TensorView> b) {
    std::size_t al = 16;
    for (auto views : {a, b})
      for (const TensorView& v : views) al = std::min(al, v.alignment());
    return static_cast<std::int64_t>(al);
  }

  // The graph's pointers: the spec's tensors in declaration order (norm_match.hpp), the fillers
  // for a weight or bias it lacks.
  NormPointers pointers(const Entry& e, std::span<const TensorView> in,
                        std::span<const TensorView> out) const {
    const NormForm& f = match_.form;
    NormPointers p;
    p.x = in[0].data;
    std::size_t next = 1;
    p.scale = f.scale ? in[next++].data : e.scale_fill->ptr;
    if (f.kind == NormKind::layer) p.bias = f.bias ? in[next++].data : e.bias_fill->ptr;
    p.y = out[0].data;
    if (f.training && f.kind == NormKind::layer) {
      p.mean = out[1].data;
      p.inv_variance = out[2].data;
    } else if (f.training) {
      p.inv_variance = out[1].data;
    }
    return p;
  }

  Status ensure_handle() {
    if (!stream_) {
      cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
      if (e != cudaSuccess) return Status::error("cudaStreamCreate: " + cuda_text(e));
    }
    if (!handle_) return checked(cudnnCreate(&handle_), "cudnnCreate");
    return Status::ok();
  }

  // The variant pack for these pointers, built on first use.
  Status pack_for(Entry& e, const NormPointers& p, Desc*& out) {
    for (Pack& k : e.packs)
      if (same(k.p, p)) {
        out = &k.desc;
        return Status::ok();
      }
    if (e.packs.size() >= kMaxPacks) e.packs.erase(e.packs.begin());
    Pack k;
    k.p = p;
    Status s = norm_pack_for(*e.plan, p, k.desc);
    if (!s.is_ok()) return s;
    e.packs.push_back(std::move(k));
    out = &e.packs.back().desc;
    return Status::ok();
  }

  // The plan for this problem usable at this alignment: the one searched at the largest
  // alignment not above it.
  Entry* find(const NormDims& d, std::int64_t align) {
    Entry* best = nullptr;
    std::int64_t best_align = 0;
    for (auto& [key, entry] : cache_) {
      const auto& [fp, rows, cols, a] = key;
      if (fp == fp_ && rows == d.rows && cols == d.cols && a <= align && a > best_align) {
        best = &entry;
        best_align = a;
      }
    }
    return best;
  }

  static std::string no_plan(const NormMatch& m, const NormDims& d, const NormSearch& r) {
    std::string s = "no cuDNN execution plan ran and checked out for " + norm_words(m.form) +
                    " at " + std::to_string(d.rows) + " x " + std::to_string(d.cols) + " (" +
                    std::to_string(r.trials.size()) +
                    " configurations tried; see the search notes)";
    for (const Trial& t : r.trials)
      if (t.outcome != "ok")
        return s + "; first failure: engine " + std::to_string(t.engine) + ": " + t.outcome;
    return s;
  }

  void append_report(const NormMatch& m, const NormDims& d, std::int64_t align, const NormSearch& r,
                     const Status& s) {
    std::ostringstream o;
    o << "## " << norm_words(m.form) << ": " << d.rows << " x " << d.cols << ", x "
      << to_string(m.x) << ", weight " << to_string(m.scale) << (m.form.scale ? "" : " (ones)")
      << ", bias " << to_string(m.bias) << (m.form.bias ? "" : " (zeros)") << ", y "
      << to_string(m.y) << ", eps " << m.eps << ", " << align << "-byte alignment\n\n"
      << "cuDNN runtime " << version_text(cudnnGetVersion()) << " (headers "
      << version_text(CUDNN_VERSION) << "); search took " << r.seconds << " s"
      << (r.stopped.empty() ? "" : " (stopped: " + r.stopped + ")") << "\n\ngraph:\n";
    for (const std::string& line : r.graph_lines) o << "    " << line << "\n";
    o << "\n";
    if (!s.is_ok()) o << "**search ended**: " << s.message() << "\n\n";
    if (r.best) {
      const Trial& t = r.best->trial;
      o << "chosen: engine " << t.engine << ", knobs " << t.knobs << ", notes " << t.notes
        << ", workspace " << r.best->workspace_size << " bytes, median " << t.median_us
        << " us\n\n";
    }
    o << format_trials(r.trials) << "\n";
    report_ += o.str();
  }

  cudnnHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::map<Key, Entry> cache_;
  std::string report_;
  NormMatch match_;  // of the prepared spec: run() maps its views through it
  std::string fp_;
};

}  // namespace

void add_norm_arm(ArmList& out) { out.push_back(std::make_unique<CudnnNormArm>()); }

}  // namespace kq::cudnn_graph
