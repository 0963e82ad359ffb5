# The SDK, installed with kq (cmake --install, tools/bundle.sh): the plugin API's headers in
# include/kq/ and a CMake package in lib/cmake/kq/, so that a plugin is built outside this tree
# against an install:
#   find_package(kq REQUIRED)                        # CMAKE_PREFIX_PATH=<the kq install>
#   kq_add_plugin(kq_mine SOURCES mine.cpp)          # links kq::plugin_api, hashes mine.cpp
# The package holds kq_add_plugin (KqAddPlugin.cmake, the one this tree uses) and the scripts it
# runs; the CUDA helpers stay in this tree. plugins/python installs its own sources beside it
# (share/kq/plugins/python/), which tools/build-python-plugin.sh builds where it is to run.
include(CMakePackageConfigHelpers)
set(KQ_CMAKE_INSTALL_DIR lib/cmake/kq)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/plugin-api/include/kq" DESTINATION include)
install(TARGETS kq_plugin_api EXPORT kqTargets)
install(EXPORT kqTargets NAMESPACE kq:: DESTINATION ${KQ_CMAKE_INSTALL_DIR})

# A plugin project that sets no build type is built as kq was.
set(KQ_DEFAULT_BUILD_TYPE "${CMAKE_BUILD_TYPE}")
if(NOT KQ_DEFAULT_BUILD_TYPE)
  set(KQ_DEFAULT_BUILD_TYPE RelWithDebInfo)
endif()
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/kqConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/kqConfig.cmake" INSTALL_DESTINATION ${KQ_CMAKE_INSTALL_DIR})
# 0.x: a minor version may change the plugin ABI (the host checks kq/abi.hpp on load anyway).
write_basic_package_version_file("${PROJECT_BINARY_DIR}/kqConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/kqConfig.cmake" "${PROJECT_BINARY_DIR}/kqConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/KqAddPlugin.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/KqHashSources.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/KqWriteIfChanged.cmake"
        DESTINATION ${KQ_CMAKE_INSTALL_DIR})
