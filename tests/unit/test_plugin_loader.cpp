// Plugin discovery and loading: the good test plugin loads and runs; each bad one costs exactly
// one LoadError line naming what went wrong, and never the other arms. The plugins are built by
// tests/plugins/CMakeLists.txt into KQ_TEST_PLUGIN_DIR.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kq/abi.hpp"
#include "plugins/dlopen_error.hpp"
#include "plugins/loader.hpp"
#include "plugins/one_line.hpp"
#include "rundir/manifest.hpp"

namespace fs = std::filesystem;
using kq::PluginSearch;
using kq::PluginSet;

namespace {

const fs::path kPluginDir = KQ_TEST_PLUGIN_DIR;
const fs::path kGoodDir = kPluginDir / "good";
const fs::path kOtherDir = kPluginDir / "other";
const fs::path kAllDir = kPluginDir / "all";
const fs::path kGood = kGoodDir / "libkq_test_good.so";
const fs::path kOther = kOtherDir / "libkq_test_other.so";

fs::path bad(const std::string& name) { return kAllDir / ("libkq_test_" + name + ".so"); }

PluginSet load_files(const std::vector<fs::path>& files) {
  PluginSearch search;
  search.files = files;
  return load_plugins(search);
}

PluginSet load_dirs(const std::vector<fs::path>& dirs) {
  PluginSearch search;
  search.dirs = dirs;
  return load_plugins(search);
}

std::vector<std::string> arm_names(const PluginSet& set) {
  std::vector<std::string> names;
  for (const auto& a : set.arms) names.push_back(a.identity.name);
  return names;
}

// All errors as "file: message" lines, for failure output.
std::string errors_text(const PluginSet& set) {
  std::string out;
  for (const auto& e : set.errors) out += e.file.string() + ": " + e.message + "\n";
  return out.empty() ? "(no errors)" : out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Sets or unsets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh folder under the test plugin folder, removed afterwards.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(kPluginDir / ("scratch_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Whether the shared object at `file` is loaded in this process right now.
bool is_loaded(const fs::path& file) {
  void* h = dlopen(fs::canonical(file).c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h != nullptr) dlclose(h);
  return h != nullptr;
}

kq::OpSpec copy_spec() {
  kq::OpSpec spec;
  spec.op = "copy";
  spec.dtype = kq::DType::f32;
  spec.inputs = {"x"};
  spec.outputs = {{"out", {}}};
  return spec;
}

}  // namespace

TEST_CASE("the good plugin gives its two arms with their identities") {
  const PluginSet set = load_files({kGood});
  INFO(errors_text(set));
  CHECK(set.errors.empty());
  REQUIRE(arm_names(set) == std::vector<std::string>{"test_copy", "test_negate"});
  for (const auto& a : set.arms) {
    CHECK(a.library != nullptr);
    CHECK(a.arm != nullptr);
    CHECK(a.plugin_file == kGood);
    CHECK(a.identity.family == "test");
    CHECK(a.identity.device == kq::Device::cpu);
    CHECK(a.identity.version == "1.2.3");
    CHECK(a.identity.compile_flags == "test-flags");
    REQUIRE(a.identity.sources.size() == 1);
    CHECK(a.identity.sources[0].path == "tests/plugins/test_arm.hpp");
    CHECK(a.identity.expected_rejection.empty());
  }
  // Both arms share the one library handle.
  CHECK(set.arms[0].library == set.arms[1].library);
}

TEST_CASE("a plugin whose load leaves a thread running is named; the others are not") {
  const fs::path threaded = kPluginDir / "threaded" / "libkq_test_starts_thread.so";
  {
    const PluginSet set = load_files({kGood, threaded});
    INFO(errors_text(set));
    REQUIRE(arm_names(set) ==
            std::vector<std::string>{"test_copy", "test_negate", "test_threaded"});
    CHECK(set.arms[0].load_threads.empty());
    CHECK(set.arms[1].load_threads.empty());
    CHECK(set.arms[2].load_threads.find("1 thread(s) still running (") == 0);
  }
  // The plugin keeps itself loaded: its thread wakes after kq unloaded it, and runs on.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
}

TEST_CASE("what a plugin could not load of its own is listed with the load errors, arms kept") {
  const fs::path file = kPluginDir / "problems" / "libkq_test_load_problems.so";
  const PluginSet set = load_files({file});
  CHECK(arm_names(set) == std::vector<std::string>{"test_triple"});
  REQUIRE(set.errors.size() == 2);
  CHECK(set.errors[0].file == "arms/first.py");
  CHECK(set.errors[0].message == "cannot import: line 3: SyntaxError: expected ':'");
  CHECK(set.errors[1].file == "arms/second.py");
  CHECK(set.errors[1].message.find('\n') == std::string::npos);  // one line
}

TEST_CASE("what a plugin reports of its environment is kept, by plugin, one line per value") {
  const fs::path file = kPluginDir / "problems" / "libkq_test_load_problems.so";
  const PluginSet set = load_files({file, kGood});
  REQUIRE(set.environments.size() == 1);  // the good plugin reports none
  const kq::PluginEnvironment& env = set.environments[0];
  CHECK(env.file == file);
  REQUIRE(env.facts.size() == 3);
  CHECK(env.facts[0].key == "python");
  CHECK(env.facts[0].value == "3.12.3 (main, test build)");
  CHECK(env.facts[1].key == "torch");
  CHECK(env.facts[1].value == "absent");
  CHECK(env.facts[2].value == "two lines");

  // The manifest keeps it under the plugin's file name, for the plugins whose arms run.
  std::vector<kq::StageArm> arms;
  for (const auto& a : set.arms) arms.push_back({a.identity, a.plugin_file});
  const nlohmann::json j = kq::plugin_environment_json(set.environments, arms);
  CHECK(j == nlohmann::json{{"libkq_test_load_problems.so",
                             {{"python", "3.12.3 (main, test build)"},
                              {"torch", "absent"},
                              {"note", "two lines"}}}});
  arms.erase(std::remove_if(arms.begin(), arms.end(),
                            [](const kq::StageArm& a) { return a.identity.name == "test_triple"; }),
             arms.end());
  CHECK(kq::plugin_environment_json(set.environments, arms).empty());
}

TEST_CASE("a loaded arm can be called: supports, prepare, run") {
  const PluginSet set = load_files({kGood});
  REQUIRE(arm_names(set) == std::vector<std::string>{"test_copy", "test_negate"});
  const kq::OpSpec spec = copy_spec();
  kq::OpSpec f64_spec = spec;
  f64_spec.dtype = kq::DType::f64;

  const std::map<std::string, float> scale{{"test_copy", 1.0f}, {"test_negate", -1.0f}};
  for (const auto& a : set.arms) {
    CAPTURE(a.identity.name);
    CHECK(a.arm->supports(spec).is_ok());
    const kq::Status refused = a.arm->supports(f64_spec);
    CHECK(refused.is_unsupported());
    CHECK(refused.message() == "f32 only");

    std::vector<float> in{1.5f, -2.0f, 0.0f, 7.25f};
    std::vector<float> out(in.size(), 99.0f);
    const auto n = static_cast<std::int64_t>(in.size());
    const kq::TensorView x =
        kq::TensorView::contiguous_1d(in.data(), n, kq::DType::f32, kq::Device::cpu);
    const kq::TensorView y =
        kq::TensorView::contiguous_1d(out.data(), n, kq::DType::f32, kq::Device::cpu);
    CHECK(a.arm->prepare(kq::Problem{&spec, {x}, {y}}).is_ok());
    const std::vector<kq::TensorView> inputs{x}, outputs{y};
    REQUIRE(a.arm->run(inputs, outputs, nullptr).is_ok());
    for (std::size_t i = 0; i < in.size(); ++i) CHECK(out[i] == scale.at(a.identity.name) * in[i]);
  }
}

TEST_CASE("each bad plugin gives exactly one error line with the expected words") {
  struct Case {
    std::string plugin;
    std::vector<std::string> phrases;
    std::vector<std::string> arms;  // arms the file still gives
  };
  const std::string abi = std::to_string(kq::kAbiVersion);
  const std::vector<Case> cases{
      {"not_elf", {"not a shared object (", "invalid ELF header"}, {}},
      {"no_exports", {"does not export kq_abi_version or kq_create_arms (not a kq plugin?)"}, {}},
      {"no_abi_export", {"does not export kq_abi_version (not a kq plugin?)"}, {}},
      {"abi_mismatch",
       {"ABI version 999, this kq expects " + abi + "; rebuild the plugin against this plugin-api"},
       {}},
      {"missing_dep",
       {"needs libkq_missing_dep.so, which was not found (cannot open shared object file); install "
        "it or add its folder to LD_LIBRARY_PATH"},
       {}},
      {"undefined_symbol",
       {"has an undefined symbol: kq_test_never_defined(int) [_Z21kq_test_never_definedi]"},
       {}},
      {"create_throws", {"kq_create_arms threw: boom"}, {}},
      {"throws_int", {"kq_create_arms threw a non-standard exception"}, {}},
      {"no_arms", {"exports no arms"}, {}},
      {"identity_throws",
       {"arm #1 of 2: identity() threw: no identity here; refused"},
       {"test_identity_survivor"}},
      {"empty_name", {"arm #1 of 1 has an empty name; refused"}, {}},
      {"null_arm", {"arm #1 of 1 is null; refused"}, {}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.plugin);
    REQUIRE(fs::exists(bad(c.plugin)));
    const PluginSet set = load_files({bad(c.plugin)});
    INFO(errors_text(set));
    REQUIRE(set.errors.size() == 1);
    const kq::LoadError& e = set.errors[0];
    CHECK(e.file == bad(c.plugin));
    CHECK_FALSE(contains(e.message, "\n"));
    for (const auto& phrase : c.phrases) CHECK(contains(e.message, phrase));
    CHECK(arm_names(set) == c.arms);
  }
}

TEST_CASE("the missing dependency is really missing, not just misnamed") {
  // Guards the test itself: the plugin must name the library, and the library must exist where
  // the loader cannot see it.
  CHECK(fs::exists(kPluginDir / "unreachable" / "libkq_missing_dep.so"));
  const char* ld = std::getenv("LD_LIBRARY_PATH");
  CHECK_FALSE(contains(ld ? ld : "", "unreachable"));
}

TEST_CASE("an arm name already taken is refused, naming both plugin files") {
  const PluginSet set = load_files({kGood, bad("taken_name")});
  INFO(errors_text(set));
  CHECK(arm_names(set) ==
        std::vector<std::string>{"test_copy", "test_negate", "test_taken_name_own"});
  REQUIRE(set.errors.size() == 1);
  CHECK(set.errors[0].file == bad("taken_name"));
  CHECK(set.errors[0].message == "arm 'test_copy' is already provided by " + kGood.string() +
                                     "; the one in " + bad("taken_name").string() + " is refused");
  // The first one keeps the name.
  CHECK(set.arms[0].plugin_file == kGood);
}

TEST_CASE("a folder with the good plugin and every bad one still gives the good arms") {
  const PluginSet set = load_dirs({kAllDir});
  INFO(errors_text(set));
  CHECK(arm_names(set) == std::vector<std::string>{"test_copy", "test_identity_survivor",
                                                   "test_negate", "test_taken_name_own"});
  const std::set<fs::path> expected_bad{
      bad("abi_mismatch"),    bad("create_throws"), bad("empty_name"), bad("identity_throws"),
      bad("missing_dep"),     bad("no_abi_export"), bad("no_arms"),    bad("no_exports"),
      bad("not_elf"),         bad("null_arm"),      bad("taken_name"), bad("throws_int"),
      bad("undefined_symbol")};
  std::multiset<fs::path> error_files;
  for (const auto& e : set.errors) {
    error_files.insert(e.file);
    CHECK_FALSE(contains(e.message, "\n"));
    CHECK_FALSE(e.message.empty());
  }
  CHECK(error_files.size() == expected_bad.size());
  CHECK(std::set<fs::path>(error_files.begin(), error_files.end()) == expected_bad);
  CHECK(set.searched == std::vector<fs::path>{kAllDir});
  // Every arm of the good plugin comes from the copy in this folder.
  for (const auto& a : set.arms) {
    if (a.identity.name == "test_copy" || a.identity.name == "test_negate") {
      CHECK(a.plugin_file == kAllDir / "libkq_test_good.so");
    }
  }
}

TEST_CASE("missing folders and files") {
  const fs::path nowhere = kPluginDir / "no_such_folder";
  SUBCASE("a folder the user named is one error") {
    const PluginSet set = load_dirs({nowhere, kGoodDir});
    REQUIRE(set.errors.size() == 1);
    CHECK(set.errors[0].file == nowhere);
    CHECK(set.errors[0].message == "plugin folder does not exist");
    CHECK(arm_names(set) == std::vector<std::string>{"test_copy", "test_negate"});
    CHECK(set.searched == std::vector<fs::path>{nowhere, kGoodDir});
  }
  SUBCASE("the default folder may be absent") {
    PluginSearch search;
    search.dirs = {nowhere};
    search.may_be_absent = {nowhere};
    const PluginSet set = load_plugins(search);
    CHECK(set.errors.empty());
    CHECK(set.arms.empty());
    CHECK(set.searched == std::vector<fs::path>{nowhere});
  }
  SUBCASE("an explicit file that does not exist, or is a folder") {
    const PluginSet set = load_files({nowhere / "libx.so", kGoodDir, kGood});
    INFO(errors_text(set));
    REQUIRE(set.errors.size() == 2);
    CHECK(set.errors[0].message == "no such plugin file");
    CHECK(contains(set.errors[1].message, "is a folder, not a plugin file"));
    CHECK(arm_names(set) == std::vector<std::string>{"test_copy", "test_negate"});
  }
  SUBCASE("a file named as a folder") {
    const PluginSet set = load_dirs({kGood});
    REQUIRE(set.errors.size() == 1);
    CHECK(contains(set.errors[0].message, "is not a folder"));
  }
}

TEST_CASE("default_plugin_search") {
  const fs::path exe = "/opt/kq/bin";
  SUBCASE("the folder beside the binary by default; it may be absent") {
    ScopedEnv env("KQ_PLUGIN_PATH", std::nullopt);
    const PluginSearch s = kq::default_plugin_search(exe, {}, {});
    CHECK(s.dirs == std::vector<fs::path>{exe / "plugins"});
    CHECK(s.may_be_absent == std::vector<fs::path>{exe / "plugins"});
    CHECK(s.files.empty());
  }
  SUBCASE("--plugin-dir replaces the default folder, and must exist") {
    ScopedEnv env("KQ_PLUGIN_PATH", std::nullopt);
    const PluginSearch s = kq::default_plugin_search(exe, {"/a", "/b"}, {});
    CHECK(s.dirs == std::vector<fs::path>{"/a", "/b"});
    CHECK(s.may_be_absent.empty());
  }
  SUBCASE("KQ_PLUGIN_PATH follows, empty entries ignored; --plugin files last") {
    ScopedEnv env("KQ_PLUGIN_PATH", ":/p1::/p2:");
    const PluginSearch s = kq::default_plugin_search(exe, {}, {"/f/libx.so"});
    CHECK(s.dirs == std::vector<fs::path>{exe / "plugins", "/p1", "/p2"});
    CHECK(s.may_be_absent == std::vector<fs::path>{exe / "plugins"});
    CHECK(s.files == std::vector<fs::path>{"/f/libx.so"});
  }
  SUBCASE("an empty KQ_PLUGIN_PATH adds nothing") {
    ScopedEnv env("KQ_PLUGIN_PATH", "");
    CHECK(kq::default_plugin_search(exe, {}, {}).dirs.size() == 1);
  }
}

TEST_CASE("the command line search, end to end") {
  // A fake install: <exe>/plugins holds a link to the other plugin.
  ScratchDir exe("exe");
  fs::create_directories(exe.path() / "plugins");
  fs::create_symlink(kOther, exe.path() / "plugins" / "libkq_test_other.so");

  SUBCASE("default folder plus KQ_PLUGIN_PATH") {
    ScopedEnv env("KQ_PLUGIN_PATH", kGoodDir.string());
    const PluginSet set = load_plugins(kq::default_plugin_search(exe.path(), {}, {}));
    INFO(errors_text(set));
    CHECK(set.errors.empty());
    CHECK(arm_names(set) == std::vector<std::string>{"test_copy", "test_double", "test_negate"});
    CHECK(set.searched == std::vector<fs::path>{exe.path() / "plugins", kGoodDir});
  }
  SUBCASE("--plugin-dir: the default folder is not read") {
    ScopedEnv env("KQ_PLUGIN_PATH", std::nullopt);
    const PluginSet set = load_plugins(kq::default_plugin_search(exe.path(), {kGoodDir}, {}));
    CHECK(set.errors.empty());
    CHECK(arm_names(set) == std::vector<std::string>{"test_copy", "test_negate"});
    CHECK(set.searched == std::vector<fs::path>{kGoodDir});
  }
  SUBCASE("a KQ_PLUGIN_PATH entry that does not exist is one error") {
    const fs::path nowhere = exe.path() / "nowhere";
    ScopedEnv env("KQ_PLUGIN_PATH", nowhere.string() + ":" + kGoodDir.string());
    const PluginSet set = load_plugins(kq::default_plugin_search(exe.path(), {}, {}));
    REQUIRE(set.errors.size() == 1);
    CHECK(set.errors[0].file == nowhere);
    CHECK(arm_names(set) == std::vector<std::string>{"test_copy", "test_double", "test_negate"});
  }
  SUBCASE("an absent default folder is no error") {
    ScopedEnv env("KQ_PLUGIN_PATH", std::nullopt);
    const PluginSet set =
        load_plugins(kq::default_plugin_search(exe.path() / "elsewhere", {}, {kGood}));
    CHECK(set.errors.empty());
    CHECK(arm_names(set) == std::vector<std::string>{"test_copy", "test_negate"});
  }
}

TEST_CASE("the same file reached twice loads once") {
  ScratchDir links("links");
  fs::create_symlink(kGood, links.path() / "libalias.so");
  PluginSearch search;
  search.dirs = {kGoodDir, kGoodDir, links.path()};
  search.files = {kGood, links.path() / "libalias.so",
                  kGoodDir / ".." / "good" / "libkq_test_good.so"};
  const PluginSet set = load_plugins(search);
  INFO(errors_text(set));
  CHECK(set.errors.empty());
  CHECK(arm_names(set) == std::vector<std::string>{"test_copy", "test_negate"});
  CHECK(set.searched == std::vector<fs::path>{kGoodDir, links.path()});
}

TEST_CASE("destroying the set unloads the plugin, and it loads again") {
  REQUIRE_FALSE(is_loaded(kOther));
  {
    const PluginSet set = load_files({kOther});
    REQUIRE(arm_names(set) == std::vector<std::string>{"test_double"});
    CHECK(is_loaded(kOther));
  }
  CHECK_FALSE(is_loaded(kOther));

  // Arms outlive a moved-from set; the library lives as long as any arm.
  std::vector<kq::LoadedArm> kept;
  {
    PluginSet set = load_files({kOther});
    kept = std::move(set.arms);
  }
  CHECK(is_loaded(kOther));
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].arm->supports(copy_spec()).is_ok());
  kept.clear();
  CHECK_FALSE(is_loaded(kOther));
}

TEST_CASE("dlerror texts become one actionable line") {
  using kq::describe_dlopen_error;
  CHECK(describe_dlopen_error(
            "libcudnn.so.9: cannot open shared object file: No such file or directory",
            "/p/libx.so") ==
        "needs libcudnn.so.9, which was not found (cannot open shared object file); install it or "
        "add its folder to LD_LIBRARY_PATH");
  CHECK(describe_dlopen_error("/p/libx.so: invalid ELF header", "/p/libx.so") ==
        "not a shared object (invalid ELF header)");
  CHECK(describe_dlopen_error("/p/libx.so: file too short", "/p/libx.so") ==
        "not a shared object (file too short)");
  CHECK(describe_dlopen_error("/p/libx.so: wrong ELF class: ELFCLASS32", "/p/libx.so") ==
        "a shared object built for another platform (wrong ELF class: ELFCLASS32)");
  CHECK(contains(
      describe_dlopen_error("/p/libx.so: undefined symbol: cudnnCreate, version libcudnn.so.9",
                            "/p/libx.so"),
      "has an undefined symbol: cudnnCreate (version libcudnn.so.9)"));
  CHECK(
      describe_dlopen_error("/p/libx.so: cannot open shared object file: No such file or directory",
                            "/p/libx.so") ==
      "no such file (/p/libx.so: cannot open shared object file: No such file or directory)");
  CHECK(
      describe_dlopen_error("/lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by "
                            "/p/libx.so)",
                            "/p/libx.so") ==
      "cannot be loaded (/lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by "
      "/p/libx.so))");
}

TEST_CASE("one_line") {
  CHECK(kq::one_line("a\nb\r\n  c\t") == "a b c");
  CHECK(kq::one_line(std::string(2000, 'x')).size() == 1003);
}
