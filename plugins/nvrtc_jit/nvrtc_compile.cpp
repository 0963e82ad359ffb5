#include "nvrtc_compile.hpp"

#include <nvrtc.h>

#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>

#include "../plugin_common/sha256.hpp"
#include "cache_store.hpp"

namespace kq::nvrtc {

using plugin::Sha256;
namespace {

constexpr const char* kKeySalt = "kq nvrtc_jit cache v1";

std::string nvrtc_version_string() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + nvrtcGetErrorString(r));
}

std::string program_log(nvrtcProgram p) {
  std::size_t n = 0;
  if (nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n == 0) return {};
  std::string log(n, '\0');
  if (nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// Compiles with NVRTC; fills arch, ptx, cubin (for an sm_ target) and the log.
void run_nvrtc(const std::string& source, const std::string& name,
               const std::vector<std::string>& opts, CacheEntry& e) {
  nvrtcProgram prog = nullptr;
  check(nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { nvrtcDestroyProgram(p); }
  } destroy{&prog};
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  e.ptxas = program_log(prog);
  if (r != NVRTC_SUCCESS)
    throw std::runtime_error(std::string("NVRTC compile failed (") + nvrtcGetErrorString(r) +
                             "):\n" + e.ptxas);
  std::size_t n = 0;
  check(nvrtcGetPTXSize(prog, &n), "nvrtcGetPTXSize");
  e.ptx.assign(n, '\0');
  check(nvrtcGetPTX(prog, e.ptx.data()), "nvrtcGetPTX");
  while (!e.ptx.empty() && e.ptx.back() == '\0') e.ptx.pop_back();
  if (e.arch.rfind("sm_", 0) == 0) {
    check(nvrtcGetCUBINSize(prog, &n), "nvrtcGetCUBINSize");
    e.cubin.assign(n, '\0');
    check(nvrtcGetCUBIN(prog, e.cubin.data()), "nvrtcGetCUBIN");
  }
}

std::mutex g_mutex;
std::map<std::string, std::shared_ptr<const Compiled>>& memory_cache() {
  // Never destroyed: arms may be released after this library's static destructors ran.
  static auto* m = new std::map<std::string, std::shared_ptr<const Compiled>>();
  return *m;
}

}  // namespace

std::vector<std::string> nvrtc_options(int major, int minor, std::string& arch) {
  int count = 0;
  check(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (count > 0) check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  const int want = major * 10 + minor;
  bool exact = false;
  int best = -1;
  for (int a : archs) {
    exact = exact || a == want;
    if (a <= want && a > best) best = a;
  }
  if (best < 0)
    throw std::runtime_error("NVRTC " + nvrtc_version_string() + " supports no target for sm_" +
                             std::to_string(want));
  // The device's own architecture gives the cubin and the PTX in one compile. A device newer
  // than this NVRTC gets PTX for the newest target NVRTC knows, which the driver JIT-compiles.
  arch = exact ? "sm_" + std::to_string(want) : "compute_" + std::to_string(best);
  return {
      "--gpu-architecture=" + arch,
      "-std=c++17",
      "-default-device",
      "--fmad=false",  // no contraction: each + - * is its own IEEE rounding
      "-ftz=false",    // subnormals kept (never fast math)
      "-prec-div=true",
      "-prec-sqrt=true",
      "-lineinfo",  // line tables for profilers; no effect on the code
      "--ptxas-options=-v",
  };
}

CompileOutcome compile(const std::string& source, const std::string& name, int major, int minor,
                       const std::string& include_dir) {
  CompileOutcome out;
  std::string arch;
  std::vector<std::string> opts = nvrtc_options(major, minor, arch);
  if (!include_dir.empty()) opts.push_back("--include-path=" + include_dir);
  const std::string version = nvrtc_version_string();
  Sha256 h;  // everything the output depends on, each part NUL-separated
  for (const std::string& part : {std::string(kKeySalt), version}) {
    h.update(part);
    h.update(std::string_view("\0", 1));
  }
  for (const auto& o : opts) {
    h.update(o);
    h.update(std::string_view("\0", 1));
  }
  h.update(source);
  const std::string key = h.hex();

  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = memory_cache().find(key);
    if (it != memory_cache().end()) {
      out.compiled = it->second;
      out.cache = "memory";
      return out;
    }
  }

  auto c = std::make_shared<Compiled>();
  c->key = key;
  c->options = opts;
  c->nvrtc_version = version;
  CacheEntry e;
  const std::string dir = cache_dir();
  Load loaded = Load::absent;
  if (dir.empty()) {
    out.cache_note = "no cache folder (set KQ_CACHE_DIR, XDG_CACHE_HOME or HOME)";
  } else {
    loaded = load_entry(dir, key, e);
    if (loaded == Load::hit && e.arch != arch) loaded = Load::corrupt;
    if (loaded == Load::corrupt) {
      out.cache_note = "ignored a corrupt entry " + entry_path(dir, key) + " and rebuilt it";
      e = CacheEntry{};
    }
  }
  if (loaded == Load::hit) {
    out.cache = "disk";
    out.cache_path = entry_path(dir, key);
  } else {
    out.cache = "miss";
    e.arch = arch;
    const auto t0 = std::chrono::steady_clock::now();
    run_nvrtc(source, name, opts, e);
    out.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!dir.empty()) {
      std::string why = store_entry(dir, key, e);  // best effort: a failure costs a recompile
      if (why.empty())
        out.cache_path = entry_path(dir, key);
      else
        out.cache_note += (out.cache_note.empty() ? "" : "; ") + why;
    }
  }
  c->arch = std::move(e.arch);
  c->ptx = std::move(e.ptx);
  c->cubin = std::move(e.cubin);
  c->ptxas = std::move(e.ptxas);

  std::lock_guard<std::mutex> lock(g_mutex);
  out.compiled = memory_cache().emplace(key, std::move(c)).first->second;
  return out;
}

}  // namespace kq::nvrtc
