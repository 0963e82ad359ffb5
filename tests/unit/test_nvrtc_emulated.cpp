// nvrtc_jit's generated row and column kernels run on the host: the source generate_rows()
// writes is compiled by the host C++ compiler against tests/support/cuda_emulation.hpp (threads
// as std::threads, one block at a time) and run on small shapes whose rows end inside the
// four-position step and whose rows outnumber the grid (so the grid-stride loop turns), with
// padded rows, against the float64 reference (core/indexed/evaluate.hpp), the bytes past each
// output untouched. No GPU needed: the kernels' logic (offsets, strides, reductions and their
// combine across a block, argmax's first extreme, scans and their carries, the last block's
// combine of the blocks' partials) is checked in CI; tests/gpu/test_nvrtc_rows.cpp checks the
// same kernels on a device.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../../plugins/nvrtc_jit/codegen.cpp"
#include "../../plugins/nvrtc_jit/cuda_include.cpp"
#include "../../plugins/nvrtc_jit/row_codegen.cpp"
#include "../../plugins/nvrtc_jit/row_launch.cpp"
#include "../../plugins/nvrtc_jit/row_lower.cpp"
#include "indexed/evaluate.hpp"
#include "kq/half.hpp"
#include "row_cases.hpp"
#include "spec/spec.hpp"

