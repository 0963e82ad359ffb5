// A compact SHA-256 (FIPS 180-4) for the compile cache key. Plugins may use only the standard
// library and CUDA, and a cache keyed by a weak hash could hand back another program's cubin.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace kq::nvrtc {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  std::string hex();  // finishes the digest; the object is spent afterwards

 private:
  void block(const unsigned char* p);
  std::uint32_t h_[8];
  unsigned char buf_[64];
  std::uint64_t len_ = 0;  // bytes hashed so far
  std::size_t fill_ = 0;   // bytes waiting in buf_
};

std::string sha256_hex(std::string_view bytes);

}  // namespace kq::nvrtc
