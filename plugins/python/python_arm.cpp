#include "python_arm.hpp"

#include <cstdint>
#include <cstdio>

#include "kq_module.hpp"

namespace py = pybind11;

namespace kq::python {

Status status_of(py::error_already_set& e, const std::string& arm, const char* method) {
  if (e.matches(kq_module().attr("Unsupported"))) return Status::unsupported(py::str(e.value()));
  const std::string trace = py::str(py::str("").attr("join")(
      py::module_::import("traceback").attr("format_exception")(e.type(), e.value(), e.trace())));
  std::fprintf(stderr, "kq python: %s.%s raised:\n%s", arm.c_str(), method, trace.c_str());
  return Status::error(std::string(method) + " raised " +
                       std::string(py::str(e.type().attr("__name__"))) + ": " +
                       std::string(py::str(e.value())));
}

PythonArm::PythonArm(py::object instance, ArmIdentity identity)
    : GuardedArm(identity.device),
      instance_(std::make_unique<py::object>(instance)),
      calls_(std::make_unique<py::object>(kq_module().attr("_Calls")(instance))),
      identity_(std::move(identity)),
      checks_contract_(py::bool_(instance.attr("checks_contract"))) {}

PythonArm::~PythonArm() {
  py::gil_scoped_acquire gil;
  calls_.reset();
  instance_.reset();
}

Status PythonArm::on_supports(const OpSpec& spec) const {
  py::gil_scoped_acquire gil;
  try {
    py::object why = instance_->attr("supports")(spec_object(spec));
    if (why.is_none()) return Status::ok();
    return Status::unsupported(py::str(why));
  } catch (py::error_already_set& e) {
    return status_of(e, identity_.name, "supports");
  }
}

Status PythonArm::on_prepare(const Problem& p) {
  py::gil_scoped_acquire gil;
  try {
    py::dict d;
    d["spec"] = spec_object(spec());
    d["inputs"] = tensor_objects(p.inputs, true);
    d["outputs"] = tensor_objects(p.outputs, false);
    d["stream"] = reinterpret_cast<std::uintptr_t>(p.stream);
    calls_->attr("prepare")(py::module_::import("types").attr("SimpleNamespace")(**d),
                            reinterpret_cast<std::uintptr_t>(p.stream));
    return Status::ok();
  } catch (py::error_already_set& e) {
    return status_of(e, identity_.name, "prepare");
  }
}

Status PythonArm::on_run(std::span<const TensorView> in, std::span<const TensorView> out,
                         void* stream) {
  py::gil_scoped_acquire gil;
  try {
    calls_->attr("run")(tensor_objects(in, true), tensor_objects(out, false),
                        reinterpret_cast<std::uintptr_t>(stream));
    return Status::ok();
  } catch (py::error_already_set& e) {
    return status_of(e, identity_.name, "run");
  }
}

// The arm's artifacts(): (kind, filename, text or bytes) tuples. One that raises gives none, with
// its traceback in the log.
std::vector<Artifact> PythonArm::on_artifacts() const {
  py::gil_scoped_acquire gil;
  std::vector<Artifact> out;
  try {
    for (py::handle item : instance_->attr("artifacts")()) {
      py::tuple t = py::reinterpret_borrow<py::tuple>(item);
      py::object content = t[2];
      out.push_back({py::str(t[0]), py::str(t[1]),
                     py::isinstance<py::bytes>(content) ? std::string(py::bytes(content))
                                                        : std::string(py::str(content))});
    }
  } catch (py::error_already_set& e) {
    status_of(e, identity_.name, "artifacts");
    return {};
  }
  return out;
}

}  // namespace kq::python
