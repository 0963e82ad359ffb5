// libFuzzer target over the spec loader and the expression parser: fuzz_checks.hpp says what
// counts as a finding besides crashes, sanitizer reports, hangs and memory over -rss_limit_mb.
// tools/fuzz.sh builds and runs it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (auto bad = kq::fuzz::check_input(text)) {
    std::fprintf(stderr, "fuzz_spec finding: %s\n", bad->c_str());
    std::abort();
  }
  return 0;
}
