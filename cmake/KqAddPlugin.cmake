# kq_add_plugin(<target> SOURCES <files...> [LIBS <libs...>] [HASH_EXTRA <files...>]
#               [SOURCE_ROOT <dir>] [OUTPUT_DIRECTORY <dir>] [NO_INSTALL])
# Builds a plugin shared object into the plugin directory: in this tree bin/plugins/ beside the
# kq binary (KQ_PLUGIN_OUTPUT_DIR), in a project that found the installed SDK (find_package(kq),
# kqConfig.cmake) the build's plugins/ folder. The plugin sees kq::plugin_api only (plus LIBS);
# everything but the exported aliases is hidden. The SHA-256 of every source (and HASH_EXTRA
# file) is embedded at build time through kq::build::source_files(), each named by its path
# relative to SOURCE_ROOT: by default KQ_SOURCE_ROOT (this tree's root, set by its top
# CMakeLists.txt), else the top source folder of the project being built. install() puts the
# plugin into bin/plugins of the install prefix, which the SDK defaults to the kq install's own.
# OUTPUT_DIRECTORY builds it elsewhere and NO_INSTALL leaves it out of the install: a plugin of
# test fixtures that kq must not find by default (plugins/broken's test-spec candidates).
#
# A source may be a .cu file where the project enables CUDA (project(... LANGUAGES CXX CUDA)): it
# is compiled as C++20, as the plugin API needs, and linked with the static CUDA runtime, as kq's
# own CUDA plugins are, so that the plugin needs the driver only (examples/first_arm).
#
# One definition for both: the top CMakeLists.txt includes it through KqPlugin.cmake, and it is
# installed beside kqConfig.cmake with the two scripts it runs (KqHashSources.cmake,
# KqWriteIfChanged.cmake).

# CMake before 3.26 knows no C++20 flag for nvcc and refuses CUDA_STANDARD 20 at generation
# ("requires the language dialect CUDA20"); nvcc has had -std=c++20 since 12.0. Set here, in the
# scope that includes this file (find_package(kq)'s caller), where the generator reads it.
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()

function(kq_add_plugin target)
  cmake_parse_arguments(P "NO_INSTALL" "SOURCE_ROOT;OUTPUT_DIRECTORY" "SOURCES;LIBS;HASH_EXTRA"
                        ${ARGN})
  set(hash_script "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/KqHashSources.cmake")
  set(hash_helpers "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/KqWriteIfChanged.cmake")
  if(P_SOURCE_ROOT)
    get_filename_component(root "${P_SOURCE_ROOT}" ABSOLUTE)
  elseif(DEFINED KQ_SOURCE_ROOT)
    set(root "${KQ_SOURCE_ROOT}")
  else()
    set(root "${CMAKE_SOURCE_DIR}")
  endif()
  if(P_OUTPUT_DIRECTORY)
    set(out_dir "${P_OUTPUT_DIRECTORY}")
  elseif(DEFINED KQ_PLUGIN_OUTPUT_DIR)
    set(out_dir "${KQ_PLUGIN_OUTPUT_DIR}")
  else()
    set(out_dir "${CMAKE_BINARY_DIR}/plugins")
  endif()
  set(abs_sources "")
  foreach(s IN LISTS P_SOURCES P_HASH_EXTRA)
    get_filename_component(a "${s}" ABSOLUTE)
    list(APPEND abs_sources "${a}")
  endforeach()
  # kq's own C++ standard (20) where the project sets none or an older one: the plugin API needs
  # it, and the recorded flags then say what the compiler was given.
  set(std "${CMAKE_CXX_STANDARD}")
  if(NOT std OR std LESS 20)
    set(std 20)
  endif()
  string(TOUPPER "${CMAKE_BUILD_TYPE}" cfg)
  set(flags "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} C++${std} ${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${cfg}}")
  get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("CUDA" IN_LIST langs)
    string(APPEND flags " | nvcc ${CMAKE_CUDA_COMPILER_VERSION} arch=${CMAKE_CUDA_ARCHITECTURES} ${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_${cfg}}")
  endif()
  string(STRIP "${flags}" flags)
  set(gen "${CMAKE_CURRENT_BINARY_DIR}/${target}_build_info.cpp")
  add_custom_command(
    OUTPUT "${gen}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${gen}" "-DROOT=${root}" "-DFILES=${abs_sources}"
            "-DFLAGS=${flags} $<JOIN:$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>, >"
            -P "${hash_script}"
    DEPENDS ${abs_sources} "${hash_script}" "${hash_helpers}"
    COMMENT "Hashing sources of ${target}"
    VERBATIM)
  add_library(${target} MODULE ${P_SOURCES} "${gen}")
  target_link_libraries(${target} PRIVATE kq::plugin_api ${P_LIBS})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_STANDARD ${std}
    CXX_STANDARD_REQUIRED ON
    LIBRARY_OUTPUT_DIRECTORY "${out_dir}"
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "$ORIGIN:$ORIGIN/../../lib")
  if(NOT DEFINED CMAKE_CXX_EXTENSIONS)
    set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)  # -std=c++20, as kq's own
  endif()
  if("CUDA" IN_LIST langs)
    _kq_plugin_cuda_properties(${target})
  endif()
  if(NOT P_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION bin/plugins)
  endif()
  if(NOT TARGET kq_all_plugins)
    add_custom_target(kq_all_plugins)
  endif()
  add_dependencies(kq_all_plugins ${target})
endfunction()

# The CUDA side of a plugin whose project enables CUDA: its .cu files in C++20 (or the project's
# newer standard) and the static CUDA runtime unless the project chose one.
function(_kq_plugin_cuda_properties target)
  set(std "${CMAKE_CUDA_STANDARD}")
  if(NOT std OR std LESS 20)
    set(std 20)
  endif()
  set_target_properties(${target} PROPERTIES CUDA_STANDARD ${std} CUDA_STANDARD_REQUIRED ON)
  if(NOT DEFINED CMAKE_CUDA_RUNTIME_LIBRARY)
    set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Static)
  endif()
endfunction()
