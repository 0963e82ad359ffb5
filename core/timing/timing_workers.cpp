#include "timing/timing_workers.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "record/instance_name.hpp"

namespace kq {
namespace {

namespace fs = std::filesystem;

// The arm files of kq's install, as the python plugin names its shipped ones (ArmIdentity::origin).
constexpr const char* kShippedArmFiles = "plugins/python/arms/";

fs::path canonical_or_self(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : c;
}

// The file whose code an arm is: its arm file where its plugin loads arms from files, else its
// plugin.
std::string file_of(const StageArm& a) {
  return a.identity.origin.empty() ? a.plugin_file.string() : a.identity.origin;
}

// Why an arm's file is timed apart, or "" when it joins the clean worker. --isolate all leaves
// the references' own files there: every worker loads them anyway.
std::string isolation_reason(const StageArm& a, const IsolationPolicy& p,
                             const std::set<std::string>& reference_files) {
  if (!a.identity.expected_rejection.empty()) return "a known-broken candidate's file";
  if (!a.load_threads.empty()) return "a plugin whose load left " + a.load_threads;
  if (canonical_or_self(a.plugin_file).parent_path() != canonical_or_self(p.install_plugins))
    return "a plugin from outside kq's install";
  if (!a.identity.origin.empty() && a.identity.origin.rfind(kShippedArmFiles, 0) != 0)
    return "an arm file from outside kq's install";
  if (p.all && !reference_files.count(file_of(a)))
    return "every file is timed apart (--isolate all)";
  return {};
}

// A short name for the worker, from its file's ("libkq_broken_cuda.so" -> "kq_broken_cuda"),
// that can follow '@' in an arm's name; distinct from the labels already taken.
std::string label_for(const std::string& file, std::set<std::string>& taken) {
  std::string stem = fs::path(file).stem().string();
  if (stem.rfind("lib", 0) == 0 && stem.size() > 3) stem = stem.substr(3);
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  if (stem.empty()) stem = "worker";
  std::string label = stem;
  for (int n = 2; taken.count(label); ++n) label = stem + "-" + std::to_string(n);
  taken.insert(label);
  return label;
}

// The first arm of `names` that is among `arms`.
const StageArm* first_of(const std::vector<std::string>& names, const std::vector<StageArm>& arms) {
  for (const std::string& n : names)
    for (const StageArm& a : arms)
      if (a.identity.name == n) return &a;
  return nullptr;
}

}  // namespace

std::vector<TimingWorkerPlan> plan_timing_workers(const std::vector<StageArm>& arms,
                                                  const IsolationPolicy& policy) {
  std::vector<const StageArm*> references;
  for (const auto* list : {&policy.baselines, &policy.eager})
    if (const StageArm* r = first_of(*list, arms);
        r && std::find(references.begin(), references.end(), r) == references.end())
      references.push_back(r);
  std::set<std::string> reference_files;
  for (const StageArm* r : references) reference_files.insert(file_of(*r));

  TimingWorkerPlan clean;
  std::vector<TimingWorkerPlan> isolated;
  std::map<std::string, std::size_t> by_file;  // file -> index in `isolated`
  std::set<std::string> labels;
  for (const StageArm& a : arms) {
    if (std::find(references.begin(), references.end(), &a) != references.end()) {
      clean.arms.push_back(a);
      continue;
    }
    const std::string file = file_of(a);
    const std::string why = isolation_reason(a, policy, reference_files);
    if (why.empty()) {
      clean.arms.push_back(a);
      continue;
    }
    auto [it, added] = by_file.emplace(file, isolated.size());
    if (added) {
      TimingWorkerPlan w;
      w.label = label_for(file, labels);
      w.file = file;
      w.reason = why;
      isolated.push_back(std::move(w));
    }
    isolated[it->second].arms.push_back(a);
  }

  std::vector<TimingWorkerPlan> out;
  if (!clean.arms.empty()) out.push_back(std::move(clean));
  for (TimingWorkerPlan& w : isolated) {
    for (const StageArm* r : references) {
      StageArm copy = *r;
      copy.identity.name = reference_in_worker(copy.identity.name, w.label);
      w.references.push_back(std::move(copy));
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace kq
