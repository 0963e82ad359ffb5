#include "util/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace kq {
namespace {

// One EVP digest in progress; the context is freed on every path.
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) {
      throw std::runtime_error("sha256: cannot initialise the OpenSSL digest");
    }
  }
  void update(const void* data, std::size_t n) {
    if (n != 0 && EVP_DigestUpdate(ctx_.get(), data, n) != 1) {
      throw std::runtime_error("sha256: digest update failed");
    }
  }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), md.data(), &len) != 1) {
      throw std::runtime_error("sha256: digest final failed");
    }
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * len);
    for (unsigned int i = 0; i < len; ++i) {
      out.push_back(kDigits[md[i] >> 4]);
      out.push_back(kDigits[md[i] & 0xF]);
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Sha256 d;
  d.update(bytes.data(), bytes.size());
  return d.hex();
}

std::string sha256_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("sha256: cannot open " + file.string());
  Sha256 d;
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    d.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw std::runtime_error("sha256: read error in " + file.string());
  return d.hex();
}

}  // namespace kq
