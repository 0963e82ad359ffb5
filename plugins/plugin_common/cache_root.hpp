// kq's cache folder, for the plugins (they see plugin-api only): $KQ_CACHE_DIR, else
// $XDG_CACHE_HOME/kq, else $HOME/.cache/kq; empty when none of them is set. The python plugin
// puts Inductor's and Triton's caches under it, cudnn_graph its plan memo. (nvrtc_jit's cache
// predates it and keeps its own layout: $KQ_CACHE_DIR itself, else .../kq/nvrtc.)
#pragma once
#include <cstdlib>
#include <string>

namespace kq::plugin {

inline std::string cache_root() {
  if (const char* k = std::getenv("KQ_CACHE_DIR"); k && *k) return k;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kq";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kq";
  return {};
}

}  // namespace kq::plugin