namespace {

namespace fs = std::filesystem;
namespace nv = kq::nvrtc;
namespace rows = kq::test::rows;
using rows::dims_text;
using Draw = rows::Draw;

const fs::path kRoot = KQ_SOURCE_DIR;

struct Case {
  const char* spec;  // a path under the source tree, or a spec's text
  kq::ix::DimValues dims;
  bool padded;  // rows one element longer than they are (the innermost dim's neighbour)
  Draw draw = Draw::uniform;
  const char* positions = nullptr;  // the dim whose extent bounds i32 and i64 inputs' values
};

// Row kernels (a block per row: reductions combined across threads) and column kernels (a
// thread per row), each with rows that end inside a four-position step.
const Case kCases[] = {
    {"specs/softmax_bf16.yaml", {{"M", 3}, {"N", 4099}}, false},  // 512 threads, 2 steps + 3
    {"specs/softmax_bf16.yaml", {{"M", 5}, {"N", 37}}, true},     // 32 threads, no full step
    {"specs/layer_norm_bf16.yaml", {{"M", 4}, {"N", 1000}}, true},
    {"specs/kernelbench/24_log_softmax.yaml", {{"M", 3}, {"N", 2049}}, false},
    {"specs/kernelbench/19_relu.yaml", {{"M", 3}, {"N", 77}}, true},
    {"specs/kernelbench/25_swish.yaml", {{"M", 2}, {"N", 515}}, false},
    {"specs/kernelbench/38_l1_norm.yaml", {{"M", 3}, {"N", 130}}, false},
    {"specs/kernelbench/17_matmul_transposed_b.yaml", {{"M", 3}, {"N", 5}, {"K", 67}}, false},
    {"specs/kernelbench/47_sum_reduction.yaml", {{"B", 2}, {"N", 1027}, {"K", 333}}, false},
    {"specs/kernelbench/47_sum_reduction.yaml", {{"B", 3}, {"N", 2}, {"K", 7}}, true},
    {"specs/kernelbench/48_mean_reduction.yaml", {{"B", 2}, {"N", 9}, {"K", 300}}, true},
    {"specs/kernelbench/49_max_reduction.yaml", {{"B", 3}, {"N", 258}, {"K", 97}}, false},
    {"specs/kernelbench/51_argmax.yaml", {{"B", 2}, {"N", 301}, {"K", 129}}, true},
    {"specs/kernelbench/51_argmax.yaml", {{"B", 2}, {"N", 31}, {"K", 33}}, false, Draw::ties},
    {"specs/kernelbench/52_argmin.yaml", {{"B", 1}, {"N", 6}, {"K", 300}}, false},
    {"specs/kernelbench/52_argmin.yaml", {{"B", 3}, {"N", 17}, {"K", 20}}, true, Draw::ties},
    {"specs/kernelbench/49_max_reduction.yaml", {{"B", 2}, {"N", 9}, {"K", 40}}, false, Draw::ties},
    // argmax and argmin along the innermost extent (row kernel): each thread's first extreme,
    // then the block's; ties and NaNs (the first NaN final), rows inside one step and across
    // warps.
    {"tests/data/specs_v2/argmax.yaml", {{"M", 3}, {"N", 4099}}, false, Draw::ties},
    {"tests/data/specs_v2/argmax.yaml", {{"M", 8}, {"N", 37}}, true, Draw::ties_nan},
    {"tests/data/specs_v2/argmax.yaml", {{"M", 2}, {"N", 3001}}, false, Draw::ties_nan},
    {"kq_spec: 2\nop: row_argmin\ndims: {M: free, N: reduced}\n"
     "inputs: {x: {dtype: bf16, shape: [M, N]}}\noutputs: {i: {dtype: i32, shape: [M]}}\n"
     "semantics: |\n  i[m] = argmin(n, x[m, n])\ncompare: {i: bitwise}\n"
     "timing: {points: [{M: 4, N: 8}]}\ndecision: {baseline: cpu_tbb}\n",
     {{"M", 5}, {"N", 700}},
     true,
     Draw::ties_nan},
    {"specs/kernelbench/36_rms_norm.yaml", {{"B", 2}, {"C", 67}, {"H", 3}, {"W", 31}}, false},
    {"specs/kernelbench/16_matmul_transposed_a.yaml", {{"M", 4}, {"N", 70}, {"K", 45}}, false},
    // No free dim: the row over the grid, the last block combining (losses).
    {"specs/kernelbench/94_mse_loss.yaml", {{"M", 3}, {"N", 2000}}, false},  // 3 blocks
    {"specs/kernelbench/96_huber_loss.yaml", {{"M", 5}, {"N", 7}}, false},   // 1 block
    {"specs/kernelbench/98_kl_div_loss.yaml", {{"M", 2}, {"N", 3001}}, false, Draw::positive},
    // Reductions over the rows after those along them: each block's rows, then the last block.
    {"specs/kernelbench/99_triplet_margin_loss.yaml", {{"M", 7}, {"D", 300}}, true},
    {"specs/kernelbench/95_cross_entropy_loss.yaml",
     {{"M", 9}, {"N", 1000}},
     false,
     Draw::uniform,
     "N"},
    // Groups of reduced dims, collapsed into one row: (H, W), (C, H, W).
    {"specs/kernelbench/34_instance_norm.yaml", {{"B", 2}, {"C", 3}, {"H", 7}, {"W", 9}}, false},
    {"specs/kernelbench/34_instance_norm.yaml", {{"B", 1}, {"C", 2}, {"H", 33}, {"W", 65}}, false},
    {"specs/kernelbench/40_layer_norm.yaml", {{"B", 3}, {"C", 4}, {"H", 5}, {"W", 103}}, false},
    // R's dims decomposed one by one: batch norm's x[b, c, h, w] over (b, h, w), group norm's
    // weight [G, CG] of a norm over (CG, H, W), hinge's t[N] of a sum over (M, N).
    {"specs/kernelbench/33_batch_norm.yaml", {{"B", 3}, {"C", 4}, {"H", 5}, {"W", 7}}, false},
    {"specs/kernelbench/33_batch_norm.yaml", {{"B", 2}, {"C", 3}, {"H", 9}, {"W", 130}}, true},
    {"specs/kernelbench/35_group_norm.yaml",
     {{"B", 2}, {"G", 3}, {"CG", 4}, {"H", 5}, {"W", 33}},
     false},
    {"specs/kernelbench/100_hinge_loss.yaml", {{"M", 3}, {"N", 2001}}, false},
    // Scans in the row kernel: chunks of 4 positions a thread, a block scan, a running carry.
    {"specs/kernelbench/89_cumsum.yaml", {{"M", 3}, {"N", 4099}}, false},  // 2 chunks + 3
    {"specs/kernelbench/89_cumsum.yaml", {{"M", 2}, {"N", 5}}, true},
    {"specs/kernelbench/90_cumprod.yaml", {{"M", 2}, {"N", 4099}}, false, Draw::near_one},
    {"specs/kernelbench/90_cumprod.yaml", {{"M", 3}, {"N", 203}}, true, Draw::near_one},
    {"specs/kernelbench/91_cumsum_reverse.yaml", {{"M", 2}, {"N", 1500}}, true},
    {"specs/kernelbench/92_cumsum_exclusive.yaml", {{"M", 3}, {"N", 700}}, false},
    {"specs/kernelbench/93_masked_cumsum.yaml", {{"M", 2}, {"N", 999}}, false},
    {"tests/data/specs_v2/cumsum_reverse.yaml", {{"M", 3}, {"N", 130}}, true},
    // A scan in the column kernel: along N, the middle dim, backwards, the element left out.
    {"kq_spec: 2\nop: column_scan\ndims: {B: free, N: reduced, K: free}\n"
     "inputs: {x: {dtype: bf16, shape: [B, N, K]}}\noutputs: {y: {dtype: f32, shape: [B, N, K]}}\n"
     "semantics: |\n  y[b, n, k] = cumsum(n, x[b, n, k], exclusive, reverse)\n"
     "compare: {y: {bound: accumulation}}\ntiming: {points: [{B: 2, N: 4, K: 8}]}\n"
     "decision: {baseline: cpu_tbb}\n",
     {{"B", 2}, {"N", 37}, {"K", 300}},
     true},
};

kq::OpSpec load(const Case& c) {
  const std::string text = c.spec;
  return text.rfind("kq_spec:", 0) == 0 ? kq::parse_spec(text, "inline.yaml").op
                                        : kq::load_spec(kRoot / text).op;
}

constexpr std::size_t kPad = 64;  // guard bytes after each tensor's last element
constexpr unsigned char kGuard = 0xAB;

const char* host_type(kq::DType t) {
  switch (t) {
    case kq::DType::f16:
      return "__half";
    case kq::DType::bf16:
      return "__nv_bfloat16";
    case kq::DType::i32:
      return "int";
    case kq::DType::i64:
      return "long long";
    case kq::DType::boolean:
      return "unsigned char";
    default:
      return "float";
  }
}

// The generated source of case `i`, its includes dropped (the emulation defines the half
// types) and its kernel in a namespace of its own; then an extern "C" entry that launches it.
std::string case_source(int i, const kq::OpSpec& spec, const nv::RowPlan& plan) {
  std::string kept;
  std::istringstream in(nv::generate_rows(spec, plan).source);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#include <cuda_", 0) == 0) continue;
    if (line.rfind("extern \"C\" ", 0) == 0) line = line.substr(11);
    kept += line + "\n";
  }
  const std::string ns = "kq_ns" + std::to_string(i);
  std::string args;
  const kq::ix::Program& p = *spec.program;
  for (int slot = 0; slot < plan.num_inputs + plan.num_outputs; ++slot)
    for (std::size_t t = 0; t < p.decls.tensors.size(); ++t)
      if (plan.tensors[t].slot == slot)
        args += std::string(slot < plan.num_inputs ? "(const " : "(") +
                host_type(p.decls.tensors[t].dtype) + "*)p[" + std::to_string(slot) + "], ";
  const std::string nt = std::to_string(plan.num_inputs + plan.num_outputs);
  const std::string scratch = plan.split || !plan.over_rows.empty()
                                  ? ", (float*)p[" + nt + "], (unsigned*)p[" + nt + " + 1]"
                                  : "";
  return "namespace " + ns + " {\n" + kept + "}  // namespace " + ns +
         "\n\nextern \"C\" void kq_case" + std::to_string(i) +
         "(void* const* p, const void* layout, unsigned blocks, unsigned block) {\n  " + ns +
         "::kq_rows_layout L;\n  std::memcpy(&L, layout, sizeof L);\n"
         "  kq_emu::launch(blocks, block, [&] { " +
         ns + "::kq_rows(" + args + "L" + scratch + "); });\n}\n\n";
}

