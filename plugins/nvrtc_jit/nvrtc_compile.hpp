// NVRTC compilation of a generated module for one device, with a cache keyed by the SHA-256 of
// (source, options, NVRTC version): in memory for the process, and on disk under
// $KQ_CACHE_DIR, else $XDG_CACHE_HOME/kq/nvrtc, else ~/.cache/kq/nvrtc. Disk entries are written
// to a temporary file and renamed into place, and carry their own checksum: a truncated or
// corrupt entry is ignored and rebuilt. The cache is best effort: a read-only disk costs a
// compile, never a failure.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace kq::nvrtc {

struct Compiled {
  std::string key;   // hex SHA-256 of what the result depends on
  std::string arch;  // "sm_90" (cubin and PTX), or "compute_XY" (PTX only, JIT by the driver)
  std::string ptx;
  std::string cubin;  // empty when arch is compute_XY
  std::string ptxas;  // NVRTC's log: ptxas -v resource usage per kernel
  std::vector<std::string> options;
  std::string nvrtc_version;
};

struct CompileOutcome {
  std::shared_ptr<const Compiled> compiled;
  std::string cache;       // "memory", "disk" or "miss"
  double compile_ms = 0;   // NVRTC time on a miss; 0 on a hit
  std::string cache_path;  // the disk entry (read or written), empty if none
  std::string cache_note;  // why the disk cache was not used, if it was not
};

// The NVRTC options for a device of compute capability major.minor; `arch` gets the chosen
// target. Throws std::runtime_error when NVRTC supports no target for this device.
std::vector<std::string> nvrtc_options(int major, int minor, std::string& arch);

// Compiles `source` (or finds it in the cache), with --include-path=`include_dir` when that is
// not empty (a module that includes CUDA headers; the folder is part of the cache key). Throws
// std::runtime_error with the NVRTC log when compilation fails.
CompileOutcome compile(const std::string& source, const std::string& name, int major, int minor,
                       const std::string& include_dir = {});

}  // namespace kq::nvrtc
