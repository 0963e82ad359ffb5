#include "artifacts/artifacts.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/json_lines.hpp"
#include "util/sha256.hpp"

namespace kq {

nlohmann::json identity_json(const ArmIdentity& id) {
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& s : id.sources) sources.push_back({{"path", s.path}, {"sha256", s.sha256}});
  return {{"name", id.name},
          {"family", id.family},
          {"device", std::string(to_string(id.device))},
          {"version", id.version},
          {"sources", sources},
          {"compile_flags", id.compile_flags},
          {"expected_rejection", id.expected_rejection},
          {"tampering", id.tampering}};
}

namespace {

namespace fs = std::filesystem;

// A file name an arm proposes, kept inside the arm's folder.
std::string safe_name(const std::string& s) {
  std::string o;
  for (char c : s)
    o +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (o.empty() || o[0] == '.') o = "_" + o;
  return o;
}

std::string find_tool(const char* name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string d;
  while (std::getline(dirs, d, ':'))
    if (!d.empty() && fs::exists(fs::path(d) / name)) return (fs::path(d) / name).string();
  if (fs::exists(fs::path("/usr/local/cuda/bin") / name))
    return (fs::path("/usr/local/cuda/bin") / name).string();
  return {};
}

std::string quote(const fs::path& p) {
  std::string s = "'";
  for (char c : p.string()) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return s + "'";
}

}  // namespace

void write_arm_artifacts(const fs::path& arm_dir, IKernelArm& arm, const ArmIdentity& identity,
                         const fs::path& plugin_file, const std::string& prefix) {
  fs::create_directories(arm_dir);
  nlohmann::json id = identity_json(identity);
  id["plugin_file"] = plugin_file.string();
  id["plugin_sha256"] = sha256_file(plugin_file);
  nlohmann::json listed = nlohmann::json::array();
  std::vector<Artifact> list;
  try {
    list = arm.artifacts();
  } catch (const std::exception& e) {
    id["artifacts_error"] = e.what();
  } catch (...) {
    id["artifacts_error"] = "artifacts() threw";
  }
  for (const Artifact& a : list) {
    const std::string name = prefix + safe_name(a.filename.empty() ? a.kind : a.filename);
    write_file_atomic(arm_dir / name, a.content);
    listed.push_back({{"kind", a.kind}, {"file", name}});
  }
  id["artifacts"] = listed;
  if (prefix.empty()) write_file_atomic(arm_dir / "identity.json", id.dump(2) + "\n");
}

nlohmann::json finish_artifacts(const fs::path& arm_dir) {
  nlohmann::json index = {{"files", nlohmann::json::array()}};
  if (!fs::is_directory(arm_dir)) return index;
  // SASS from every cubin, by the first disassembler on PATH.
  const std::string cuobjdump = find_tool("cuobjdump"), nvdisasm = find_tool("nvdisasm");
  bool any_cubin = false;
  for (const auto& e : fs::directory_iterator(arm_dir)) {
    if (e.path().extension() != ".cubin") continue;
    any_cubin = true;
    fs::path sass = e.path();
    sass.replace_extension(".sass");
    // Done already (after qualification; the timing stage adds its own cubins): kept.
    std::error_code ec;
    if (fs::exists(sass, ec) && fs::last_write_time(sass, ec) >= fs::last_write_time(e.path(), ec))
      continue;
    std::string cmd;
    if (!cuobjdump.empty())
      cmd = quote(cuobjdump) + " --dump-sass " + quote(e.path());
    else if (!nvdisasm.empty())
      cmd = quote(nvdisasm) + " -c -g " + quote(e.path());
    if (cmd.empty()) continue;
    std::system((cmd + " > " + quote(sass) + " 2>&1").c_str());
  }
  if (any_cubin)
    index["sass"] = !cuobjdump.empty()  ? "cuobjdump"
                    : !nvdisasm.empty() ? "nvdisasm"
                                        : "not produced: neither cuobjdump nor nvdisasm is on PATH";
  for (const auto& e : fs::directory_iterator(arm_dir)) {
    if (!e.is_regular_file() || e.path().filename() == "index.json") continue;
    index["files"].push_back({{"name", e.path().filename().string()},
                              {"bytes", e.file_size()},
                              {"sha256", sha256_file(e.path())}});
  }
  std::sort(index["files"].begin(), index["files"].end(),
            [](const auto& a, const auto& b) { return a["name"] < b["name"]; });
  write_file_atomic(arm_dir / "index.json", index.dump(2) + "\n");
  return index;
}

}  // namespace kq
