// What a compute-sanitizer log says: memcheck, initcheck and synccheck end with
// "ERROR SUMMARY: N errors"; racecheck with "RACECHECK SUMMARY: H hazards displayed
// (E errors, W warnings)", where only E counts (warnings are hazards it cannot prove).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>

namespace kq {

// {"errors": N (-1 when the log has no summary line), "first": "the first error's line"}.
nlohmann::json read_sanitizer_log(const std::filesystem::path& log);

}  // namespace kq
