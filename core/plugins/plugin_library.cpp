#include "plugins/plugin_library.hpp"

#include <boost/dll/shared_library.hpp>
#include <exception>
#include <string_view>

#include "plugins/dlopen_error.hpp"
#include "plugins/one_line.hpp"

namespace kq {
namespace {

namespace dll = boost::dll;

constexpr const char* kAbiAlias = "kq_abi_version";
constexpr const char* kCreateAlias = "kq_create_arms";
constexpr const char* kProblemsAlias = "kq_load_problems";
constexpr const char* kEnvironmentAlias = "kq_plugin_environment";

// Boost 1.74 reports a failed dlopen as a system_error whose text embeds the loader's own:
//   "boost::dll::shared_library::load() failed (dlerror system message: <text>): <errno text>"
// dlerror() itself is already consumed by then, so the message is the only place it survives.
std::string dlerror_text_of(std::string_view what) {
  constexpr std::string_view kMarker = "dlerror system message: ";
  const auto at = what.find(kMarker);
  if (at == std::string_view::npos) return std::string(what);
  std::string_view text = what.substr(at + kMarker.size());
  // The text ends at the last ')': only ": <errno text>" (no parenthesis) follows it.
  if (auto close = text.rfind(')'); close != std::string_view::npos) text = text.substr(0, close);
  return std::string(text);
}

std::string missing_exports(bool has_abi, bool has_create) {
  std::string names;
  if (!has_abi) names = kAbiAlias;
  if (!has_create) names += names.empty() ? kCreateAlias : std::string(" or ") + kCreateAlias;
  return "does not export " + names + " (not a kq plugin?)";
}

}  // namespace

OpenedPlugin open_plugin_library(const std::filesystem::path& file) {
  auto lib = std::make_shared<dll::shared_library>();
  try {
    // rtld_now: an undefined symbol fails here, as one error line, instead of killing the process
    // at the first call into the plugin. rtld_local: two plugins may define the same symbols.
    lib->load(file, dll::load_mode::rtld_now | dll::load_mode::rtld_local);
  } catch (const dll::fs::system_error& e) {
    return {{}, describe_dlopen_error(dlerror_text_of(e.what()), file.string())};
  } catch (const std::exception& e) {
    return {{}, "cannot be loaded (" + one_line(e.what()) + ")"};
  }

  const bool has_abi = lib->has(kAbiAlias);
  const bool has_create = lib->has(kCreateAlias);
  if (!has_abi || !has_create) return {{}, missing_exports(has_abi, has_create)};

  OpenedPlugin out;
  // An alias is an exported pointer variable; get_alias reads the pointer it holds.
  out.library.abi_version = &lib->get_alias<std::uint32_t()>(kAbiAlias);
  out.library.create_arms = &lib->get_alias<void(ArmList&)>(kCreateAlias);
  if (lib->has(kProblemsAlias))
    out.library.load_problems = &lib->get_alias<void(LoadProblems&)>(kProblemsAlias);
  if (lib->has(kEnvironmentAlias))
    out.library.environment = &lib->get_alias<void(EnvironmentFacts&)>(kEnvironmentAlias);
  out.library.handle = std::move(lib);
  return out;
}

}  // namespace kq
