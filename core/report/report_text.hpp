// Text that several printers share, written once: the machine line, the plugins' environment,
// the headline. Plain text unless a Markup is given; HTML printers escape what they are given.
#pragma once
#include <string>
#include <vector>

#include "report/columns.hpp"
#include "summary/run_summary.hpp"

namespace kq {

// "host, cpu, 16 cores; NVIDIA H200 (132 SMs)", or "...; no usable GPU (why)".
std::string machine_text(const MachineFacts& m);
// "TORCHINDUCTOR_COMPILE_THREADS=4, KQ_CACHE_DIR=/x": the settings the run found in its
// environment, or "" where none.
std::string settings_text(const MachineFacts& m);
// "GPU 0: 412 cases, 63.2 s; GPU 1: ..." where qualification's cases were spread over GPUs;
// "" otherwise.
std::string gpu_load_text(const RunSummary& s);

// "plugin libkq_python.so: python 3.12.3, torch 2.11.0": one per plugin that said something.
std::vector<std::string> environment_lines(const nlohmann::json& plugin_environment);

// The qualification's headline, its counts in bold.
std::string headline_text(const Headline& h, Markup m);

// One line per isolated timing worker: its file, why it was timed apart, its arms, and how its
// references and controls compared with the clean worker's (disturbed or not).
std::vector<std::string> worker_lines(const RunSummary& s);

// "a, b, c"
std::string joined(const std::vector<std::string>& items, const std::string& sep = ", ");

}  // namespace kq
