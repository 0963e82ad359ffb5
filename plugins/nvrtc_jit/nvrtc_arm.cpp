#include "nvrtc_arm.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "cuda_include.hpp"
#include "kq/shaped_contract.hpp"
#include "row_codegen.hpp"
#include "row_launch.hpp"

namespace kq::nvrtc {
namespace {

constexpr const char* kVersion = "3";
constexpr std::size_t kCountBytes = 256;  // the blocks' count, then the partials, aligned

const char* const kKernelNames[LoadedModule::count] = {
    kVecKernel, kVecAliasKernel, kScalarKernel, kScalarAliasKernel, kStridedKernel, kRowKernel};

// f16 and bf16 modules include cuda_fp16.h / cuda_bf16.h: empty when the folder is found.
std::string half_headers_missing() {
  std::string looked;
  if (!cuda_include_dir(looked).empty()) return {};
  return "f16 and bf16 modules include cuda_fp16.h / cuda_bf16.h, found in none of " + looked +
         " (set CUDA_HOME or KQ_CUDA_INCLUDE)";
}

bool has_half_tensor(const OpSpec& spec) {
  for (const ix::TensorDecl& t : spec.program->decls.tensors)
    if (t.role != ix::Role::temporary && is_half(t.dtype)) return true;
  return false;
}

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

void cu_check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw std::runtime_error(cu_error(what, r));
}

std::string hex_ptr(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// The module's context current on this thread: a thread that has not touched CUDA yet adopts
// it; another context current is an error.
Status make_current(const LoadedModule& m) {
  const DriverApi& d = driver();
  CUcontext cur = nullptr;
  CUresult r = d.ctx_get_current(&cur);
  if (r != CUDA_SUCCESS) return Status::error(cu_error("cuCtxGetCurrent", r));
  if (cur == m.ctx) return Status::ok();
  if (cur != nullptr)
    return Status::error("the current CUDA context is not the one prepare() loaded the module in");
  r = d.ctx_set_current(m.ctx);
  if (r != CUDA_SUCCESS) return Status::error(cu_error("cuCtxSetCurrent", r));
  return Status::ok();
}

Status launch_error(CUresult r) {
  if (r != CUDA_SUCCESS) return Status::error(cu_error("cuLaunchKernel", r));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::error(std::string("after launch: ") + cudaGetErrorName(e) + " (" +
                         cudaGetErrorString(e) + ")");
  return Status::ok();
}

}  // namespace

NvrtcArm::~NvrtcArm() {
  if (partials_) cudaFree(partials_);  // an error here (context gone) is ignored
  try {
    const DriverApi& d = driver();
    for (auto& [key, m] : modules_)
      if (m->module) d.module_unload(m->module);  // an error here (context gone) is ignored
  } catch (...) {
  }
}

ArmIdentity NvrtcArm::identity() const {
  return kq::build::identity(config_.name, "nvrtc_jit", Device::cuda, kVersion);
}

Status NvrtcArm::supports(const OpSpec& spec) const {
  try {
    if (spec.program) {
      // One row kernel per spec: a second arm running the same module would only repeat it.
      if (!config_.vector)
        return Status::unsupported(
            "a format-2 spec: its row kernel runs under nvrtc_jit (this arm differs only in "
            "format 1's vector kernels)");
      RowPlan plan;
      if (std::string why = lower_rows(spec, plan); !why.empty())
        return Status::unsupported("no row kernel: " + why);
      if (has_half_tensor(spec))
        if (std::string why = half_headers_missing(); !why.empty()) return Status::unsupported(why);
      return Status::ok();
    }
    if (std::string why = check_dtype(spec); !why.empty()) return Status::unsupported(why);
    if (is_half(spec.dtype))
      if (std::string why = half_headers_missing(); !why.empty()) return Status::unsupported(why);
    if (spec.outputs.size() != 1) return Status::unsupported("exactly one output is supported");
    std::string why = check_expr(spec.semantics, spec.inputs.size());
    if (!why.empty()) return Status::unsupported("semantics: " + why);
    return Status::ok();
  } catch (...) {
    return status_from_current_exception("supports()");
  }
}

Status NvrtcArm::prepare(const Problem& problem) {
  try {
    return prepare_impl(problem);
  } catch (...) {
    return status_from_current_exception("prepare()");
  }
}

Status NvrtcArm::prepare_impl(const Problem& problem) {
  if (problem.spec == nullptr) return Status::error("prepare() without a spec");
  const OpSpec& spec = *problem.spec;
  Status s = supports(spec);
  if (!s.is_ok()) return s;
  if (spec.program) {
    s = check_shaped_contract(spec, problem.inputs, problem.outputs, Device::cuda);
    if (!s.is_ok()) return s;
    // row_plan_ changes below: until this prepare succeeds, run() has nothing to run.
    spec_.reset();
    current_ = nullptr;
    lower_rows(spec, row_plan_);
    RowLayout L;
    if (std::string why = plan_rows(spec, row_plan_, problem.inputs, problem.outputs, L);
        !why.empty())
      return Status::unsupported(why);
    LoadedModule& m = load(spec);
    if (row_plan_.split || !row_plan_.over_rows.empty())
      if (s = prepare_partials(spec, m); !s.is_ok()) return s;
    spec_ = spec;
    current_ = &m;
    const RowGrid g =
        row_grid(row_plan_, L, m.sms, m.blocks_per_sm[LoadedModule::rows], config_.waves);
    last_plan_ = "prepared call: " + std::to_string(L.rows) + " rows of " + std::to_string(L.len) +
                 (row_plan_.split     ? ", one row over the grid"
                  : row_plan_.columns ? ", a thread per row"
                                      : ", a block per row") +
                 ", " + std::to_string(g.blocks) + " blocks of " + std::to_string(g.block) + "\n";
    return Status::ok();
  }
  s = check_contract(spec, problem.inputs, problem.outputs, Device::cuda);
  if (!s.is_ok()) return s;
  LaunchArgs a;
  std::string why = plan_launch(problem.inputs, problem.outputs[0], config_.vector, a);
  if (!why.empty()) return Status::unsupported(why);

  LoadedModule& m = load(spec);
  spec_ = spec;
  current_ = &m;
  last_plan_ =
      "prepared call: " + std::to_string(a.n) + " elements, " + to_string(a.path) + " path" +
      (a.alias ? " (output aliases an input)" : "") +
      (a.path == Path::vector ? ", head " + std::to_string(a.head) : "") +
      (a.path == Path::strided ? ", rank " + std::to_string(a.rank) + " after merging" : "") + "\n";
  return Status::ok();
}

// The count and partials of a split plan or of reductions over the rows: enough for the largest
// grid row_grid gives on this device, the count at 0.
Status NvrtcArm::prepare_partials(const OpSpec& spec, const LoadedModule& m) {
  std::size_t reductions = 0;
  for (const ix::Node& n : spec.program->nodes) reductions += n.kind == ix::NodeKind::reduce;
  const std::size_t need =
      kCountBytes + reductions * sizeof(float) *
                        static_cast<std::size_t>(max_grid_blocks(
                            row_plan_, m.sms, m.blocks_per_sm[LoadedModule::rows], config_.waves));
  if (partials_bytes_ < need) {
    if (partials_) cudaFree(partials_);
    partials_ = nullptr;
    partials_bytes_ = 0;
    if (cudaError_t e = cudaMalloc(&partials_, need); e != cudaSuccess)
      return Status::error(std::string("cudaMalloc of the blocks' partials: ") +
                           cudaGetErrorName(e));
    partials_bytes_ = need;
  }
  if (cudaError_t e = cudaMemset(partials_, 0, kCountBytes); e != cudaSuccess)
    return Status::error(std::string("cudaMemset of the blocks' count: ") + cudaGetErrorName(e));
  return Status::ok();
}

LoadedModule& NvrtcArm::load(const OpSpec& spec) {
  // The runtime creates the device's primary context (or adopts the one current on this
  // thread) and makes it current; the module is loaded into that context.
  cuda_check(cudaFree(nullptr), "cudaFree(0)");
  int dev = 0, major = 0, minor = 0, sms = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "cc major");
  cuda_check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), "cc minor");
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
  const DriverApi& d = driver();
  CUcontext ctx = nullptr;
  cu_check(d.ctx_get_current(&ctx), "cuCtxGetCurrent");
  if (ctx == nullptr) throw std::runtime_error("no current CUDA context after cudaFree(0)");

  Generated gen = spec.program ? generate_rows(spec, row_plan_) : generate(spec, config_.codegen);
  std::string include_dir, looked;
  if (gen.cuda_headers) {
    include_dir = cuda_include_dir(looked);
    if (include_dir.empty()) throw std::runtime_error("no CUDA include folder among " + looked);
  }
  CompileOutcome co = compile(gen.source, "kq_" + spec.op + ".cu", major, minor, include_dir);
  const std::string key = co.compiled->key + "@" + hex_ptr(ctx);
  if (auto it = modules_.find(key); it != modules_.end()) return *it->second;

  auto m = std::make_unique<LoadedModule>();
  m->ctx = ctx;
  m->sms = sms;
  m->compiled = co.compiled;
  const Compiled& c = *co.compiled;
  const void* image = c.cubin.empty() ? static_cast<const void*>(c.ptx.c_str())
                                      : static_cast<const void*>(c.cubin.data());
  cu_check(d.module_load_data(&m->module, image), "cuModuleLoadData");
  std::string kernels;
  for (int k = 0; k < LoadedModule::count; ++k) {
    if ((k == LoadedModule::rows) != gen.rows) continue;  // a row module has kq_rows alone
    CUresult r = d.module_get_function(&m->fn[k], m->module, kKernelNames[k]);
    if (r == CUDA_SUCCESS) r = d.occupancy(&m->blocks_per_sm[k], m->fn[k], gen.block, 0);
    if (r == CUDA_SUCCESS)
      r = d.func_get_attribute(&m->regs[k], CU_FUNC_ATTRIBUTE_NUM_REGS, m->fn[k]);
    if (r == CUDA_SUCCESS)
      r = d.func_get_attribute(&m->local_bytes[k], CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, m->fn[k]);
    if (r != CUDA_SUCCESS) {
      d.module_unload(m->module);
      throw std::runtime_error(cu_error(kKernelNames[k], r));
    }
    if (m->blocks_per_sm[k] < 1) m->blocks_per_sm[k] = 1;
    kernels += std::string("  ") + kKernelNames[k] + ": " + std::to_string(m->regs[k]) +
               " registers, " + std::to_string(m->local_bytes[k]) + " bytes local, " +
               std::to_string(m->blocks_per_sm[k]) + " blocks of " + std::to_string(gen.block) +
               " per SM\n";
  }
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", co.compile_ms);
  m->notes = "arm " + config_.name + ": " +
             (gen.rows         ? std::string(row_plan_.columns ? "column kernel, block "
                                                               : "row kernel, block up to ")
              : config_.vector ? std::string("vector and scalar paths, block ")
                               : std::string("scalar paths only, block ")) +
             std::to_string(gen.block) + ", unroll " + std::to_string(gen.unroll) + ", grid cap " +
             (config_.waves > 0 ? std::to_string(config_.waves) + " waves" : std::string("none")) +
             "\ndevice: sm_" + std::to_string(major * 10 + minor) + ", " + std::to_string(sms) +
             " SMs; target " + c.arch +
             (c.cubin.empty() ? " (PTX, JIT-compiled by the driver)" : " (cubin)") + "\nNVRTC " +
             c.nvrtc_version + ": cache " + co.cache +
             (co.cache == "miss" ? std::string(", compiled in ") + ms + " ms" : std::string()) +
             (co.cache_path.empty() ? std::string() : "\ncache entry: " + co.cache_path) +
             (co.cache_note.empty() ? std::string() : "\ncache: " + co.cache_note) +
             "\nkernels:\n" + kernels;
  m->gen = std::move(gen);
  LoadedModule& ref = *m;
  modules_.emplace(key, std::move(m));
  return ref;
}

