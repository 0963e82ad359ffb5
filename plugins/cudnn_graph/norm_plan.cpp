#include "norm_plan.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "engine_configs.hpp"
#include "kq/half.hpp"
#include "spot_check.hpp"

namespace kq::cudnn_graph {

namespace {

using Clock = std::chrono::steady_clock;

std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~Events() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

// After a failed execution: clear the error, then see whether the context still works.
bool context_broken(cudaStream_t stream, void* scratch, std::string& why) {
  cudaGetLastError();
  cudaError_t e = cudaMemsetAsync(scratch, 0, 4, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e == cudaSuccess) return false;
  why = cuda_text(e);
  return true;
}

// `count` elements of dtype t from element `first` of a device buffer, widened exactly.
Status read(cudaStream_t stream, const void* dev, DType t, std::int64_t first, std::int64_t count,
            std::vector<double>& out) {
  const std::size_t es = dtype_size(t);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(count) * es);
  cudaError_t e = cudaMemcpyAsync(
      bytes.data(), static_cast<const unsigned char*>(dev) + static_cast<std::size_t>(first) * es,
      bytes.size(), cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return Status::error("reading back elements: " + cuda_text(e));
  out.resize(static_cast<std::size_t>(count));
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = load_as_double(t, bytes.data() + k * es);
  return Status::ok();
}

// What the check needs of the problem: the weight and bias on the host (ones and zeros where the
// spec has none), and the rows checked.
struct CheckData {
  std::vector<double> w, b;
  std::vector<std::int64_t> rows;
};

Status load_check_data(cudaStream_t stream, const NormMatch& m, const NormDims& d,
                       const NormPointers& p, CheckData& out) {
  out.w.assign(static_cast<std::size_t>(d.cols), 1.0);
  out.b.assign(static_cast<std::size_t>(d.cols), 0.0);
  Status s = Status::ok();
  if (m.form.scale) s = read(stream, p.scale, m.scale, 0, d.cols, out.w);
  if (s.is_ok() && m.form.bias) s = read(stream, p.bias, m.bias, 0, d.cols, out.b);
  out.rows = {0};
  if (d.rows > 1) out.rows.push_back(d.rows - 1);
  return s;
}

// "y at row 6 col 17: got 0.5, expected 0.25"; no column for a statistic (col < 0).
std::string mismatch(const char* what, std::int64_t row, std::int64_t col, double got,
                     double want) {
  char buf[200];
  std::snprintf(buf, sizeof buf, ": got %.9g, expected %.9g", got, want);
  return std::string(what) + " at row " + std::to_string(row) +
         (col >= 0 ? " col " + std::to_string(col) : std::string()) + buf;
}

// The checked rows of what the plan wrote against float64; "" when they agree.
Status check_rows(cudaStream_t stream, const NormMatch& m, const NormDims& d, const NormPointers& p,
                  const CheckData& c, std::string& bad) {
  const bool layer = m.form.kind == NormKind::layer;
  const auto n = static_cast<double>(d.cols);
  std::vector<double> x, y, mean, rstd;
  for (std::int64_t row : c.rows) {
    Status s = read(stream, p.x, m.x, row * d.cols, d.cols, x);
    if (s.is_ok()) s = read(stream, p.y, m.y, row * d.cols, d.cols, y);
    if (s.is_ok() && layer && m.form.training) s = read(stream, p.mean, DType::f32, row, 1, mean);
    if (s.is_ok() && m.form.training) s = read(stream, p.inv_variance, DType::f32, row, 1, rstd);
    if (!s.is_ok()) return s;
    // The inputs are whatever the caller loaded: rows with values whose squares leave float are
    // left to the qualification, whose cases are chosen.
    double big = 0.0;
    for (double v : x) big = std::isfinite(v) ? std::max(big, std::fabs(v)) : HUGE_VAL;
    if (big > 1e18) continue;
    double mu = 0.0, var = 0.0;
    if (layer) {
      for (double v : x) mu += v;
      mu /= n;
      for (double v : x) var += (v - mu) * (v - mu);
      var /= n;
    } else {
      for (double v : x) var += v * v;
      var /= n;
    }
    const double inv = 1.0 / std::sqrt(var + m.eps);
    if (layer && m.form.training &&
        !close_enough(static_cast<float>(mean[0]), static_cast<float>(mu), 10.0 * big)) {
      bad = mismatch("mean", row, -1, mean[0], mu);
      return Status::ok();
    }
    if (m.form.training &&
        !close_enough(static_cast<float>(rstd[0]), static_cast<float>(inv), 10.0 * inv)) {
      bad = mismatch(layer ? "inv_variance" : "rms inv_variance", row, -1, rstd[0], inv);
      return Status::ok();
    }
    for (std::size_t k = 0; k < x.size(); ++k) {
      const double term = (x[k] - mu) * inv * c.w[k];
      const double want = round_to(m.y, term + c.b[k]);
      if (!close_enough(static_cast<float>(y[k]), static_cast<float>(want),
                        std::fabs(term) + std::fabs(c.b[k]), m.y)) {
        bad = mismatch("y", row, static_cast<std::int64_t>(k), y[k], want);
        return Status::ok();
      }
    }
  }
  return Status::ok();
}

// Every output filled with NaN bytes, so that a plan that writes nothing cannot pass the check.
Status poison(cudaStream_t stream, const NormMatch& m, const NormDims& d, const NormPointers& p) {
  cudaError_t e = cudaMemsetAsync(
      p.y, 0xFF, static_cast<std::size_t>(d.rows * d.cols) * dtype_size(m.y), stream);
  const std::size_t stat = static_cast<std::size_t>(d.rows) * sizeof(float);
  if (e == cudaSuccess && p.mean && m.form.training && m.form.kind == NormKind::layer)
    e = cudaMemsetAsync(p.mean, 0xFF, stat, stream);
  if (e == cudaSuccess && p.inv_variance && m.form.training)
    e = cudaMemsetAsync(p.inv_variance, 0xFF, stat, stream);
  if (e != cudaSuccess) return Status::error("poisoning the outputs: " + cuda_text(e));
  return Status::ok();
}

struct Context {
  cudnnHandle_t h;
  cudaStream_t stream;
  const NormMatch& m;
  const NormDims& d;
  const NormPointers& p;
  const SearchLimits& lim;
  const CheckData& check;
  Events& ev;
};

// Finalizes, runs, checks and times one configuration. Returns error only for a lost context.
Status try_config(Context& cx, NormGraph& g, EngineConfig& cfg, Trial& t,
                  std::unique_ptr<NormPlan>& best) {
  Desc plan;
  Status s = Desc::create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan);
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
  s = make_norm_pack(g, cx.p, ws->ptr, pack);
  if (!s.is_ok()) {
    t.outcome = "variant pack: " + s.message();
    return Status::ok();
  }
  std::string sticky;
  auto execute = [&](bool sync) -> std::string {
    cudnnStatus_t es = cudnnBackendExecute(cx.h, plan.get(), pack.get());
    std::string why;
    if (es != CUDNN_STATUS_SUCCESS) why = "execute: " + describe(es);
    cudaError_t ce = sync ? cudaStreamSynchronize(cx.stream) : cudaSuccess;
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (ce != cudaSuccess) why += std::string(why.empty() ? "" : "; ") + "CUDA: " + cuda_text(ce);
    if (!why.empty()) context_broken(cx.stream, cx.p.y, sticky);
    return why;
  };

