// Compiled artifacts a CUDA plugin embeds at build time. Declared here, defined by the file that
// cmake/KqCudaArtifacts.cmake generates for a plugin calling kq_cuda_artifacts(): for every .cu it
// names, the PTX, the cubin, the ptxas resource report and the nvcc command lines, as
//   {"ptx", "<stem>.ptx"}, {"cubin", "<stem>.cubin"}, {"ptxas", "<stem>.ptxas.txt"},
//   {"flags", "<stem>.flags.txt"}
// in the order the sources were listed. A plugin returns them from IKernelArm::artifacts().
#pragma once
#include <vector>

#include "kq/arm.hpp"

namespace kq::build {
std::vector<Artifact> cuda_artifacts();
}  // namespace kq::build