Status NvrtcArm::run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                     void* stream) {
  try {
    return run_impl(inputs, outputs, stream);
  } catch (...) {
    return status_from_current_exception("run()");
  }
}

Status NvrtcArm::run_impl(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                          void* stream) {
  if (!spec_ || current_ == nullptr) return Status::error("run() before a successful prepare()");
  if (spec_->program) return run_rows(inputs, outputs, stream);
  Status s = check_contract(*spec_, inputs, outputs, Device::cuda);
  if (!s.is_ok()) return s;
  LaunchArgs a;
  std::string why = plan_launch(inputs, outputs[0], config_.vector, a);
  if (!why.empty()) return Status::unsupported(why);
  if (a.path == Path::empty) return Status::ok();

  const LoadedModule& m = *current_;
  const DriverApi& d = driver();
  if (Status c = make_current(m); !c.is_ok()) return c;
  CUresult r = CUDA_SUCCESS;

  const Generated& g = m.gen;
  const std::int64_t unroll = g.unroll, block = g.block;
  int k = LoadedModule::strided;
  std::int64_t work = a.n;  // threads wanted if each did one unrolled iteration
  if (a.path == Path::vector) {
    k = a.alias ? LoadedModule::vec_alias : LoadedModule::vec;
    const std::int64_t nvec = (a.n - a.head) / g.vec_width;
    work = std::max<std::int64_t>(1, (nvec + unroll - 1) / unroll);
  } else if (a.path == Path::scalar) {
    k = a.alias ? LoadedModule::scalar_alias : LoadedModule::scalar;
    work = (a.n + unroll - 1) / unroll;
  }
  std::int64_t blocks = (work + block - 1) / block;
  if (config_.waves > 0)
    blocks =
        std::min<std::int64_t>(blocks, std::int64_t{m.sms} * m.blocks_per_sm[k] * config_.waves);
  blocks = std::clamp<std::int64_t>(blocks, 1, 0x7fffffff);

  const int ni = static_cast<int>(inputs.size());
  const void* in_ptrs[kMaxInputs];
  void* params[kMaxInputs + 4];
  for (int i = 0; i < ni; ++i) {
    in_ptrs[i] = inputs[i].data;
    params[i] = &in_ptrs[i];
  }
  void* out_ptr = outputs[0].data;
  long long n = a.n, head = a.head;
  int rank = a.rank;
  params[ni] = &out_ptr;
  params[ni + 1] = &n;
  if (a.path == Path::vector) params[ni + 2] = &head;
  if (a.path == Path::strided) {
    params[ni + 2] = &rank;
    params[ni + 3] = &a.layout;
  }
  r = d.launch_kernel(m.fn[k], static_cast<unsigned>(blocks), 1, 1, static_cast<unsigned>(block), 1,
                      1, 0, static_cast<CUstream>(stream), params, nullptr);
  return launch_error(r);
}

