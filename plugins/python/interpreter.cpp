#include "interpreter.hpp"

#include <dlfcn.h>

#include <pybind11/embed.h>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace kq::python {
namespace {

// The python3 the plugin was built against, or KQ_PYTHON (another of the same version: a venv).
const char* python_executable() {
  const char* env = std::getenv("KQ_PYTHON");
  return env && *env ? env : KQ_PYTHON_EXECUTABLE;
}

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
