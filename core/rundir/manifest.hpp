// manifest.json: what a run was. Written before the first stage starts.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kq/arm.hpp"
#include "plugins/loader.hpp"
#include "qualify/qualify_stage.hpp"
#include "spec/spec.hpp"

namespace kq {

// {plugin file name: {key: value}} of the plugins that hold one of `arms` and reported their
// environment (kq_plugin_environment); a second plugin of the same file name is keyed by its path.
nlohmann::json plugin_environment_json(const std::vector<PluginEnvironment>& environments,
                                       const std::vector<StageArm>& arms);

nlohmann::json build_manifest(const Spec& spec, const std::vector<StageArm>& arms,
                              const std::vector<LoadError>& load_errors,
                              const std::vector<PluginEnvironment>& environments,
                              const nlohmann::json& machine,
                              const std::vector<std::string>& command);

}  // namespace kq

namespace kq {

// Fills a fresh run directory: spec.yaml (the exact spec text) and manifest.json.
void start_run_dir(const std::filesystem::path& dir, const Spec& spec,
                   const std::vector<StageArm>& arms, const std::vector<LoadError>& load_errors,
                   const std::vector<PluginEnvironment>& environments,
                   const nlohmann::json& machine, const std::vector<std::string>& command);

}  // namespace kq
