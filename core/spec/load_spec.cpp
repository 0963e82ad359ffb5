// load_spec: a spec file -> parse_spec; an unreadable file is a SpecError at 0:0. No more than
// kMaxSpecBytes + 1 bytes are ever read, so a huge file, /dev/zero or an endless pipe is refused
// without being held in memory.
#include <cerrno>
#include <cstring>
#include <fstream>

#include "spec/spec.hpp"
#include "spec/text_checks.hpp"

namespace kq {

Spec load_spec(const std::filesystem::path& file) {
  const std::string name = file.string();
  auto unreadable = [&](const std::string& why) {
    return SpecError(name, 0, 0, "", "cannot read the spec file: " + why);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw unreadable("it is a directory");
  const auto size = std::filesystem::file_size(file, ec);
  if (!ec && size > kMaxSpecBytes) {
    throw SpecError(name, 1, 1, "", spec_detail::too_large_message(std::to_string(size)));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw unreadable(std::strerror(errno));
  std::string bytes(kMaxSpecBytes + 1, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.bad()) throw unreadable(std::strerror(errno));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  if (bytes.size() > kMaxSpecBytes) {
    throw SpecError(name, 1, 1, "",
                    spec_detail::too_large_message("more than " + std::to_string(kMaxSpecBytes)));
  }
  return parse_spec(bytes, name);
}

}  // namespace kq
