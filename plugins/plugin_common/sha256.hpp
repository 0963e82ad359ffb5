// SHA-256 through OpenSSL's EVP interface, for the plugins (they see plugin-api only, so this is
// theirs, beside core's): nvrtc_jit keys its compile cache on it (a cache keyed by a weak hash
// could hand back another program's cubin), python hashes its arm files.
#pragma once
#include <memory>
#include <string>
#include <string_view>

namespace kq::plugin {

// An incremental digest: update() any number of times, then hex() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  std::string hex();  // finishes the digest; the object is spent afterwards

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

std::string sha256_hex(std::string_view bytes);

}  // namespace kq::plugin
