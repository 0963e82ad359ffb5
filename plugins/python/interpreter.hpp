// The embedded CPython of the python plugin: started once per process, at the first use, and
// never finalized (finalizing after extension modules such as torch are loaded crashes). It
// installs no signal handlers: kq keeps its own. Every call into Python holds the GIL through
// pybind11::gil_scoped_acquire; between calls the GIL is free.
#pragma once

namespace kq::python {

// Starts the interpreter if it is not running. Throws std::runtime_error when it cannot start.
void ensure_interpreter();

}  // namespace kq::python
