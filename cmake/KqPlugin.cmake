# kq_add_plugin(<target> SOURCES <files...> [LIBS <libs...>] [HASH_EXTRA <files...>])
# Builds a plugin shared object into the plugin directory beside the kq binary. The plugin sees
# plugin-api/ only (plus LIBS); everything but the exported aliases is hidden. The SHA-256 of
# every source (and HASH_EXTRA file) is embedded at build time through kq::build::source_files().
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
