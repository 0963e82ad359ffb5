// A CUDA toolkit library loaded with dlopen when first needed (CUPTI, cuBLASLt): kq starts, and
// times everything else, where it is absent. Its entry points are resolved by name; the first
// required one missing (or the library itself) is named in missing().
#pragma once
#include <dlfcn.h>

#include <initializer_list>
#include <string>
#include <type_traits>

namespace kq {

class ToolkitLibrary {
 public:
  // `what` names it in messages ("CUPTI"); `files` are tried in order.
  ToolkitLibrary(const char* what, std::initializer_list<const char*> files) : what_(what) {
    for (const char* f : files)
      if (handle_ == nullptr) handle_ = dlopen(f, RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* e = dlerror();
      missing_ = what_ + " not found (" + (e ? e : *files.begin()) + ")";
    }
  }

  // `fn` <- the symbol `name`; where it is absent, missing() names it (the first one only).
  template <class F>
  void require(F& fn, const char* name) {
    optional(fn, name);
    if (!fn && missing_.empty()) missing_ = what_ + " lacks " + name;
  }
  // `fn` <- the symbol `name`, or nullptr: the caller does without it.
  template <class F>
  void optional(F& fn, const char* name) {
    fn = handle_ ? reinterpret_cast<std::remove_reference_t<F>>(dlsym(handle_, name)) : nullptr;
  }

  // "" when the library and every required entry point were found.
  const std::string& missing() const { return missing_; }

 private:
  std::string what_;
  void* handle_ = nullptr;
  std::string missing_;
};

}  // namespace kq
