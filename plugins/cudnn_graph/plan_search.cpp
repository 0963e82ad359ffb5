#include "plan_search.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <utility>

#include "engine_configs.hpp"
#include "kq/expr_eval.hpp"
#include "kq/half.hpp"
#include "spot_check.hpp"

namespace kq::cudnn_graph {

DeviceBuffer::~DeviceBuffer() {
  if (ptr != nullptr) cudaFree(ptr);
}

namespace {

using Clock = std::chrono::steady_clock;

std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// NHWC-packed {n, c, 1, 1}: channels fastest, which is the same memory order as the contiguous
// elements.
Shaping nhwc(std::int64_t rows, std::int64_t c) {
  Shaping s;
  s.name = "NHWC{" + std::to_string(rows) + "," + std::to_string(c) + ",1,1}";
  s.dims = {rows, c, 1, 1};
  s.strides = {c, 1, c, c};
  return s;
}

// Row-major packed {a, b, c}.
Shaping packed3(std::int64_t a, std::int64_t b, std::int64_t c) {
  Shaping s;
  s.name = "{" + std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + "}";
  s.dims = {a, b, c};
  s.strides = {b * c, c, 1};
  return s;
}

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~Events() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

// Elements checked on the host: the first and last few (the tail is where a shaping or a vector
// width would go wrong).
struct Probe {
  std::int64_t head = 0, tail_start = 0, tail = 0;
  std::size_t count() const { return static_cast<std::size_t>(head + tail); }
  std::int64_t index(std::size_t k) const {
    auto kk = static_cast<std::int64_t>(k);
    return kk < head ? kk : tail_start + (kk - head);
  }
};

Probe probe_for(std::int64_t n) {
  Probe p;
  p.head = std::min<std::int64_t>(n, 32);
  p.tail = std::min<std::int64_t>(n - p.head, 32);
  p.tail_start = n - p.tail;
  return p;
}

// The probe's elements of a buffer of dtype t, widened (exactly) to float.
Status read_probe(cudaStream_t stream, const void* dev, const Probe& p, DType t,
                  std::vector<float>& out) {
  const std::size_t es = dtype_size(t);
  std::vector<unsigned char> bytes(p.count() * es);
  const auto* base = static_cast<const unsigned char*>(dev);
  cudaError_t e = cudaMemcpyAsync(bytes.data(), base, static_cast<std::size_t>(p.head) * es,
                                  cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess && p.tail > 0)
    e = cudaMemcpyAsync(bytes.data() + static_cast<std::size_t>(p.head) * es,
                        base + static_cast<std::size_t>(p.tail_start) * es,
                        static_cast<std::size_t>(p.tail) * es, cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return Status::error("reading back elements: " + cuda_text(e));
  out.resize(p.count());
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = static_cast<float>(load_as_double(t, bytes.data() + k * es));
  return Status::ok();
}

// After a failed execution: clear the error, then see whether the context still works. An error
// that survives is sticky (the context is lost) and ends the search.
bool context_broken(cudaStream_t stream, void* scratch, std::string& why) {
  cudaGetLastError();
  cudaError_t e = cudaMemsetAsync(scratch, 0, 4, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e == cudaSuccess) return false;
  why = cuda_text(e);
  return true;
}

// The output elements a plan wrote, against the host evaluation of the expression.
std::string check_output(const OpSpec& spec, const Probe& p,
                         const std::vector<std::vector<float>>& in, const std::vector<float>& got) {
  std::vector<double> x(in.size());
  for (std::size_t k = 0; k < p.count(); ++k) {
    bool finite = true;
    double scale = 0.0;
    for (std::size_t j = 0; j < in.size(); ++j) {
      x[j] = in[j][k];
      finite = finite && std::isfinite(x[j]);
      scale = std::max(scale, std::fabs(x[j]));
    }
    // Inputs are unspecified at prepare(): elements with NaN or infinite inputs are left to the
    // qualification, whose cases are chosen.
    if (!finite) continue;
    auto want = static_cast<float>(round_to(spec.dtype, ref::eval_expr(spec.semantics, x)));
    if (!close_enough(got[k], want, scale, spec.dtype, spec.compare)) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "element %lld: got %.9g, expected %.9g",
                    static_cast<long long>(p.index(k)), static_cast<double>(got[k]),
                    static_cast<double>(want));
      return buf;
    }
  }
  return {};
}

struct Context {
  cudnnHandle_t h;
  cudaStream_t stream;
  const OpSpec& spec;
  const Buffers& buf;
  const SearchLimits& lim;
  const Probe& probe;
  const std::vector<std::vector<float>>& inputs;
  Events& ev;
};

// Finalizes, runs, checks and times one configuration. Returns error only for a sticky CUDA error.
Status try_config(Context& cx, const std::shared_ptr<BuiltGraph>& g, EngineConfig& cfg, Trial& t,
                  std::unique_ptr<ChosenPlan>& best) {
  Desc plan;
  Status s = Desc::create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan);
  // Deprecated in cuDNN 9 but still read by 9.x; the frontend sets it too.
  if (s.is_ok()) s = plan.set_handle(KQ_ATTR(CUDNN_ATTR_EXECUTION_PLAN_HANDLE), cx.h);
  if (s.is_ok())
    s = plan.set_desc(KQ_ATTR(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG), cfg.desc.get());
  if (s.is_ok()) s = plan.finalize();
  if (!s.is_ok()) {
    t.outcome = "plan: " + s.message();
    return Status::ok();
  }
  std::int64_t got = 0;
  s = plan.get(KQ_ATTR(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE), CUDNN_TYPE_INT64, 1, &got,
               &t.workspace);
  if (!s.is_ok()) {
    t.outcome = "workspace size: " + s.message();
    return Status::ok();
  }
  auto ws = std::make_shared<DeviceBuffer>();
  if (t.workspace > 0) {
    cudaError_t e = cudaMalloc(&ws->ptr, static_cast<std::size_t>(t.workspace));
    if (e != cudaSuccess) {
      cudaGetLastError();
      t.outcome = "workspace of " + std::to_string(t.workspace) + " bytes: " + cuda_text(e);
      return Status::ok();
    }
  }
  Desc pack;
  s = make_variant_pack(*g, cx.buf.inputs, cx.buf.output, ws->ptr, pack);
  if (!s.is_ok()) {
    t.outcome = "variant pack: " + s.message();
    return Status::ok();
  }

