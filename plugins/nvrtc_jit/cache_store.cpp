#include "cache_store.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../plugin_common/sha256.hpp"

namespace kq::nvrtc {

using plugin::sha256_hex;
namespace {

constexpr const char* kMagic = "KQNVRTC1";  // bump when the layout changes

// Layout: magic; for arch, ptx, cubin, ptxas an 8-byte little-endian length and the bytes; then
// the hex SHA-256 of everything before it.
void put_blob(std::string& out, const std::string& b) {
  const std::uint64_t n = b.size();
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  out += b;
}

bool get_blob(const std::string& in, std::size_t& pos, std::string& b) {
  if (in.size() - pos < 8) return false;
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= std::uint64_t{static_cast<unsigned char>(in[pos + i])} << (8 * i);
  pos += 8;
  if (in.size() - pos < n) return false;
  b.assign(in, pos, n);
  pos += n;
  return true;
}

}  // namespace

std::string encode_entry(const CacheEntry& e) {
  std::string out = kMagic;
  put_blob(out, e.arch);
  put_blob(out, e.ptx);
  put_blob(out, e.cubin);
  put_blob(out, e.ptxas);
  out += sha256_hex(out);
  return out;
}

std::optional<CacheEntry> decode_entry(const std::string& in) {
  const std::size_t m = std::strlen(kMagic);
  if (in.size() < m + 64 || in.compare(0, m, kMagic) != 0) return std::nullopt;
  const std::string body = in.substr(0, in.size() - 64);
  if (sha256_hex(body) != in.substr(in.size() - 64)) return std::nullopt;
  CacheEntry e;
  std::size_t pos = m;
  if (!get_blob(body, pos, e.arch) || !get_blob(body, pos, e.ptx) ||
      !get_blob(body, pos, e.cubin) || !get_blob(body, pos, e.ptxas) || pos != body.size() ||
      e.ptx.empty())
    return std::nullopt;
  return e;
}

std::string cache_dir() {
  if (const char* d = std::getenv("KQ_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kq/nvrtc";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kq/nvrtc";
  return {};
}

std::string entry_path(const std::string& dir, const std::string& key) {
  return dir + "/" + key + ".kqc";
}

Load load_entry(const std::string& dir, const std::string& key, CacheEntry& e) {
  std::ifstream f(entry_path(dir, key), std::ios::binary);
  if (!f) return Load::absent;
  std::ostringstream ss;
  ss << f.rdbuf();
  auto d = decode_entry(ss.str());
  if (!d) return Load::corrupt;
  e = std::move(*d);
  return Load::hit;
}

std::string store_entry(const std::string& dir, const std::string& key, const CacheEntry& e) {
  static std::atomic<unsigned> counter{0};
  const std::string path = entry_path(dir, key);
  // Unique per process and call: concurrent writers of one key each rename a whole file.
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create " + dir + ": " + ec.message();
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    const std::string bytes = encode_entry(e);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) {
      std::filesystem::remove(tmp, ec);
      return "cannot write " + tmp;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = "cannot rename " + tmp + ": " + ec.message();
    std::filesystem::remove(tmp, ec);
    return why;
  }
  return {};
}

}  // namespace kq::nvrtc
