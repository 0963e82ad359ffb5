// cudnn_pointwise: the spec's expression as a cuDNN backend (no frontend library) pointwise
// operation graph. prepare() searches shapings and engine configurations on the problem's own
// buffers and caches the fastest plan that ran and checked out per (spec, N, pointer alignment);
// run() binds the caller's pointers in a variant pack and executes on the caller's stream.
// No exception crosses the plugin boundary: every interface method catches.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "backend.hpp"
#include "graph_builder.hpp"
#include "kq/plugin_api.hpp"
#include "norm_arm.hpp"
#include "plan_memo.hpp"
#include "plan_search.hpp"
#include "semantics_notes.hpp"

namespace kq::cudnn_graph {
namespace {

constexpr const char* kFamily = "cudnn_graph";
constexpr const char* kVersion = "1";
// Variant packs kept per plan for pointer sets other than the prepared one (each costs a host
// allocation inside cuDNN when first built).
constexpr std::size_t kMaxPacks = 8;

std::string version_text(std::size_t v) {
  // cuDNN 9 encodes major * 10000 + minor * 100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

// A stable text of everything in the spec the plan depends on.
std::string fingerprint(const OpSpec& spec) {
  std::ostringstream o;
  o << spec.op << '|' << static_cast<int>(spec.dtype) << '|' << spec.inputs.size() << '|';
  char buf[64];
  for (const ExprNode& n : spec.semantics.nodes) {
    std::snprintf(buf, sizeof buf, "%a", n.value);
    o << static_cast<int>(n.op) << ':' << buf << ':' << n.input << ':' << n.args[0] << ','
      << n.args[1] << ',' << n.args[2] << ';';
  }
  return o.str();
}

// The smallest pointer alignment among the views, capped at 16 (what cuDNN engines ask for).
std::int64_t alignment_of(std::span<const TensorView> a, std::span<const TensorView> b) {
  std::size_t al = 16;
  for (auto views : {a, b})
    for (const TensorView& v : views) al = std::min(al, v.alignment());
  return static_cast<std::int64_t>(al);
}

Status require_contiguous(std::span<const TensorView> a, std::span<const TensorView> b) {
  for (auto views : {a, b})
    for (const TensorView& v : views)
      if (!v.is_contiguous())
        return Status::unsupported(
            "strided view: this arm sees the elements as one contiguous run");
  return Status::ok();
}

class CudnnPointwiseArm final : public IKernelArm {
 public:
  CudnnPointwiseArm(std::string name, ReluLowering relu) : name_(std::move(name)) {
    options_.relu = relu;
  }

  ~CudnnPointwiseArm() override {
    cache_.clear();  // plans and workspaces before the handle
    if (handle_) cudnnDestroy(handle_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  ArmIdentity identity() const override {
    ArmIdentity id = build::identity(name_, kFamily, Device::cuda, kVersion);
    // RELU_FWD gives relu(-0) = -0 (measured on the H200, cuDNN 9.14): the value checks catch it.
    if (options_.relu == ReluLowering::native) id.expected_rejection = "values";
    return id;
  }

  Status supports(const OpSpec& spec) const override {
    try {
      if (spec.program)
        return Status::unsupported(
            "a format-2 (shaped) spec: cudnn_pointwise builds pointwise graphs of format-1 specs "
            "(cudnn_norm takes layer and RMS norm)");
      std::size_t v = cudnnGetVersion();
      if (v / 10000 != 9)
        return Status::unsupported("cuDNN runtime " + version_text(v) + " is not 9.x");
      if (spec.dtype != DType::f32 && !is_half(spec.dtype))
        return Status::unsupported("dtype " + std::string(to_string(spec.dtype)) +
                                   ": this arm builds FLOAT, HALF and BFLOAT16 graphs only");
      if (is_half(spec.dtype) && spec.compute != DType::f32)
        return Status::unsupported("dtype " + std::string(to_string(spec.dtype)) + " computed in " +
                                   std::string(to_string(spec.compute)) +
                                   ": this arm's graphs compute in FLOAT only");
      if (spec.outputs.size() != 1)
        return Status::unsupported("the spec has " + std::to_string(spec.outputs.size()) +
                                   " outputs; the graph computes one");
      Status s = check_expression(spec.semantics, spec.inputs.size());
      if (!s.is_ok()) return s;
      // Comparisons and select become BOOLEAN masks, and cuDNN's runtime compiler fails on those
      // graphs at most sizes that are odd or small (H200, cuDNN 9.14: leaky_relu's
      // select(x > 0, x, 0.01 * x) at 1, 2, 3, 5, 7, 31, 33, ... 65537 and 2^20 + 3 elements,
      // CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED), while the contract admits every size.
      for (const ExprNode& n : spec.semantics.nodes)
        if (n.op == Op::select || is_comparison(n.op))
          return Status::unsupported(
              std::string(to_string(n.op)) +
              ": a BOOLEAN mask, which cuDNN's runtime compiler fails on at most odd and small "
              "sizes (measured on the H200, cuDNN 9.14)");
      // MAX and MIN return the other operand when one is NaN (the H200, cuDNN 9.14: clamp(NaN,
      // -1, 1) gave -1), where kq's max, min and clamp propagate NaN.
      if (spec.domain == Domain::ieee)
        for (const ExprNode& n : spec.semantics.nodes)
          if (n.op == Op::max || n.op == Op::min || n.op == Op::clamp)
            return Status::unsupported(
                "domain ieee: cuDNN's MAX and MIN drop a NaN operand, the spec's " +
                std::string(to_string(n.op)) + " must propagate it");
      if (options_.relu == ReluLowering::native &&
          std::none_of(spec.semantics.nodes.begin(), spec.semantics.nodes.end(),
                       [](const ExprNode& n) { return n.op == Op::relu; }))
        return Status::unsupported(
            "no relu in the expression: this variant would be the same graph as cudnn_pointwise");
      return Status::ok();
    } catch (...) {
      return status_from_current_exception(name_ + " supports");
    }
  }

  Status prepare(const Problem& problem) override {
    try {
      return prepare_impl(problem);
    } catch (...) {
      return status_from_current_exception(name_ + " prepare");
    }
  }

  Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
             void* stream) override {
    try {
      return run_impl(inputs, outputs, static_cast<cudaStream_t>(stream));
    } catch (...) {
      return status_from_current_exception(name_ + " run");
    }
  }

  std::vector<Artifact> artifacts() const override {
    std::vector<Artifact> out;
    for (const auto& [key, entry] : cache_) {
      std::string file = "plan_n" + std::to_string(std::get<1>(key)) + "_align" +
                         std::to_string(std::get<2>(key)) + ".json";
      out.push_back({"plan", file, entry.plan->json});
    }
    if (!report_.empty()) out.push_back({"notes", "search.md", report_});
    // What was chosen for each problem size: the summary a report shows.
    std::string chosen =
        "| elements | alignment | shaping | engine | knobs | median us "
        "|\n|---:|---:|---|---:|---|---:|\n";
    for (const auto& [key, entry] : cache_) {
      const Trial& t = entry.plan->trial;
      char med[32] = "-";
      if (t.median_us >= 0) std::snprintf(med, sizeof med, "%.2f", t.median_us);
      chosen += "| " + std::to_string(std::get<1>(key)) + " | " + std::to_string(std::get<2>(key)) +
                " | " + t.shaping + " | " + std::to_string(t.engine) + " | " +
                (t.knobs.empty() ? "-" : t.knobs) + " | " + med + " |\n";
    }
    if (!cache_.empty()) out.push_back({"choice", "chosen.md", chosen});
    out.push_back({"notes", "semantics.md", semantics_notes()});
    std::string flags = std::string(build::compile_flags()) + "\ncuDNN headers " +
                        version_text(CUDNN_VERSION) + ", runtime " +
                        version_text(cudnnGetVersion()) + "\nrelu lowering: " +
                        (options_.relu == ReluLowering::native ? "native RELU_FWD"
                                                               : "exact (RELU_FWD then ADD +0)") +
                        "\n";
    out.push_back({"flags", "flags.txt", flags});
    return out;
  }

 private:
  using Key = std::tuple<std::string, std::int64_t, std::int64_t>;  // spec, N, alignment

  struct Pack {
    std::vector<void*> inputs;
    void* output = nullptr;
    Desc desc;
  };

  struct Entry {
    std::unique_ptr<ChosenPlan> plan;
    std::vector<Pack> packs;  // most recently built last
  };

  Status ensure_handle() {
    if (!stream_) {
      cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
      if (e != cudaSuccess)
        return Status::error(std::string("cudaStreamCreate: ") + cudaGetErrorString(e));
    }
    if (!handle_) return checked(cudnnCreate(&handle_), "cudnnCreate");
    return Status::ok();
  }

  static std::vector<void*> pointers(std::span<const TensorView> views) {
    std::vector<void*> p;
    for (const TensorView& v : views) p.push_back(v.data);
    return p;
  }

  // The variant pack for these pointers, built on first use.
  Status pack_for(Entry& e, std::span<const TensorView> inputs, void* output, Pack*& out) {
    std::vector<void*> in = pointers(inputs);
    for (Pack& p : e.packs)
      if (p.output == output && p.inputs == in) {
        out = &p;
        return Status::ok();
      }
    if (e.packs.size() >= kMaxPacks) e.packs.erase(e.packs.begin());
    Pack p;
    p.inputs = in;
    p.output = output;
    Status s = make_variant_pack(*e.plan->graph, in, output, e.plan->workspace->ptr, p.desc);
    if (!s.is_ok()) return s;
    e.packs.push_back(std::move(p));
    out = &e.packs.back();
    return Status::ok();
  }

  // The cached plan for n elements usable at this alignment: the one searched at the largest
  // alignment not above it (a plan built for 4-byte alignment also runs on 16-byte pointers).
  Entry* find(const std::string& fp, std::int64_t n, std::int64_t align) {
    Entry* best = nullptr;
    std::int64_t best_align = 0;
    for (auto& [key, entry] : cache_)
      if (std::get<0>(key) == fp && std::get<1>(key) == n && std::get<2>(key) <= align &&
          std::get<2>(key) > best_align) {
        best = &entry;
        best_align = std::get<2>(key);
      }
    return best;
  }

  Status prepare_impl(const Problem& problem) {
    if (problem.spec == nullptr) return Status::unsupported("no spec");
    const OpSpec& spec = *problem.spec;
    Status s = supports(spec);
    if (!s.is_ok()) return s;
    s = check_contract(spec, problem.inputs, problem.outputs, Device::cuda);
    if (!s.is_ok()) return s;
    s = require_contiguous(problem.inputs, problem.outputs);
    if (!s.is_ok()) return s;
    spec_ = spec;
    fp_ = fingerprint(spec);
    std::int64_t n = problem.outputs[0].numel();
    if (n == 0) return Status::ok();
    std::int64_t align = alignment_of(problem.inputs, problem.outputs);
    Key key{fp_, n, align};

    s = ensure_handle();
    if (!s.is_ok()) return s;
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      Buffers buf;
      buf.inputs = pointers(problem.inputs);
      buf.output = problem.outputs[0].data;
      buf.n = n;
      buf.dtype = spec.dtype;
      GraphOptions opt = options_;
      opt.alignment = align;
      SearchResult r;
      SearchLimits limits = limits_for(n);
      const std::string memo_id = memo_key(n, align), dir = plan_memo_dir();
      const std::string memo = memo_id.empty() || dir.empty() ? "" : plan_memo_path(dir, memo_id);
      if (!memo.empty()) limits.first = load_plan_choice(memo, memo_id);
      s = search(handle_, stream_, spec, buf, opt, limits, r);
      append_report(spec, n, align, r, s);
      if (r.best && !memo.empty()) {
        const PlanChoice won{r.best->trial.shaping, r.best->trial.engine, r.best->trial.knobs};
        if (limits.first != won) store_plan_choice(memo, memo_id, won);
      }
      if (!s.is_ok()) return s;
      if (!r.best)
        return Status::unsupported("no cuDNN execution plan ran and checked out for " +
                                   std::to_string(n) + " elements at " + std::to_string(align) +
                                   "-byte alignment (" + std::to_string(r.trials.size()) +
                                   " tried; see the search notes)" + first_failure(r));
      Entry e;
      e.plan = std::move(r.best);
      it = cache_.emplace(key, std::move(e)).first;
    }
    // Build the pack for the prepared pointers now, so that run() on them allocates nothing.
    Pack* p = nullptr;
    return pack_for(it->second, problem.inputs, problem.outputs[0].data, p);
  }

  Status run_impl(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                  cudaStream_t stream) {
    if (!spec_) return Status::unsupported("run() before prepare()");
    const OpSpec& spec = *spec_;
    Status s = check_contract(spec, inputs, outputs, Device::cuda);
    if (!s.is_ok()) return s;
    s = require_contiguous(inputs, outputs);
    if (!s.is_ok()) return s;
    std::int64_t n = outputs[0].numel();
    if (n == 0) return Status::ok();
    std::int64_t align = alignment_of(inputs, outputs);
    Entry* e = find(fp_, n, align);
    if (e == nullptr)
      return Status::unsupported("not prepared for " + std::to_string(n) + " elements at " +
                                 std::to_string(align) + "-byte alignment");
    Pack* p = nullptr;
    s = pack_for(*e, inputs, outputs[0].data, p);
    if (!s.is_ok()) return s;
    s = checked(cudnnSetStream(handle_, stream), "cudnnSetStream");
    if (!s.is_ok()) return s;
    s = checked(cudnnBackendExecute(handle_, e->plan->plan.get(), p->desc.get()),
                "cudnnBackendExecute");
    if (!s.is_ok()) return s;
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess)
      return Status::error(std::string("after cudnnBackendExecute: ") + cudaGetErrorName(ce) +
                           ": " + cudaGetErrorString(ce));
    return Status::ok();
  }

  // Everything the search's outcome depends on, beside the spec's fingerprint: the problem, this
  // arm's options, the cuDNN runtime and the GPU.
  std::string memo_key(std::int64_t n, std::int64_t align) const {
    cudaDeviceProp prop{};
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaGetDeviceProperties(&prop, device) != cudaSuccess)
      return {};
    return name_ + "|" + fp_ + "|" + std::to_string(n) + "|" + std::to_string(align) + "|" +
           version_text(cudnnGetVersion()) + "|" + prop.name + "|sm_" +
           std::to_string(prop.major * 10 + prop.minor);
  }