  // One execution of the plan; "" when it ran, else what went wrong (and whether it was sticky).
  std::string sticky;
  auto execute = [&](bool sync) -> std::string {
    cudnnStatus_t es = cudnnBackendExecute(cx.h, plan.get(), pack.get());
    std::string why;
    if (es != CUDNN_STATUS_SUCCESS) why = "execute: " + describe(es);
    cudaError_t ce = sync ? cudaStreamSynchronize(cx.stream) : cudaSuccess;
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) why += std::string(why.empty() ? "" : "; ") + "CUDA: " + cuda_text(ce);
    if (!why.empty()) context_broken(cx.stream, cx.buf.output, sticky);
    return why;
  };

  // Poison the output so that a plan that writes nothing cannot pass the check.
  std::size_t bytes = static_cast<std::size_t>(cx.buf.n) * dtype_size(cx.buf.dtype);
  cudaError_t e = cudaMemsetAsync(cx.buf.output, 0xFF, bytes, cx.stream);
  if (e != cudaSuccess) return Status::error("poisoning the output: " + cuda_text(e));
  std::string why = execute(true);
  if (!sticky.empty())
    return Status::error("the CUDA context is lost after executing " + t.shaping + " engine " +
                         std::to_string(t.engine) + " (" + why + "): " + sticky);
  if (!why.empty()) {
    t.outcome = why;
    return Status::ok();
  }
  std::vector<float> out;
  s = read_probe(cx.stream, cx.buf.output, cx.probe, cx.buf.dtype, out);
  if (!s.is_ok()) return s;
  std::string bad = check_output(cx.spec, cx.probe, cx.inputs, out);
  if (!bad.empty()) {
    t.outcome = "check: " + bad;
    return Status::ok();
  }

  for (int i = 1; i < cx.lim.warmup && why.empty(); ++i) why = execute(false);
  if (why.empty()) {
    cudaError_t se = cudaStreamSynchronize(cx.stream);
    if (se != cudaSuccess) why = "warm-up: " + cuda_text(se);
  }
  std::vector<double> us;
  for (int i = 0; i < cx.lim.reps && why.empty(); ++i) {
    cudaEventRecord(cx.ev.start, cx.stream);
    why = execute(false);
    cudaEventRecord(cx.ev.stop, cx.stream);
    cudaError_t se = cudaEventSynchronize(cx.ev.stop);
    float ms = 0.0f;
    if (se == cudaSuccess) se = cudaEventElapsedTime(&ms, cx.ev.start, cx.ev.stop);
    if (se != cudaSuccess && why.empty()) why = "timing: " + cuda_text(se);
    us.push_back(static_cast<double>(ms) * 1000.0);
  }
  if (!why.empty() && !sticky.empty())
    return Status::error("the CUDA context is lost while timing " + t.shaping + ": " + sticky);
  if (!why.empty()) {
    t.outcome = why;
    return Status::ok();
  }
  std::sort(us.begin(), us.end());
  t.median_us = us[us.size() / 2];
  t.min_us = us.front();
  t.outcome = "ok";
  if (!best || t.median_us < best->trial.median_us) {
    auto c = std::make_unique<ChosenPlan>();
    c->graph = g;
    c->engine_config = std::move(cfg.desc);
    c->plan = std::move(plan);
    c->workspace = ws;
    c->workspace_size = t.workspace;
    c->trial = t;
    best = std::move(c);
  }
  return Status::ok();
}

}  // namespace

