#include "plugins/dlopen_error.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "plugins/one_line.hpp"

namespace kq {
namespace {

constexpr std::string_view kCannotOpen = ": cannot open shared object file";
constexpr std::string_view kUndefined = "undefined symbol: ";

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// "libfoo.so.1: cannot open shared object file: No such file or directory" names the library
// that could not be found; the plugin file itself was checked to exist before dlopen, so a name
// here is always a dependency (possibly an indirect one).
std::string missing_dependency(std::string_view text, std::size_t at) {
  std::string_view name = text.substr(0, at);
  // Defensive: keep only the last "a: b" component, should glibc ever prefix the message.
  if (auto colon = name.rfind(": "); colon != std::string_view::npos) name = name.substr(colon + 2);
  std::string_view why = text.substr(at + kCannotOpen.size());
  if (why.starts_with(": ")) why.remove_prefix(2);
  if (why.empty() || why == "No such file or directory") {
    return "needs " + std::string(name) +
           ", which was not found (cannot open shared object file); install it or add its "
           "folder to LD_LIBRARY_PATH";
  }
  return "needs " + std::string(name) + ", which could not be opened (" + std::string(why) + ")";
}

// "/p/libx.so: undefined symbol: _Z3fooi" or "...: undefined symbol: foo, version V_1".
std::string undefined_symbol(std::string_view text, std::size_t at) {
  std::string_view symbol = text.substr(at + kUndefined.size());
  std::string_view version;
  if (auto comma = symbol.find(", version "); comma != std::string_view::npos) {
    version = symbol.substr(comma + 2);
    symbol = symbol.substr(0, comma);
  }
  const std::string raw(symbol);
  const std::string readable = demangle_symbol(raw);
  std::string out = "has an undefined symbol: " + readable;
  if (readable != raw) out += " [" + raw + "]";
  if (!version.empty()) out += " (" + std::string(version) + ")";
  // Caught at load because the loader asks for immediate binding (RTLD_NOW); found lazily it
  // would kill the worker on the first call instead.
  out +=
      "; link the plugin against the library that defines it, or install a version of that "
      "library that does";
  return out;
}

bool is_not_elf(std::string_view reason) {
  return contains(reason, "invalid ELF header") || contains(reason, "file too short") ||
         contains(reason, "only ET_DYN and ET_EXEC") || contains(reason, "not an ELF");
}

bool is_foreign_elf(std::string_view reason) {
  return contains(reason, "wrong ELF class") || contains(reason, "ELF file") ||
         contains(reason, "machine");
}

}  // namespace

std::string demangle_symbol(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

std::string describe_dlopen_error(std::string_view dlerror_text, std::string_view loaded_path) {
  const std::string text = one_line(dlerror_text);
  const std::string_view view = text;

  if (auto at = view.find(kCannotOpen); at != std::string_view::npos) {
    // The plugin itself vanished between the scan and dlopen: not a dependency problem.
    if (view.substr(0, at) == loaded_path) return "no such file (" + text + ")";
    return missing_dependency(view, at);
  }
  if (auto at = view.find(kUndefined); at != std::string_view::npos) {
    return undefined_symbol(view, at);
  }

  // "<object>: <reason>": when <object> is the plugin, drop it (the error line names the file).
  std::string_view reason = view;
  const bool about_plugin = !loaded_path.empty() && view.starts_with(loaded_path) &&
                            view.substr(loaded_path.size()).starts_with(": ");
  if (about_plugin) reason.remove_prefix(loaded_path.size() + 2);

  if (about_plugin && is_not_elf(reason)) {
    return "not a shared object (" + std::string(reason) + ")";
  }
  if (about_plugin && is_foreign_elf(reason)) {
    return "a shared object built for another platform (" + std::string(reason) + ")";
  }
  if (!about_plugin && (is_not_elf(reason) || is_foreign_elf(reason))) {
    return "a library it needs cannot be loaded (" + std::string(reason) + ")";
  }
  return "cannot be loaded (" + std::string(reason) + ")";
}

}  // namespace kq
