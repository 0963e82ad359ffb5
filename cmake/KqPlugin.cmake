# kq_add_plugin(<target> SOURCES <files...> [LIBS <libs...>] [HASH_EXTRA <files...>])
# Builds a plugin shared object into the plugin directory beside the kq binary. The plugin sees
# plugin-api/ only (plus LIBS); everything but the exported aliases is hidden. The SHA-256 of
# every source (and HASH_EXTRA file) is embedded at build time through kq::build::source_files().
#
# kq_add_fused_cuda_plugin(<target> SOURCES <files...> [HASH_EXTRA <files...>])
# kq_add_plugin for a CUDA plugin built on plugins/fused_common and plugins/cuda_common, with its
# nvcc artifacts embedded (see below). Call it after kq_requires_cuda().
include("${CMAKE_CURRENT_LIST_DIR}/KqCudaArtifacts.cmake")
set(KQ_HASH_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/KqHashSources.cmake")
set(KQ_HASH_SCRIPT_HELPERS "${CMAKE_CURRENT_LIST_DIR}/KqWriteIfChanged.cmake")

function(kq_add_plugin target)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS;HASH_EXTRA" ${ARGN})
  set(abs_sources "")
  foreach(s IN LISTS P_SOURCES P_HASH_EXTRA)
    get_filename_component(a "${s}" ABSOLUTE)
    list(APPEND abs_sources "${a}")
  endforeach()
  string(TOUPPER "${CMAKE_BUILD_TYPE}" cfg)
  set(flags "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} C++${CMAKE_CXX_STANDARD} ${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${cfg}}")
  get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("CUDA" IN_LIST langs)
    string(APPEND flags " | nvcc ${CMAKE_CUDA_COMPILER_VERSION} arch=${CMAKE_CUDA_ARCHITECTURES} ${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_${cfg}}")
  endif()
  string(STRIP "${flags}" flags)
  set(gen "${CMAKE_CURRENT_BINARY_DIR}/${target}_build_info.cpp")
  add_custom_command(
    OUTPUT "${gen}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${gen}" "-DROOT=${PROJECT_SOURCE_DIR}" "-DFILES=${abs_sources}"
            "-DFLAGS=${flags} $<JOIN:$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>, >"
            -P "${KQ_HASH_SCRIPT}"
    DEPENDS ${abs_sources} "${KQ_HASH_SCRIPT}" ${KQ_HASH_SCRIPT_HELPERS}
    COMMENT "Hashing sources of ${target}"
    VERBATIM)
  add_library(${target} MODULE ${P_SOURCES} "${gen}")
  target_link_libraries(${target} PRIVATE kq_plugin_api ${P_LIBS})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY "${KQ_PLUGIN_OUTPUT_DIR}"
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "$ORIGIN:$ORIGIN/../../lib")
  install(TARGETS ${target} LIBRARY DESTINATION bin/plugins)
  if(NOT TARGET kq_all_plugins)
    add_custom_target(kq_all_plugins)
  endif()
  add_dependencies(kq_all_plugins ${target})
endfunction()

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
               ${common}/expr_match.hpp ${common}/fused_math.cuh ${common}/fused_ops.hpp
               ${common}/views.hpp ${cuda_common}/cuda_status.hpp)
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
