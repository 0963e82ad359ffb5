// Which files to try: the plugin folders' *.so files, then the explicit files, each real file
// once. Pure filesystem work; nothing is loaded here.
#pragma once
#include <filesystem>
#include <vector>

#include "plugins/loader.hpp"

namespace kq {

struct Candidate {
  std::filesystem::path file;       // as found (folder / name) or as given: what errors show
  std::filesystem::path canonical;  // symlinks resolved: what is loaded and compared
};

struct Candidates {
  std::vector<Candidate> files;                 // in load order
  std::vector<LoadError> errors;                // folders or files that could not be used
  std::vector<std::filesystem::path> searched;  // folders, in order, each once
};

// Folders are scanned without recursion; their regular files (or links to one) whose names end
// in ".so" are taken in name order, so a run does not depend on the directory's order. A file
// reached twice (folder and explicit, a link, a folder named twice) is taken once, first place.
Candidates find_candidates(const PluginSearch& search);

}  // namespace kq
