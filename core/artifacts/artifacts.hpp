// The artifacts stage: what each arm compiled, kept in runs/<id>/artifacts/<arm>/.
//
// In the qualification worker, after the arm's cases (so prepare() has compiled whatever it
// compiles), write_arm_artifacts() saves everything the arm lists (PTX, cubin, ptxas report,
// plans, generated source...) plus identity.json (sources with their SHA-256, compile flags,
// the plugin file and its SHA-256). In the parent, finish_artifacts() disassembles each cubin
// to SASS with cuobjdump or nvdisasm when one is on PATH (saying so in a note when neither is)
// and writes index.json: every file with its size and SHA-256.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>

#include "kq/arm.hpp"

namespace kq {

// `prefix` names the stage that asks ("" for qualification, which also writes identity.json;
// "timing-" for the timing worker, whose arms prepared the timing sizes).
void write_arm_artifacts(const std::filesystem::path& arm_dir, IKernelArm& arm,
                         const ArmIdentity& identity, const std::filesystem::path& plugin_file,
                         const std::string& prefix = "");

// An arm's identity as identity.json and manifest.json write it: name, family, device, version,
// each source with its SHA-256, compile flags, the check a known-broken candidate declares.
nlohmann::json identity_json(const ArmIdentity& id);

// Returns the index ({"files":[{name, bytes, sha256}], "sass": "cuobjdump"|"nvdisasm"|reason}).
nlohmann::json finish_artifacts(const std::filesystem::path& arm_dir);

}  // namespace kq
