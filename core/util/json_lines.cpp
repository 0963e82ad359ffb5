#include "util/json_lines.hpp"

#include <fstream>
#include <stdexcept>

namespace kq {

JsonLinesWriter::JsonLinesWriter(const std::filesystem::path& file) {
  f_ = std::fopen(file.c_str(), "a");
  if (!f_) throw std::runtime_error("cannot open " + file.string() + " for writing");
}

JsonLinesWriter::~JsonLinesWriter() {
  if (f_) std::fclose(f_);
}

void JsonLinesWriter::write(const nlohmann::json& record) {
  std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  std::lock_guard lock(mu_);
  if (!f_) return;
  std::fwrite(line.data(), 1, line.size(), f_);
  std::fflush(f_);
}

std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  return out;
}

void write_file_atomic(const std::filesystem::path& file, const std::string& content) {
  auto tmp = file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out << content;
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, file);
}

}  // namespace kq
