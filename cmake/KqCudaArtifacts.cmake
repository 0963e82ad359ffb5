# kq_cuda_artifacts(<plugin target> SOURCES <.cu files...> [DEPENDS <headers...>])
#
# At build time, compiles each .cu again with nvcc, with the flags the plugin's own CUDA objects
# get, to keep what the plugin is made of: the cubin (-cubin), the PTX ptxas compiled into it (kept
# from the same call with -keep: one extra compile per source, not two), the ptxas resource report
# (-Xptxas -v: registers, spills, stack, shared memory) and the exact nvcc command line.
# A generated .cpp compiled into the plugin embeds them as byte arrays and defines
#   std::vector<kq::Artifact> kq::build::cuda_artifacts()   (kq/build_artifacts.hpp)
# returning, per source, kinds "ptx", "cubin", "ptxas" and "flags" (files <stem>.ptx, <stem>.cubin,
# <stem>.ptxas.txt, <stem>.flags.txt).
#
# Call it after kq_add_plugin() and after the plugin's compile options are set: they are read at
# configure time, from the target (COMPILE_OPTIONS, COMPILE_DEFINITIONS) and from each source
# (its COMPILE_OPTIONS source property, the way to give nvcc-only options to the .cu files of a
# plugin that also has .cpp files). Target options of the form $<$<COMPILE_LANGUAGE:CUDA>:...>
# are unwrapped; other generator expressions cannot be evaluated outside a compile and are left
# out (with a configure warning). The artifacts are one architecture's (the first of
# CMAKE_CUDA_ARCHITECTURES).
#
# They are rebuilt only when a source, a listed dependency, a header beside a source, a
# plugin-api header or these scripts change; the .cpp is rewritten only when its bytes change.
set(KQ_NVCC_ARTIFACTS_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/KqNvccArtifacts.cmake")
set(KQ_EMBED_ARTIFACTS_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/KqEmbedArtifacts.cmake")
# What the embedding script includes: a change to them rewrites the embedded artifacts too.
set(KQ_EMBED_ARTIFACTS_HELPERS "${CMAKE_CURRENT_LIST_DIR}/KqByteArray.cmake"
                               "${CMAKE_CURRENT_LIST_DIR}/KqWriteIfChanged.cmake")

# The first architecture as a number ("90" from "90", "90-real", "90a-virtual"): -ptx and -cubin
# each take exactly one target.
function(kq_cuda_artifacts_arch out_var)
  list(GET CMAKE_CUDA_ARCHITECTURES 0 arch)
  string(REGEX REPLACE "-(real|virtual)$" "" arch "${arch}")
  if(NOT arch MATCHES "^[0-9]+[a-z]?$")
    message(WARNING "kq_cuda_artifacts: CMAKE_CUDA_ARCHITECTURES='${CMAKE_CUDA_ARCHITECTURES}' "
                    "names no single architecture; artifacts are built for 90")
    set(arch 90)
  endif()
  set(${out_var} "${arch}" PARENT_SCOPE)
endfunction()

# Appends to the list list_var each item of a target property (include directories, compile
# definitions) that is no generator expression, with a prefix ("-I", "-D"): those cannot be
# evaluated outside a compile.
function(kq_cuda_artifacts_append_plain list_var target property prefix)
  get_target_property(items ${target} ${property})
  if(NOT items)
    return()
  endif()
  set(appended "${${list_var}}")
  foreach(item IN LISTS items)
    if(NOT item MATCHES "\\$<")
      list(APPEND appended "${prefix}${item}")
    endif()
  endforeach()
  set(${list_var} "${appended}" PARENT_SCOPE)
endfunction()

# The target's CUDA compile options as plain nvcc arguments. The property holds a list, so
# "$<$<COMPILE_LANGUAGE:CUDA>:a;b;c>" arrives split in three items: the wrapper is recognised on
# the first item and closed by the one ending in '>'.
function(kq_cuda_artifacts_options target out_var)
  get_target_property(opts ${target} COMPILE_OPTIONS)
  set(result "")
  set(inside FALSE)
  if(opts)
    foreach(o IN LISTS opts)
      if(NOT inside AND o MATCHES "^\\$<\\$<COMPILE_LANGUAGE:CUDA>:(.*)$")
        set(o "${CMAKE_MATCH_1}")
        set(inside TRUE)
      endif()
      if(inside)
        if(o MATCHES "^(.*)>$")
          set(o "${CMAKE_MATCH_1}")
          set(inside FALSE)
        endif()
        if(NOT o STREQUAL "")
          list(APPEND result "${o}")
        endif()
      elseif(o MATCHES "\\$<")
        message(WARNING "kq_cuda_artifacts(${target}): option '${o}' left out of the artifacts' "
                        "nvcc command (a generator expression)")
      else()
        list(APPEND result "${o}")
      endif()
    endforeach()
  endif()
  kq_cuda_artifacts_append_plain(result ${target} INCLUDE_DIRECTORIES "-I")
  kq_cuda_artifacts_append_plain(result ${target} COMPILE_DEFINITIONS "-D")
  set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

function(kq_cuda_artifacts target)
  cmake_parse_arguments(A "" "" "SOURCES;DEPENDS" ${ARGN})
  if(NOT A_SOURCES)
    message(FATAL_ERROR "kq_cuda_artifacts(${target}): no SOURCES")
  endif()
  kq_cuda_artifacts_arch(arch)
  kq_cuda_artifacts_options(${target} target_opts)

  # The flags in the order nvcc sees them for the plugin's objects: global flags, the build
  # type's flags, the language standard, the target's options and include directories, then
  # the source's options. The build type's -O level is replaced by -O3: it sets the host
  # compiler's level only (ptxas optimises device code at -O3 unless told otherwise), so the
  # device code is the plugin's either way, and one -O spares nvcc's redefinition warning.
  string(TOUPPER "${CMAKE_BUILD_TYPE}" cfg)
  separate_arguments(global_flags UNIX_COMMAND "${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_${cfg}}")
  list(FILTER global_flags EXCLUDE REGEX "^-O[0-9s]?$")
  set(flags ${global_flags} -O3 -std=c++20 ${target_opts}
            "-I${PROJECT_SOURCE_DIR}/plugin-api/include")

  file(GLOB api_headers CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/plugin-api/include/kq/*.hpp")
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}_artifacts")
  set(entries "")
  set(all_outputs "")
  foreach(src IN LISTS A_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE)
    get_filename_component(stem "${src}" NAME_WE)
    get_filename_component(dir "${abs}" DIRECTORY)
    file(GLOB near_headers CONFIGURE_DEPENDS "${dir}/*.cuh" "${dir}/*.hpp" "${dir}/*.h")
    set(ptx "${out_dir}/${stem}.ptx")
    set(cubin "${out_dir}/${stem}.cubin")
    set(ptxas "${out_dir}/${stem}.ptxas.txt")
    set(cmdline "${out_dir}/${stem}.flags.txt")
    # The source's own options (set_source_files_properties COMPILE_OPTIONS) come last, as in
    # the plugin's compile of it.
    get_source_file_property(src_opts "${src}" COMPILE_OPTIONS)
    if(NOT src_opts)
      set(src_opts "")
    endif()
    add_custom_command(
      OUTPUT "${ptx}" "${cubin}" "${ptxas}" "${cmdline}"
      COMMAND ${CMAKE_COMMAND} "-DNVCC=${CMAKE_CUDA_COMPILER}" "-DSRC=${abs}" "-DARCH=${arch}"
              "-DFLAGS=${flags};${src_opts}" "-DPTX=${ptx}" "-DCUBIN=${cubin}" "-DPTXAS=${ptxas}"
              "-DCMDLINE=${cmdline}" -P "${KQ_NVCC_ARTIFACTS_SCRIPT}"
      DEPENDS "${abs}" ${A_DEPENDS} ${near_headers} ${api_headers} "${KQ_NVCC_ARTIFACTS_SCRIPT}"
      COMMENT "nvcc artifacts (ptx, cubin, ptxas) of ${target}: ${stem}"
      VERBATIM)
    list(APPEND entries "ptx|${stem}.ptx|${ptx}" "cubin|${stem}.cubin|${cubin}"
                        "ptxas|${stem}.ptxas.txt|${ptxas}" "flags|${stem}.flags.txt|${cmdline}")
    list(APPEND all_outputs "${ptx}" "${cubin}" "${ptxas}" "${cmdline}")
  endforeach()

  set(gen "${CMAKE_CURRENT_BINARY_DIR}/${target}_cuda_artifacts.cpp")
  add_custom_command(
    OUTPUT "${gen}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${gen}" "-DENTRIES=${entries}"
            -P "${KQ_EMBED_ARTIFACTS_SCRIPT}"
    DEPENDS ${all_outputs} "${KQ_EMBED_ARTIFACTS_SCRIPT}" ${KQ_EMBED_ARTIFACTS_HELPERS}
    COMMENT "Embedding the nvcc artifacts of ${target}"
    VERBATIM)
  target_sources(${target} PRIVATE "${gen}")
endfunction()
