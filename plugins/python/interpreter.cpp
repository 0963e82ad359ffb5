#include "interpreter.hpp"

#include <dlfcn.h>

#include <pybind11/embed.h>
#include <mutex>
#include <stdexcept>

namespace kq::python {

void ensure_interpreter() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The host opens this plugin RTLD_LOCAL, so libpython's symbols are not global: extension
    // modules (numpy, torch) that expect them would fail to load. Re-open it global first.
    if (!dlopen(KQ_PYTHON_LIBRARY, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD))
      dlopen(KQ_PYTHON_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    pybind11::initialize_interpreter(/*init_signal_handlers=*/false);
    PyEval_SaveThread();  // the GIL is taken per call
  });
}

}  // namespace kq::python
