// The python plugin's arms: every kq.Arm subclass and every function decorated with @kq.arm
// defined in a .py file of the shipped folder (python-arms/ beside this plugin once installed,
// else plugins/python/arms/ in the source tree), then of each folder in KQ_PYTHON_ARMS
// (separated by ':'), files in name order; files named _*.py are helper modules the others
// import. A file that cannot be imported (a malformed @kq.arm(...) among the reasons) is a load
// problem (kq_load_problems: kq list and the run's report name it, with its line and
// exception); the other files' arms load.
#include <dlfcn.h>

#include <pybind11/embed.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "interpreter.hpp"
#include "kq/build_info.hpp"
#include "kq/export.hpp"
#include "kq_module.hpp"
#include "python_arm.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace kq::python {
namespace {

// The file's SHA-256, by Python's hashlib (the GIL is held): the plugin needs no crypto library.
std::string sha256_of(const fs::path& file) {
  py::object data = py::module_::import("pathlib").attr("Path")(file.string()).attr("read_bytes")();
  return py::str(py::module_::import("hashlib").attr("sha256")(data).attr("hexdigest")());
}

// The shipped arms' folder: python-arms/ beside this plugin once installed, else the source's.
fs::path shipped_folder() {
  Dl_info info{};
  fs::path installed;
  if (dladdr(reinterpret_cast<void*>(&sha256_of), &info) && info.dli_fname)
    installed = fs::path(info.dli_fname).parent_path() / "python-arms";
  return fs::is_directory(installed) ? installed : fs::path(KQ_PYTHON_SOURCE_ARMS);
}

std::vector<fs::path> arm_folders() {
  std::vector<fs::path> dirs = {shipped_folder()};
  if (const char* extra = std::getenv("KQ_PYTHON_ARMS")) {
    std::stringstream list(extra);
    std::string d;
    while (std::getline(list, d, ':'))
      if (!d.empty()) dirs.emplace_back(d);
  }
  return dirs;
}

// What could not be loaded, for kq_load_problems: each file that failed, line and exception.
LoadProblems& problems() {
  static LoadProblems p;
  return p;
}

// "line N: Type: message" of the exception an import raised (no line when none is known).
std::string import_failure(py::error_already_set& e, const fs::path& file) {
  std::string line;  // a syntax error's line, else the file's deepest frame in the traceback
  if (e.matches(PyExc_SyntaxError)) {
    line = py::str(e.value().attr("lineno"));
  } else if (py::object tb = e.trace(); !tb.is_none()) {
    for (py::handle t = tb; !t.is_none(); t = t.attr("tb_next"))
      if (std::string(py::str(t.attr("tb_frame").attr("f_code").attr("co_filename"))) ==
          file.string())
        line = py::str(t.attr("tb_lineno"));
  }
  return (line.empty() ? "" : "line " + line + ": ") +
         std::string(py::str(e.type().attr("__name__"))) + ": " + std::string(py::str(e.value()));
}

// A file as the identity names it: a shipped one (plugins/python/arms/) as the repository
// names it, another by its full path.
std::string source_name(const fs::path& file, bool shipped) {
  return shipped ? "plugins/python/arms/" + file.filename().string() : file.string();
}

// The same, with its SHA-256.
SourceFile source_of(const fs::path& file, bool shipped) {
  return {source_name(file, shipped), sha256_of(file)};
}

// KQ_ARM_FILES, set by a kq worker for the arms it holds (kq/arm.hpp): the arm files to import,
// one a line, named as source_name names them. Unset: every file.
std::optional<std::set<std::string>> wanted_files() {
  const char* v = std::getenv("KQ_ARM_FILES");
  if (v == nullptr) return std::nullopt;
  std::set<std::string> names;
  std::stringstream list(v);
  for (std::string line; std::getline(list, line);)
    if (!line.empty()) names.insert(line);
  return names;
}

// `files`: the arm's file, then the helper modules of its folder.
ArmIdentity identity_of(const py::object& arm, const fs::path& file,
                        const std::vector<SourceFile>& files) {
  const std::string name = py::str(arm.attr("name")), device = py::str(arm.attr("device"));
  if (device != "cpu" && device != "cuda")
    throw std::runtime_error(file.string() + ": " + name + ".device must be \"cpu\" or \"cuda\"");
  // The plugin's own sources, then the arm's file.
  ArmIdentity id =
      build::identity(name, py::str(arm.attr("family")),
                      device == "cuda" ? Device::cuda : Device::cpu, py::str(arm.attr("version")));
  id.sources.insert(id.sources.end(), files.begin(), files.end());
  id.compile_flags +=
      " | Python " + std::string(py::str(py::module_::import("sys").attr("version")));
  id.expected_rejection = py::str(arm.attr("expected_rejection"));
  return id;
}

// What importing `file` (just done) changed in torch, triton, numpy or kq, put back since, and
// the threads it started (kq._tampering, kq_api.py): empty, or one sentence for the file's arms'
// identities.
std::string tampering_by(const fs::path& file) {
  const py::list changes = kq_module().attr("_tampering")();
  std::string changed, threads;  // threads cannot be put back
  for (py::handle c : changes) {
    const std::string line = py::str(c);
    std::string& into = line.rfind("thread ", 0) == 0 ? threads : changed;
    into += (into.empty() ? "" : "; ") + line;
  }
  const std::string importing = "importing " + file.filename().string();
  std::string s;
  if (!changed.empty())
    s = importing + " changed what every arm shares: " + changed + " (put back for the other arms)";
  if (!threads.empty())
    s += (s.empty() ? importing : std::string(", and it")) + " started " + threads;
  return s;
}

// The arms one file defines, as kq._arms_in finds them (kq_api.py): its kq.Arm subclasses that
// have a name (one without is a base of the others) and its @kq.arm functions, not those it
// imports. `helpers`: its folder's helper modules.
void load_file(const fs::path& file, bool shipped, const std::vector<SourceFile>& helpers,
               ArmList& out) {
  const std::string module = "kq_arm_" + file.stem().string();
  py::module_ util = py::module_::import("importlib.util");
  py::object spec = util.attr("spec_from_file_location")(module, file.string());
  py::object mod = util.attr("module_from_spec")(spec);
  spec.attr("loader").attr("exec_module")(mod);
  const std::string tampering = tampering_by(file);
  std::vector<SourceFile> files = {source_of(file, shipped)};
  files.insert(files.end(), helpers.begin(), helpers.end());
  const py::list arms = kq_module().attr("_arms_in")(mod);
  for (py::handle h : arms) {
    py::object arm = py::reinterpret_borrow<py::object>(h);
    ArmIdentity id = identity_of(arm, file, files);
    id.origin = files.front().path;
    id.tampering = tampering;
    out.push_back(std::make_unique<PythonArm>(arm, std::move(id)));
  }
}

void make_arms(ArmList& out) {
  problems().clear();
  ensure_interpreter();
  py::gil_scoped_acquire gil;
  kq_module().attr("_watch")();  // torch, triton, numpy and kq recorded as first seen whole
  const std::vector<fs::path> folders = arm_folders();  // the shipped one first
  const std::optional<std::set<std::string>> wanted = wanted_files();
  py::list path = py::module_::import("sys").attr("path");
  for (const fs::path& dir : folders) {
    if (!fs::is_directory(dir)) continue;
    const bool shipped = dir == folders.front();
    // Files named _*.py are helper modules, which the folder's arm files import by name (the
    // folder is on sys.path); their hashes are in each of the folder's arms' identity.
    std::vector<fs::path> files;
    std::vector<SourceFile> helpers;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".py") continue;
      if (e.path().filename().string().front() == '_')
        helpers.push_back(source_of(e.path(), shipped));
      else
        files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    std::sort(helpers.begin(), helpers.end(),
              [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
    path.append(dir.string());
    for (const fs::path& f : files) {
      if (wanted && !wanted->contains(source_name(f, shipped))) continue;
      try {
        load_file(f, shipped, helpers, out);
      } catch (py::error_already_set& e) {
        problems().push_back({f.string(), "cannot import: " + import_failure(e, f)});
      } catch (const std::exception& e) {
        problems().push_back({f.string(), std::string("cannot load: ") + e.what()});
      }
    }
  }
}

}  // namespace
}  // namespace kq::python

