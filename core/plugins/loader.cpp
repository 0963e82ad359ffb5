// load_plugins: candidates -> open each -> check the ABI -> create its arms -> register them.
// Every failure is one LoadError and the next plugin is tried.
#include "plugins/loader.hpp"

#include <algorithm>
#include <string>

#include "kq/abi.hpp"
#include "plugins/arm_registry.hpp"
#include "plugins/candidates.hpp"
#include "plugins/guarded_call.hpp"
#include "plugins/one_line.hpp"
#include "plugins/plugin_library.hpp"
#include "plugins/process_threads.hpp"

namespace kq {
namespace {

void load_one(const Candidate& candidate, PluginSet& set, ArmRegistry& registry) {
  const std::set<long> threads_before = process_threads();
  auto fail = [&](std::string message) {
    set.errors.push_back({candidate.file, one_line(message)});
  };

  OpenedPlugin opened = open_plugin_library(candidate.canonical);
  if (!opened.error.empty()) return fail(std::move(opened.error));
  // Declared before `arms`: the arms are destroyed while their code is still loaded.
  const PluginLibrary library = std::move(opened.library);

  // The version is checked before any other call: a plugin built against another contract may
  // lay out ArmList or IKernelArm differently, so even calling create would be unsafe.
  std::uint32_t version = 0;
  if (std::string thrown = guarded_call([&] { version = library.abi_version(); });
      !thrown.empty()) {
    return fail("kq_abi_version " + thrown);
  }
  if (version != kAbiVersion) {
    return fail("ABI version " + std::to_string(version) + ", this kq expects " +
                std::to_string(kAbiVersion) + "; rebuild the plugin against this plugin-api");
  }

  ArmList arms;
  if (std::string thrown = guarded_call([&] { library.create_arms(arms); }); !thrown.empty()) {
    // Arms it made before throwing are dropped: the plugin is in an unknown state.
    return fail("kq_create_arms " + thrown);
  }
  // What the plugin could not load of its own, each listed as a file that failed to load.
  LoadProblems problems;
  if (library.load_problems) {
    if (std::string thrown = guarded_call([&] { library.load_problems(problems); });
        !thrown.empty())
      set.errors.push_back({candidate.file, one_line("kq_load_problems " + thrown)});
    for (const LoadProblem& p : problems) set.errors.push_back({p.file, one_line(p.message)});
  }
  if (arms.empty()) return fail("exports no arms");
  // What it runs on (Python, torch, Triton), for the manifest and kq list.
  if (library.environment) {
    EnvironmentFacts facts;
    if (std::string thrown = guarded_call([&] { library.environment(facts); }); !thrown.empty()) {
      set.errors.push_back({candidate.file, one_line("kq_plugin_environment " + thrown)});
    } else if (!facts.empty()) {
      PluginEnvironment env{candidate.file, {}};
      for (const EnvironmentFact& f : facts)
        env.facts.push_back({one_line(f.key, 100), one_line(f.value)});
      set.environments.push_back(std::move(env));
    }
  }
  const std::size_t first = set.arms.size();
  registry.take(candidate.file, library.handle, arms);
  // A thread its load left running runs beside every arm of every worker that loads it.
  const std::string started = threads_started(threads_before, process_threads());
  if (!started.empty())
    for (std::size_t i = first; i < set.arms.size(); ++i)
      if (set.arms[i].identity.origin.empty()) set.arms[i].load_threads = started;
}

}  // namespace

PluginSet load_plugins(const PluginSearch& search) {
  Candidates candidates = find_candidates(search);
  PluginSet set;
  set.searched = std::move(candidates.searched);
  set.errors = std::move(candidates.errors);

  ArmRegistry registry(set);
  for (const Candidate& candidate : candidates.files) load_one(candidate, set, registry);

  std::sort(set.arms.begin(), set.arms.end(), [](const LoadedArm& a, const LoadedArm& b) {
    return a.identity.name < b.identity.name;
  });
  return set;
}

}  // namespace kq
