// SHA-256 digests as lower-case hex, through OpenSSL EVP. Used for spec files, plugin sources and
// artifacts: anything the run directory records by content.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace kq {

// The hex SHA-256 of `bytes` (64 lower-case hex digits).
std::string sha256_hex(std::string_view bytes);

// The hex SHA-256 of a file's bytes, read in chunks. Throws std::runtime_error when the file
// cannot be read.
std::string sha256_file(const std::filesystem::path& file);

}  // namespace kq