// The launch row_grid gives: a block per row, a thread per row (the column kernel) or one row
// over the grid (split).
Status NvrtcArm::run_rows(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
                          void* stream) {
  Status s = check_shaped_contract(*spec_, inputs, outputs, Device::cuda);
  if (!s.is_ok()) return s;
  RowLayout L;
  if (std::string why = plan_rows(*spec_, row_plan_, inputs, outputs, L); !why.empty())
    return Status::unsupported(why);
  if (L.rows == 0) return Status::ok();
  const LoadedModule& m = *current_;
  if (Status c = make_current(m); !c.is_ok()) return c;
  const RowGrid grid =
      row_grid(row_plan_, L, m.sms, m.blocks_per_sm[LoadedModule::rows], config_.waves);

  const int ni = row_plan_.num_inputs, nt = ni + row_plan_.num_outputs;
  const void* ptrs[kMaxRowTensors];
  void* params[kMaxRowTensors + 3];
  void* count = partials_;
  void* partials = partials_ ? static_cast<char*>(partials_) + kCountBytes : nullptr;
  for (int t = 0; t < nt; ++t) {
    ptrs[t] = t < ni ? inputs[static_cast<std::size_t>(t)].data
                     : outputs[static_cast<std::size_t>(t - ni)].data;
    params[t] = &ptrs[t];
  }
  params[nt] = &L;
  params[nt + 1] = &partials;  // read by the kernels with partials alone (row_lower.hpp)
  params[nt + 2] = &count;
  const CUresult r = driver().launch_kernel(
      m.fn[LoadedModule::rows], static_cast<unsigned>(grid.blocks), 1, 1,
      static_cast<unsigned>(grid.block), 1, 1, 0, static_cast<CUstream>(stream), params, nullptr);
  return launch_error(r);
}

std::vector<Artifact> NvrtcArm::artifacts() const {
  std::vector<Artifact> out;
  try {
    if (current_ == nullptr) return out;
    const LoadedModule& m = *current_;
    const Compiled& c = *m.compiled;
    std::string flags;
    for (const auto& o : c.options) flags += o + "\n";
    out.push_back({"source", "kernel.cu", m.gen.source});
    out.push_back({"ptx", "kernel.ptx", c.ptx});
    if (!c.cubin.empty()) out.push_back({"cubin", "kernel.cubin", c.cubin});
    out.push_back({"ptxas", "ptxas.txt", c.ptxas});
    out.push_back({"flags", "nvrtc_flags.txt", flags});
    out.push_back({"notes", "notes.txt", m.notes + last_plan_});
    out.push_back({"plan", m.gen.rows ? "row_plan.txt" : "precision_plan.txt", m.gen.plan});
  } catch (...) {  // out of memory copying artifacts: return what was gathered
  }
  return out;
}

}  // namespace kq::nvrtc
