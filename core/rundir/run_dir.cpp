#include "rundir/run_dir.hpp"

#include <ctime>
#include <stdexcept>

namespace kq {

std::filesystem::path create_run_dir(const std::filesystem::path& runs_root,
                                     const std::filesystem::path& explicit_dir,
                                     const std::string& op, const std::string& machine) {
  namespace fs = std::filesystem;
  fs::path dir = explicit_dir;
  if (dir.empty()) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    dir = runs_root / (std::string(stamp) + "-" + op + "-" + machine);
    for (int i = 2; fs::exists(dir); ++i)
      dir = runs_root / (std::string(stamp) + "-" + op + "-" + machine + "-" + std::to_string(i));
  } else if (fs::exists(dir) && !fs::is_empty(dir)) {
    throw std::runtime_error("run directory " + dir.string() + " exists and is not empty");
  }
  std::error_code ec;
  fs::create_directories(dir / "logs", ec);
  if (ec)
    throw std::runtime_error("cannot create run directory " + dir.string() + ": " + ec.message());
  return dir;
}

}  // namespace kq