  // Below about 2^20 elements every arm is bound by launch latency (ANCHORS.md): the first plan
  // that runs and checks out is as good as any, and qualification prepares some 30 small sizes
  // (each plan's finalize is an NVRTC compile of 0.2-0.8 s). A search stops there once it has
  // one; a shaping or configuration that fails still moves it on to the next.
  static SearchLimits limits_for(std::int64_t n) {
    SearchLimits l;
    if (n < (std::int64_t{1} << 20)) {
      l.soft_seconds = 0.0;
      l.max_plans = 12;
    }
    return l;
  }

  static std::string first_failure(const SearchResult& r) {
    for (const Trial& t : r.trials)
      if (t.outcome != "ok") return "; first failure: " + t.shaping + ": " + t.outcome;
    return "";
  }

  void append_report(const OpSpec& spec, std::int64_t n, std::int64_t align, const SearchResult& r,
                     const Status& s) {
    std::ostringstream o;
    o << "## " << spec.op << ": " << n << " elements, " << align << "-byte alignment\n\n"
      << "cuDNN runtime " << version_text(cudnnGetVersion()) << " (headers "
      << version_text(CUDNN_VERSION) << "); relu lowering "
      << (options_.relu == ReluLowering::native ? "native RELU_FWD" : "exact") << "; search took "
      << r.seconds << " s" << (r.stopped.empty() ? "" : " (stopped: " + r.stopped + ")") << "\n\n";
    if (!s.is_ok()) o << "**search aborted**: " << s.message() << "\n\n";
    if (r.best) {
      const Trial& t = r.best->trial;
      o << "chosen: shaping " << t.shaping << ", engine " << t.engine << ", knobs " << t.knobs
        << ", notes " << t.notes << ", workspace " << r.best->workspace_size << " bytes, median "
        << t.median_us << " us\n\ngraph:\n";
      for (const std::string& line : r.best->graph->ops) o << "    " << line << "\n";
      o << "\n";
    } else {
      o << "no plan chosen\n\n";
    }
    o << format_trials(r) << "\n";
    report_ += o.str();
  }

  std::string name_;
  GraphOptions options_;
  cudnnHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::map<Key, Entry> cache_;
  std::string report_;
  // prepare() keeps the spec for run(), whose signature carries none.
  std::optional<OpSpec> spec_;
  std::string fp_;
};

// cudnn_pointwise lowers relu exactly (RELU_FWD then ADD +0). The relu_fwd
// variant uses cuDNN's own RELU_FWD, which on the H200 (cuDNN 9.14) returns -0 for relu(-0)
// where kq defines +0: it is kept as a declared known-broken candidate, offered only for specs
// that contain a relu (elsewhere it is the same graph as cudnn_pointwise), and must be rejected
// by the value checks.
void make_arms(ArmList& out) {
  out.push_back(std::make_unique<CudnnPointwiseArm>("cudnn_pointwise", ReluLowering::exact));
  out.push_back(
      std::make_unique<CudnnPointwiseArm>("cudnn_pointwise_relu_fwd", ReluLowering::native));
  add_norm_arm(out);
}

}  // namespace
}  // namespace kq::cudnn_graph

KQ_EXPORT_ARMS(kq::cudnn_graph::make_arms)