struct Library {
  void* handle = nullptr;
  std::string log;
  ~Library() {
    if (handle) dlclose(handle);
  }
};

// Every case's kernel in one shared object, built by the host compiler.
void build(const std::string& source, Library& lib) {
  char tmpl[] = "/tmp/kq_emulated_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const fs::path dir = tmpl, cpp = dir / "kernels.cpp", so = dir / "kernels.so",
                 log = dir / "build.log";
  std::ofstream(cpp) << source;
  const std::string cmd = std::string(KQ_HOST_CXX) +
                          " -std=c++20 -O1 -fPIC -shared -pthread -ffp-contract=off"
                          " -Wno-unknown-pragmas -include \"" +
                          (kRoot / "tests/support/cuda_emulation.hpp").string() + "\" -o \"" +
                          so.string() + "\" \"" + cpp.string() + "\" > \"" + log.string() +
                          "\" 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream l(log);
  lib.log.assign(std::istreambuf_iterator<char>(l), {});
  INFO(cmd, "\n", lib.log);
  REQUIRE(rc == 0);
  lib.handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(lib.handle != nullptr, dlerror());
  fs::remove_all(dir);
}

struct HostTensor {
  kq::TensorView view;
  std::vector<unsigned char> bytes;  // from the first element to past the last, then kPad
};

