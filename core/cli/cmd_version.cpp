#include <iostream>

#include "cli/common.hpp"
#include "kq/abi.hpp"
#include "util/version.hpp"

namespace kq::cli {

int cmd_version(const std::vector<std::string>& args) {
  po::options_description opts("version options");
  po::variables_map vm;
  if (!parse_subcommand("kq version", opts, {}, args, vm)) return kOk;
  std::cout << "kq " << kq_version() << " (commit " << kq_git_commit()
            << (kq_git_dirty() ? ", dirty" : "") << "; plugin ABI " << kAbiVersion << "; CUDA "
#if KQ_HAVE_CUDA
            << "enabled"
#else
            << "not built"
#endif
            << ")\n";
  return kOk;
}

}  // namespace kq::cli