std::vector<Shaping> shapings_for(std::int64_t n) {
  std::vector<Shaping> out;
  std::set<std::vector<std::int64_t>> seen;
  auto add = [&](Shaping s) {
    if (seen.insert(s.dims).second) out.push_back(std::move(s));
  };
  const std::int64_t channels[] = {32, 64, 128, 256, 1024};
  // ANCHORS.md: NHWC {N/32, 32, 1, 1} ran at 1.01x the hand-written kernel on the H200, {1,N,1}
  // 13.7x slower. Most promising first, since the search is capped in time.
  for (std::int64_t c : channels)
    if (n % c == 0) add(nhwc(n / c, c));
  // N not divisible by 32: the largest divisor up to 4096 still gives a two-level shape.
  if (n % 32 != 0)
    for (std::int64_t d = std::min<std::int64_t>(n / 2, 4096); d >= 8; --d)
      if (n % d == 0) {
        add(nhwc(n / d, d));
        break;
      }
  add(nhwc(1, n));
  for (std::int64_t c : channels)
    if (n % c == 0) add(packed3(n / c, c, 1));
  add(packed3(1, n, 1));
  return out;
}

Status make_variant_pack(const BuiltGraph& g, const std::vector<void*>& inputs, void* output,
                         void* workspace, Desc& out) {
  std::vector<std::int64_t> uids;
  std::vector<void*> ptrs;
  for (std::size_t k = 0; k < g.input_uids.size() && k < inputs.size(); ++k) {
    if (g.input_uids[k] < 0) continue;
    uids.push_back(g.input_uids[k]);
    ptrs.push_back(inputs[k]);
  }
  uids.push_back(g.output_uid);
  ptrs.push_back(output);
  for (std::size_t k = 0; k < g.scalar_uids.size(); ++k) {
    uids.push_back(g.scalar_uids[k]);
    // By-value tensors take a host pointer to the value.
    ptrs.push_back(const_cast<float*>(&g.scalars[k].value));
  }
  Status s = Desc::create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, out);
  if (s.is_ok())
    s = out.set(KQ_ATTR(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS), CUDNN_TYPE_VOID_PTR,
                static_cast<std::int64_t>(ptrs.size()), ptrs.data());
  if (s.is_ok()) s = out.set_i64s(KQ_ATTR(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS), uids);
  if (s.is_ok())
    s = out.set(KQ_ATTR(CUDNN_ATTR_VARIANT_PACK_WORKSPACE), CUDNN_TYPE_VOID_PTR, 1, &workspace);
  if (s.is_ok()) s = out.finalize();
  return s;
}

