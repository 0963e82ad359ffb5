// Turning the dynamic loader's error text into one line that says what to do about it. Kept apart
// from the loading itself so the wording can be tested on known glibc texts without a bad library.
#pragma once
#include <string>
#include <string_view>

namespace kq {

// `dlerror_text` is what dlerror() said when `loaded_path` (the exact path handed to dlopen)
// failed to load. glibc writes "<object>: <reason>", where <object> is the plugin itself or one of
// the libraries it needs. Returns, for instance:
//   not a shared object (invalid ELF header)
//   needs libcudnn.so.9, which was not found (cannot open shared object file); install it or add
//     its folder to LD_LIBRARY_PATH                                           [one line in fact]
//   has an undefined symbol: foo(int) [_Z3fooi]; ...
std::string describe_dlopen_error(std::string_view dlerror_text, std::string_view loaded_path);

// The demangled form of a C++ symbol, or the symbol itself when it is not a mangled name.
std::string demangle_symbol(const std::string& symbol);

}  // namespace kq