void make(HostTensor& t, kq::DType dtype, const std::vector<std::int64_t>& shape, bool padded) {
  t.view.dtype = dtype;
  t.view.device = kq::Device::cuda;
  t.view.rank = static_cast<int>(shape.size());
  std::int64_t stride = 1, span = 1;
  for (int i = t.view.rank - 1; i >= 0; --i) {
    t.view.shape[i] = shape[static_cast<std::size_t>(i)];
    t.view.strides[i] = stride;
    span += (shape[static_cast<std::size_t>(i)] - 1) * stride;
    stride *= shape[static_cast<std::size_t>(i)] + (padded && i == t.view.rank - 1);
  }
  t.bytes.assign(static_cast<std::size_t>(span) * kq::dtype_size(dtype) + kPad, kGuard);
  t.view.data = t.bytes.data();
}

std::int64_t byte_offset(const HostTensor& t, std::int64_t i) {
  std::int64_t off = 0;
  for (int d = t.view.rank - 1; d >= 0; --d) {
    off += (i % t.view.shape[d]) * t.view.strides[d];
    i /= t.view.shape[d];
  }
  return off * static_cast<std::int64_t>(kq::dtype_size(t.view.dtype));
}

using Entry = void (*)(void* const*, const void*, unsigned, unsigned);

