// load_spec: a spec file -> parse_spec; an unreadable file is a SpecError at 0:0.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "spec/spec.hpp"

namespace kq {

Spec load_spec(const std::filesystem::path& file) {
  const std::string name = file.string();
  auto unreadable = [&](const std::string& why) {
    return SpecError(name, 0, 0, "", "cannot read the spec file: " + why);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw unreadable("it is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw unreadable(std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw unreadable(std::strerror(errno));
  return parse_spec(bytes.str(), name);
}

}  // namespace kq