Status search(cudnnHandle_t h, cudaStream_t stream, const OpSpec& spec, const Buffers& buf,
              const GraphOptions& options, const SearchLimits& lim, SearchResult& out) {
  out = SearchResult{};
  auto t0 = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  Status s = checked(cudnnSetStream(h, stream), "cudnnSetStream");
  if (!s.is_ok()) return s;

  Probe probe = probe_for(buf.n);
  std::vector<std::vector<float>> inputs(buf.inputs.size());
  for (std::size_t k = 0; k < buf.inputs.size(); ++k) {
    s = read_probe(stream, buf.inputs[k], probe, buf.dtype, inputs[k]);
    if (!s.is_ok()) return s;
  }
  Events ev;
  if (cudaEventCreate(&ev.start) != cudaSuccess || cudaEventCreate(&ev.stop) != cudaSuccess)
    return Status::error("cudaEventCreate: " + cuda_text(cudaGetLastError()));
  Context cx{h, stream, spec, buf, lim, probe, inputs, ev};

  int plans = 0;
  bool remembered_ok = false;  // lim.first ran and checked out
  auto should_stop = [&]() -> bool {
    if (remembered_ok) {
      out.stopped = "the plan an earlier search chose ran and checked out (kq's cache)";
      return true;
    }
    if (plans >= lim.max_plans) {
      out.stopped = "plan cap of " + std::to_string(lim.max_plans) + " reached";
      return true;
    }
    double t = seconds();
    if (t > lim.hard_seconds || (out.best && t > lim.soft_seconds)) {
      out.stopped = "time cap reached after " + std::to_string(t) + " s";
      return true;
    }
    return false;
  };

  const auto is_first = [&](const std::string& shaping, const EngineConfig* cfg) {
    return lim.first && lim.first->shaping == shaping &&
           (cfg == nullptr || (cfg->engine == lim.first->engine && cfg->knobs == lim.first->knobs));
  };
  std::vector<Shaping> shapes = shapings_for(buf.n);
  std::stable_partition(shapes.begin(), shapes.end(),
                        [&](const Shaping& sh) { return is_first(sh.name, nullptr); });
  for (const Shaping& shape : shapes) {
    if (should_stop()) break;
    auto g = std::make_shared<BuiltGraph>();
    Status gs = build_graph(h, spec, shape, options, *g);
    if (!gs.is_ok()) {
      if (gs.is_unsupported()) return gs;  // the expression itself does not map
      Trial t;
      t.shaping = shape.name;
      t.outcome = "graph: " + gs.message();
      out.trials.push_back(t);
      continue;
    }
    std::vector<EngineConfig> cfgs;
    const std::pair<cudnnBackendHeurMode_t, const char*> modes[] = {
        {CUDNN_HEUR_MODE_A, "A"}, {CUDNN_HEUR_MODE_FALLBACK, "FALLBACK"}};
    for (auto [mode, name] : modes) {
      Status hs = heuristics(g->graph.get(), mode, name, cfgs);
      if (!hs.is_ok()) {
        Trial t;
        t.shaping = shape.name;
        t.source = name;
        t.outcome = "heuristics: " + hs.message();
        out.trials.push_back(t);
      }
    }
    if (cfgs.empty()) {
      Trial t;
      t.shaping = shape.name;
      t.outcome = "no engine configuration proposed";
      out.trials.push_back(t);
    }
    // On the H200 every configuration of a shaping the launch rejects ({1,N,1,1} and the 3-D
    // forms at 2^24: CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER, invalid launch configuration)
    // fails the same way: after two such failures the shaping's other configurations are skipped,
    // which leaves the plan budget to the next shaping.
    int execution_failures = 0;
    std::stable_partition(cfgs.begin(), cfgs.end(),
                          [&](const EngineConfig& c) { return is_first(shape.name, &c); });
    for (EngineConfig& cfg : cfgs) {
      if (should_stop()) break;
      Trial t;
      t.shaping = shape.name;
      t.source = cfg.source;
      t.engine = cfg.engine;
      t.knobs = cfg.knobs;
      t.notes = cfg.notes;
      if (execution_failures >= 2) {
        t.outcome = "skipped: two configurations of this shaping failed at execution";
        out.trials.push_back(t);
        continue;
      }
      ++plans;
      Status ts = try_config(cx, g, cfg, t, out.best);
      out.trials.push_back(t);
      if (!ts.is_ok()) {
        out.seconds = seconds();
        return ts;
      }
      if (t.outcome.rfind("execute:", 0) == 0) ++execution_failures;
      remembered_ok = is_first(shape.name, &cfg) && t.outcome == "ok";
    }
  }
  if (out.best) out.best->json = plan_json(out.best->plan);
  out.seconds = seconds();
  return Status::ok();
}

std::string format_trials(const std::vector<Trial>& trials) {
  std::ostringstream o;
  o << "| # | shaping | heuristics | engine | knobs | notes | workspace | result | median us | "
       "min us |\n|---|---|---|---|---|---|---|---|---|---|\n";
  int i = 0;
  for (const Trial& t : trials) {
    std::string outcome = t.outcome;
    std::replace(outcome.begin(), outcome.end(), '|', '/');
    std::replace(outcome.begin(), outcome.end(), '\n', ' ');
    char med[32] = "-", mn[32] = "-";
    if (t.median_us >= 0) std::snprintf(med, sizeof med, "%.2f", t.median_us);
    if (t.min_us >= 0) std::snprintf(mn, sizeof mn, "%.2f", t.min_us);
    o << "| " << ++i << " | " << t.shaping << " | " << (t.source.empty() ? "-" : t.source) << " | "
      << (t.engine >= 0 ? std::to_string(t.engine) : "-") << " | "
      << (t.knobs.empty() ? "-" : t.knobs) << " | " << (t.notes.empty() ? "-" : t.notes) << " | "
      << t.workspace << " | " << outcome << " | " << med << " | " << mn << " |\n";
  }
  return o.str();
}

}  // namespace kq::cudnn_graph
