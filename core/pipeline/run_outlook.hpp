// The first lines of a run: what it is about to do (arms by device, the plan, how many at a
// time, the timed sizes) and about how long it will take, from the last run of the same spec
// with the same arms and plan in the same runs folder, where there is one.
#pragma once
#include <string>

#include "pipeline/run_pipeline.hpp"

namespace kq {

std::string run_outlook(const RunPipelineOptions& o);

}  // namespace kq
