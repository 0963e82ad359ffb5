// Which shipped specs the CUDA product arms take, checked without a GPU (supports() reads the
// spec alone): cublaslt every product of kq/matmul_form.hpp but gelu's, cuda_mma_matmul the
// 16-bit ones. Their values are the GPU's to check (tools/gpu_check.sh, runs/reference).
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "kq/plugin_api.hpp"
#include "spec/spec.hpp"

namespace {

namespace fs = std::filesystem;

kq::ArmList load_arms(const fs::path& path) {
  kq::ArmList a;
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: the arms live in it
  REQUIRE_MESSAGE(h != nullptr, "dlopen " << path << ": " << dlerror());
  if (void* sym = dlsym(h, "kq_create_arms"))
    reinterpret_cast<void (*)(kq::ArmList&)> (*static_cast<const void* const*>(sym))(a);
  return a;
}

// The specs of `dirs` (from the source root) the arm takes, by path.
std::set<std::string> taken(const kq::IKernelArm& arm) {
  std::set<std::string> out;
  for (const char* dir : {"specs", "specs/gemm", "specs/kernelbench", "tests/data/specs_v2"})
    for (const auto& e : fs::directory_iterator(fs::path(KQ_SOURCE_DIR) / dir))
      if (e.path().extension() == ".yaml" && arm.supports(kq::load_spec(e.path()).op).is_ok())
        out.insert(std::string(dir) + "/" + e.path().filename().string());
  return out;
}

// The plugin's only arm, or nullptr (with a message) where this build has no CUDA.
kq::ArmList plugin(const char* file) {
  const fs::path path = fs::path(KQ_BIN_DIR) / "plugins" / file;
  if (!fs::exists(path)) {
    MESSAGE("skipped: " << path << " is not built (no CUDA in this build)");
    return {};
  }
  return load_arms(path);
}

}  // namespace

TEST_CASE("cuda_mma_matmul takes the f16 and bf16 products computed in f32") {
  const kq::ArmList arms = plugin("libkq_cuda_matmul.so");
  if (arms.empty()) return;
  REQUIRE(arms.size() == 1);
  CHECK(arms[0]->identity().name == "cuda_mma_matmul");
  CHECK(taken(*arms[0]) == std::set<std::string>{"specs/gemm/linear_bias_bf16.yaml",
                                                 "specs/gemm/linear_gelu_bf16.yaml",
                                                 "specs/gemm/matmul_bf16.yaml"});
}

TEST_CASE("cublaslt takes every product but gelu's and the masked or diagonal ones") {
  const kq::ArmList arms = plugin("libkq_cublaslt.so");
  if (arms.empty()) return;
  REQUIRE(arms.size() == 1);
  const std::set<std::string> got = taken(*arms[0]);
  std::set<std::string> want = {"specs/gemm/linear_bias_bf16.yaml", "specs/gemm/matmul_bf16.yaml"};
  for (const auto& e : fs::directory_iterator(fs::path(KQ_SOURCE_DIR) / "specs/kernelbench")) {
    const std::string f = e.path().filename().string();
    const int n = std::atoi(f.c_str());
    if (n >= 1 && n <= 18 && n != 5 && n != 12 && n != 14 && n != 15)
      want.insert("specs/kernelbench/" + f);
  }
  CHECK(want.size() == 16);
  for (const std::string& s : got) CHECK_MESSAGE(want.count(s) == 1, "takes " << s);
  for (const std::string& s : want) CHECK_MESSAGE(got.count(s) == 1, "declines " << s);
}
