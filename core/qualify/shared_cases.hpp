// The cases' data of a qualification stage (qualify/case_data.hpp), computed once by the stage
// for every worker: each case in sealed memory (util/sealed_memory.hpp) that the workers
// inherit and map read-only, so no worker, and no arm inside one, can change what the others
// check against. The workers learn which descriptor holds which case from their command line.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "plan/case.hpp"
#include "spec/spec.hpp"
#include "util/sealed_memory.hpp"

namespace kq {

class SharedCases {
 public:
  // Computes the data of every case of `cases` while the total stays within `budget_bytes`
  // (cases past it are left to the workers, which compute their own); writes one line per
  // case to `log` (when set): its bytes and seconds.
  static SharedCases compute(const Spec& spec, const std::vector<Case>& cases,
                             std::uint64_t budget_bytes, const std::filesystem::path& log = {});
  // In a worker: maps the cases that `argument` names (checking that each is sealed).
  static SharedCases adopt(const std::string& argument);

  // "name=fd:bytes,...": what a worker's --case-data argument says.
  std::string argument() const;
  // The case's data (its CaseDataLayout), or nullptr when the case is not shared.
  const unsigned char* find(const std::string& case_name) const;
  std::size_t size() const { return cases_.size(); }
  std::uint64_t bytes() const;  // all of it

 private:
  std::map<std::string, SealedMemory> cases_;
};

// The budget for a stage's shared case data: half the host memory available now (the workers
// need the other half for their own copies).
std::uint64_t shared_cases_budget();

}  // namespace kq