void run_case(Entry entry, const Case& c, const kq::OpSpec& spec, const nv::RowPlan& plan) {
  const kq::ix::Program& p = *spec.program;
  std::mt19937_64 rng(std::hash<std::string>{}(c.spec + dims_text(c.dims)));
  kq::ix::Tensors host_in;
  std::vector<HostTensor> in(spec.inputs.size()), out(spec.outputs.size());
  std::vector<const kq::ix::TensorDecl*> out_decls;
  std::vector<int> out_positions;
  std::size_t ni = 0, no = 0;
  for (const kq::ix::TensorDecl& d : p.decls.tensors) {
    if (d.role == kq::ix::Role::temporary) continue;
    const auto shape = rows::shape_of(d, c.dims);
    const bool padded = c.padded && shape.size() > 1;
    if (d.role == kq::ix::Role::input) {
      std::vector<double> v(static_cast<std::size_t>(kq::ix::numel_of(shape)));
      const std::int64_t positions = c.positions ? c.dims.at(c.positions) : 0;
      for (double& x : v) x = rows::draw(c.draw, d.dtype, rng, positions);
      kq::ix::Buffer b = kq::ix::Buffer::of(d.dtype, shape, v);
      make(in[ni], d.dtype, shape, padded);
      const std::size_t es = kq::dtype_size(d.dtype);
      for (std::int64_t i = 0; i < b.numel(); ++i)
        std::memcpy(in[ni].bytes.data() + byte_offset(in[ni], i), b.bytes.data() + i * es, es);
      host_in.emplace(d.name, std::move(b));
      ++ni;
    } else {
      make(out[no++], d.dtype, shape, padded);
      out_decls.push_back(&d);
      out_positions.push_back(static_cast<int>(&d - p.decls.tensors.data()));
    }
  }
  const kq::ix::Evaluation want = kq::ix::evaluate_with_bounds(p, c.dims, host_in, out_positions);

  std::vector<kq::TensorView> in_views, out_views;
  std::vector<void*> ptrs;
  for (HostTensor& t : in) {
    in_views.push_back(t.view);
    ptrs.push_back(t.view.data);
  }
  for (HostTensor& t : out) {
    out_views.push_back(t.view);
    ptrs.push_back(t.view.data);
  }
  // The blocks' partials and count of a split plan or of reductions over the rows (nvrtc_arm.cpp
  // keeps them on the device).
  std::vector<float> partials(static_cast<std::size_t>(64 * nv::max_grid_blocks(plan, 3, 1, 1)));
  unsigned count = 0;
  ptrs.push_back(partials.data());
  ptrs.push_back(&count);
  nv::RowLayout L;
  REQUIRE(nv::plan_rows(spec, plan, in_views, out_views, L).empty());
  // Three SMs holding one block each, one wave: rows beyond the grid loop round; a split plan
  // spreads its row over up to three blocks.
  const nv::RowGrid grid = nv::row_grid(plan, L, 3, 1, 1);
  entry(ptrs.data(), &L, static_cast<unsigned>(grid.blocks), static_cast<unsigned>(grid.block));
  CHECK(count == 0);  // the last block sets it back for the next launch

  for (std::size_t o = 0; o < out.size(); ++o) {
    const kq::ix::Buffer& w = want.outputs.at(out_decls[o]->name);
    const kq::ix::Buffer& bound = want.bounds.at(out_decls[o]->name);
    const kq::DType t = out[o].view.dtype;
    const std::size_t es = kq::dtype_size(t);
    const bool exact = rows::exact(c.spec, t);
    int bad = 0;
    std::vector<bool> touched(out[o].bytes.size(), false);
    for (std::int64_t i = 0; i < w.numel(); ++i) {
      const std::int64_t at = byte_offset(out[o], i);
      for (std::size_t k = 0; k < es; ++k) touched[static_cast<std::size_t>(at) + k] = true;
      const double got = kq::load_as_double(t, out[o].bytes.data() + at), exp = w.get(i);
      if (!rows::close_enough(got, exp, bound.get(i), t, exact) && bad++ < 5)
        FAIL_CHECK(std::string(c.spec)
                   << dims_text(c.dims) << std::string(c.padded ? " padded" : "") << " output "
                   << out_decls[o]->name << "[" << i << "]: got " << got << ", want " << exp);
    }
    CHECK(bad == 0);
    int overwritten = 0;
    for (std::size_t b = 0; b < out[o].bytes.size(); ++b)
      if (!touched[b] && out[o].bytes[b] != kGuard) ++overwritten;
    CHECK_MESSAGE(overwritten == 0, std::string(c.spec) << ": bytes outside output "
                                                        << out_decls[o]->name << " written");
  }
}

}  // namespace

TEST_CASE("nvrtc rows, emulated on the host: row and column kernels against the reference") {
  std::vector<kq::OpSpec> specs;
  std::vector<nv::RowPlan> plans;
  std::string source;
  for (const Case& c : kCases) {
    specs.push_back(load(c));
    plans.emplace_back();
    REQUIRE_MESSAGE(nv::lower_rows(specs.back(), plans.back()).empty(), std::string(c.spec));
    source += case_source(static_cast<int>(specs.size() - 1), specs.back(), plans.back());
  }
  Library lib;
  build(source, lib);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const Case& c = kCases[i];
    const std::string where = c.spec + dims_text(c.dims) + (c.padded ? " padded" : "") +
                              (c.draw == Draw::ties ? " ties" : "");
    INFO(where);
    const std::string sym = "kq_case" + std::to_string(i);
    auto entry = reinterpret_cast<Entry>(dlsym(lib.handle, sym.c_str()));
    const bool found = entry != nullptr;
    REQUIRE_MESSAGE(found, sym);
    run_case(entry, c, specs[i], plans[i]);
  }
}