KQ_EXPORT_ARMS(kq::python::make_arms)
KQ_EXPORT_LOAD_PROBLEMS([](kq::LoadProblems& out) { out = kq::python::problems(); })

// What the plugin runs on, for the run's manifest and kq list (kq_plugin_environment): the
// interpreter's version (its first line) and executable, and the installed torch and Triton
// versions, read from their metadata without importing them ("absent" when not installed).
namespace kq::python {
namespace {

void environment(EnvironmentFacts& out) {
  try {
    ensure_interpreter();
    py::gil_scoped_acquire gil;
    py::module_ sys = py::module_::import("sys");
    const std::string version = py::str(sys.attr("version"));
    out.push_back({"python", version.substr(0, version.find('\n'))});
    out.push_back({"python_executable", py::str(sys.attr("executable"))});
    py::module_ metadata = py::module_::import("importlib.metadata");
    for (const char* package : {"torch", "triton"}) {
      std::string v;
      try {
        v = py::str(metadata.attr("version")(package));
      } catch (py::error_already_set& e) {
        if (!e.matches(metadata.attr("PackageNotFoundError"))) throw;
        v = "absent";
      }
      out.push_back({package, v});
    }
  } catch (const std::exception& e) {  // nothing is thrown across the plugin boundary
    out.push_back({"error", e.what()});
  }
}

}  // namespace
}  // namespace kq::python

KQ_EXPORT_ENVIRONMENT(kq::python::environment)
