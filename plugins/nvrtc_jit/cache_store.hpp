// The on-disk half of the NVRTC cache: one file per key holding the compiled module, written to
// a temporary name and renamed into place (readers never see half a file), with a checksum so
// that a truncated or corrupt entry reads as absent. Pure standard library: unit-tested alone.
#pragma once
#include <optional>
#include <string>

namespace kq::nvrtc {

struct CacheEntry {
  std::string arch;  // what it was compiled for, e.g. "sm_90"
  std::string ptx;
  std::string cubin;
  std::string ptxas;  // the compile log
};

std::string encode_entry(const CacheEntry& e);
// nullopt for anything but an intact entry.
std::optional<CacheEntry> decode_entry(const std::string& bytes);

// The folder: $KQ_CACHE_DIR, else $XDG_CACHE_HOME/kq/nvrtc, else $HOME/.cache/kq/nvrtc; empty
// when none of them is set.
std::string cache_dir();

enum class Load { hit, absent, corrupt };
// Reads dir/key.kqc into `e`.
Load load_entry(const std::string& dir, const std::string& key, CacheEntry& e);
// Writes dir/key.kqc (creating dir); returns an empty string or why it could not.
std::string store_entry(const std::string& dir, const std::string& key, const CacheEntry& e);

std::string entry_path(const std::string& dir, const std::string& key);

}  // namespace kq::nvrtc
