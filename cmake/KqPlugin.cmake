# kq_add_plugin(<target> SOURCES <files...> [LIBS <libs...>] [HASH_EXTRA <files...>]
#               [SOURCE_ROOT <dir>])
# Builds a plugin shared object into the plugin directory beside the kq binary, its sources'
# SHA-256 and the compile flags embedded: KqAddPlugin.cmake, which the SDK installs too.
#
# kq_add_fused_cuda_plugin(<target> SOURCES <files...> [HASH_EXTRA <files...>])
# kq_add_plugin for a CUDA plugin built on plugins/fused_common and plugins/cuda_common, with its
# nvcc artifacts embedded (see below). Call it after kq_requires_cuda(). In this tree only.
include("${CMAKE_CURRENT_LIST_DIR}/KqAddPlugin.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/KqCudaArtifacts.cmake")

# A CUDA plugin of the fused family (cuda_fused, inline_ptx, thrust_transform): fused_common/ and
# cuda_common/ on its include path and among its hashed files (after its own HASH_EXTRA), the
# static CUDA runtime, exact IEEE arithmetic on its .cu files, and their PTX, cubin and ptxas
# report embedded (kq_cuda_artifacts, KqCudaArtifacts.cmake).
function(kq_add_fused_cuda_plugin target)
  cmake_parse_arguments(P "" "" "SOURCES;HASH_EXTRA" ${ARGN})
  set(common "${CMAKE_CURRENT_SOURCE_DIR}/../fused_common")
  set(cuda_common "${CMAKE_CURRENT_SOURCE_DIR}/../cuda_common")
  kq_add_plugin(${target}
    SOURCES ${P_SOURCES}
    HASH_EXTRA ${P_HASH_EXTRA}
               ${common}/elem.cuh ${common}/fused_math.cuh
               ${common}/fused_ops.hpp ${common}/views.hpp ${cuda_common}/cuda_status.hpp)
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}" "${common}"
                                               "${cuda_common}")
  target_link_libraries(${target} PRIVATE CUDA::cudart_static)
  # Exact IEEE arithmetic (the specs compare bit for bit or within a few ulp): no fast math, no
  # flush to zero, correctly rounded division and square root, no FMA contraction. Set on the .cu
  # files (nvcc only), not on the target, whose .cpp files g++ compiles.
  set(cu_sources ${P_SOURCES})
  list(FILTER cu_sources INCLUDE REGEX "\\.cu$")
  set_source_files_properties(${cu_sources} PROPERTIES COMPILE_OPTIONS
    "--fmad=false;-ftz=false;-prec-div=true;-prec-sqrt=true")
  kq_cuda_artifacts(${target} SOURCES ${cu_sources})
endfunction()

# kq_requires_cuda(): at the top of a plugin folder's CMakeLists.txt. Without CUDA it records
# "<folder> (no nvcc)" among the skipped plugins and returns from the folder (a macro, so that its
# return() leaves the caller's file).
macro(kq_requires_cuda)
  if(NOT KQ_HAVE_CUDA)
    get_filename_component(kq_folder "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
    set_property(GLOBAL APPEND PROPERTY KQ_SKIPPED_PLUGINS "${kq_folder} (no nvcc)")
    return()
  endif()
endmacro()
