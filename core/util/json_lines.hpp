// Append-only JSON-lines files: each record is one line, written and flushed as it happens, so
// a killed run leaves every completed line readable.
#pragma once
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kq {

class JsonLinesWriter {
 public:
  JsonLinesWriter() = default;
  explicit JsonLinesWriter(const std::filesystem::path& file);  // appends; throws on failure
  JsonLinesWriter(const JsonLinesWriter&) = delete;
  JsonLinesWriter& operator=(const JsonLinesWriter&) = delete;
  ~JsonLinesWriter();

  bool is_open() const { return f_ != nullptr; }
  void write(const nlohmann::json& record);

 private:
  std::FILE* f_ = nullptr;
  std::mutex mu_;
};

// Reads every complete line of a JSON-lines file; a torn last line (a killed writer) is skipped.
std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& file);

// Writes `content` to `file` atomically (a temporary file renamed over it).
void write_file_atomic(const std::filesystem::path& file, const std::string& content);

}  // namespace kq
