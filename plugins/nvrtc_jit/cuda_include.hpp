// Where NVRTC finds cuda_fp16.h and cuda_bf16.h, which the f16 and bf16 modules include (NVRTC
// has no built-in copy: without --include-path it reports "could not open source file").
#pragma once
#include <string>

namespace kq::nvrtc {

// The first folder holding both headers among: $KQ_CUDA_INCLUDE; $CUDA_HOME/include;
// $CUDA_PATH/include; the toolkit kq was built against (KQ_CUDA_INCLUDE_DIR); and
// /usr/local/cuda/include. Empty when none does; `looked` then lists the folders tried.
std::string cuda_include_dir(std::string& looked);

}  // namespace kq::nvrtc