  s = poison(cx.stream, cx.m, cx.d, cx.p);
  if (!s.is_ok()) return s;
  std::string why = execute(true);
  if (!sticky.empty())
    return Status::error("the CUDA context is lost after executing engine " +
                         std::to_string(t.engine) + " (" + why + "): " + sticky);
  if (!why.empty()) {
    t.outcome = why;
    return Status::ok();
  }
  std::string bad;
  s = check_rows(cx.stream, cx.m, cx.d, cx.p, cx.check, bad);
  if (!s.is_ok()) return s;
  if (!bad.empty()) {
    t.outcome = "check: " + bad;
    return Status::ok();
  }
  for (int i = 1; i < cx.lim.warmup && why.empty(); ++i) why = execute(false);
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
    return Status::error("the CUDA context is lost while timing engine " +
                         std::to_string(t.engine) + ": " + sticky);
  if (!why.empty()) {
    t.outcome = why;
    return Status::ok();
  }
  std::sort(us.begin(), us.end());
  t.median_us = us[us.size() / 2];
  t.min_us = us.front();
  t.outcome = "ok";
  if (!best || t.median_us < best->trial.median_us) {
    auto c = std::make_unique<NormPlan>();
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

Status search_norm(cudnnHandle_t h, cudaStream_t stream, const NormMatch& m, const NormDims& d,
                   const NormPointers& p, std::int64_t alignment, const SearchLimits& lim,
                   NormSearch& out) {
  out = NormSearch{};
  auto t0 = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  Status s = checked(cudnnSetStream(h, stream), "cudnnSetStream");
  if (!s.is_ok()) return s;

  // One graph serves every configuration; the plan that wins takes it.
  auto g = std::make_unique<NormGraph>();
  s = build_norm_graph(h, m, d, alignment, *g);
  out.graph_lines = g->lines;
  if (!s.is_ok()) {
    out.seconds = seconds();
    return s;
  }
  std::vector<EngineConfig> cfgs;
  std::string heur_failures;
  const std::pair<cudnnBackendHeurMode_t, const char*> modes[] = {
      {CUDNN_HEUR_MODE_A, "A"}, {CUDNN_HEUR_MODE_FALLBACK, "FALLBACK"}};
  for (auto [mode, name] : modes) {
    Status hs = heuristics(g->graph.get(), mode, name, cfgs);
    if (!hs.is_ok()) {
      Trial t;
      t.shaping = "-";
      t.source = name;
      t.outcome = "heuristics: " + hs.message();
      out.trials.push_back(t);
      heur_failures += std::string("; heuristics ") + name + ": " + hs.message();
    }
  }
  if (cfgs.empty()) {
    out.seconds = seconds();
    return Status::unsupported("cuDNN's heuristics offered no engine configuration for " +
                               norm_words(m.form) + " at " + std::to_string(d.rows) + " x " +
                               std::to_string(d.cols) + heur_failures);
  }

  CheckData check;
  s = load_check_data(stream, m, d, p, check);
  if (!s.is_ok()) return s;
  Events ev;
  if (cudaEventCreate(&ev.start) != cudaSuccess || cudaEventCreate(&ev.stop) != cudaSuccess)
    return Status::error("cudaEventCreate: " + cuda_text(cudaGetLastError()));
  Context cx{h, stream, m, d, p, lim, check, ev};
  const std::string shaping = "[" + std::to_string(d.rows) + "," + std::to_string(d.cols) + ",1,1]";
  int plans = 0;
  for (EngineConfig& cfg : cfgs) {
    Trial t;
    t.shaping = shaping;
    t.source = cfg.source;
    t.engine = cfg.engine;
    t.knobs = cfg.knobs;
    t.notes = cfg.notes;
    const double now = seconds();
    if (plans >= lim.max_plans || now > lim.hard_seconds || (out.best && now > lim.soft_seconds)) {
      out.stopped = plans >= lim.max_plans ? "plan cap reached"
                                           : "time cap reached after " + std::to_string(now) + " s";
      break;
    }
    ++plans;
    Status ts = try_config(cx, *g, cfg, t, out.best);
    out.trials.push_back(t);
    if (!ts.is_ok()) {
      out.seconds = seconds();
      return ts;
    }
  }
  if (out.best) {
    out.best->graph = std::move(g);
    out.best->json = plan_json(out.best->plan);
  }
  out.seconds = seconds();
  return Status::ok();
}

Status norm_pack_for(const NormPlan& plan, const NormPointers& p, Desc& out) {
  return make_norm_pack(*plan.graph, p, plan.workspace->ptr, out);
}

}  // namespace kq::cudnn_graph
