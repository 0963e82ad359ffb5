#include "interpreter.hpp"

#include <dlfcn.h>

#include <pybind11/embed.h>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

#include "../plugin_common/cache_root.hpp"

namespace kq::python {
namespace {

// The python3 the plugin was built against, or KQ_PYTHON (another of the same version: a venv).
const char* python_executable() {
  const char* env = std::getenv("KQ_PYTHON");
  return env && *env ? env : KQ_PYTHON_EXECUTABLE;
}

// Inductor's and Triton's compiled code under kq's cache folder ($KQ_CACHE_DIR, else
// $XDG_CACHE_HOME/kq, else $HOME/.cache/kq), shared by every worker and run: a second run, and
// every worker after the first, loads what the first compiled. Both key their entries on what
// they compile (the graph or the kernel's source, the versions, the options), so a changed arm
// never meets a stale entry. Where the user set either variable, that stands.
void share_compile_caches() {
  const std::string root = plugin::cache_root();
  if (root.empty()) return;
  setenv("TORCHINDUCTOR_CACHE_DIR", (root + "/inductor").c_str(), 0);
  setenv("TRITON_CACHE_DIR", (root + "/triton").c_str(), 0);
}

// A kq worker compiles a few small graphs. Inductor's default compiles them in a pool of
// subprocesses, one per core, each of which imports torch first: with several workers at once
// that costs more than it saves. Where the user set it, that stands.
void compile_in_process() { setenv("TORCHINDUCTOR_COMPILE_THREADS", "1", 0); }

// Before its first C++ kernel, Inductor proves each vector ISA the CPU's flags list by
// compiling a test and loading it in a fresh Python that imports torch, in every process: on the
// H200 host 24 to 31 s of torch.compile's first CPU call, warm cache or not. With this set it
// takes the ISA from the CPU's flags alone, which a compiler new enough for this torch builds.
// Where the user set it, that stands.
void trust_cpu_flags() { setenv("TORCHINDUCTOR_VEC_ISA_OK", "1", 0); }

void check(PyStatus s, const char* what) {
  if (PyStatus_Exception(s))
    throw std::runtime_error(std::string("cannot start Python (") + what +
                             "): " + (s.err_msg ? s.err_msg : "unknown error"));
}

}  // namespace

void ensure_interpreter() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The host opens this plugin RTLD_LOCAL, so libpython's symbols are not global: extension
    // modules (numpy, torch) that expect them would fail to load. Re-open it global first.
    if (!dlopen(KQ_PYTHON_LIBRARY, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD))
      dlopen(KQ_PYTHON_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    // Started as that python3 would start: its prefix, its venv's site-packages (pyvenv.cfg
    // beside it), and sys.executable naming it, for modules that start Python subprocesses
    // (Inductor's compile workers). No signal handlers: kq keeps its own.
    share_compile_caches();
    compile_in_process();
    trust_cpu_flags();
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    PyStatus s = PyConfig_SetBytesString(&config, &config.program_name, python_executable());
    if (!PyStatus_Exception(s)) s = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    check(s, python_executable());
    PyEval_SaveThread();  // the GIL is taken per call
  });
}

}  // namespace kq::python
