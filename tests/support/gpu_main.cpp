// The main of the gpu-labelled tests: without a usable CUDA device it prints why and exits 77,
// which ctest reports as skipped (SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "device/memory.hpp"

int main(int argc, char** argv) {
  std::string why;
  if (!kq::cuda_usable(&why)) {
    std::printf("skipped: %s\n", why.c_str());
    return 77;
  }
  return doctest::Context(argc, argv).run();
}
