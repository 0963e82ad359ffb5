# Run by kq_cuda_artifacts (KqCudaArtifacts.cmake) at build time, once per .cu: one nvcc call
#   nvcc -cubin -arch=sm_<ARCH> FLAGS -Xptxas -v -keep -keep-dir <tmp> SRC -o CUBIN
# gives the cubin, the ptxas report (its stderr, -> PTXAS) and, among the kept intermediates,
# the PTX ptxas compiled (<stem>.ptx, the same text -ptx -arch=compute_<ARCH> writes) -> PTX.
# One compile instead of two matters for heavy sources (Thrust). The command line goes to
# CMDLINE. Inputs: NVCC, SRC, ARCH, FLAGS (a list), PTX, CUBIN, PTXAS, CMDLINE. A failing nvcc
# fails the build with its messages.

# One command line as a shell would take it: arguments with spaces or quotes are single-quoted.
function(kq_join_command out_var)
  set(line "")
  foreach(a IN LISTS ARGN)
    if(a MATCHES "[ \t\"'$\\\\]")
      string(REPLACE "'" "'\\''" a "${a}")
      set(a "'${a}'")
    endif()
    string(APPEND line " ${a}")
  endforeach()
  string(STRIP "${line}" line)
  set(${out_var} "${line}" PARENT_SCOPE)
endfunction()

get_filename_component(stem "${SRC}" NAME_WE)
set(keep "${CUBIN}.keep")
file(REMOVE_RECURSE "${keep}")
file(MAKE_DIRECTORY "${keep}")

set(cmd "${NVCC}" -cubin "-arch=sm_${ARCH}" ${FLAGS} -Xptxas -v -keep -keep-dir "${keep}" "${SRC}"
        -o "${CUBIN}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
kq_join_command(line ${cmd})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc failed (${rc}):\n${line}\n${out}${err}")
endif()
if(NOT EXISTS "${keep}/${stem}.ptx")
  message(FATAL_ERROR "nvcc kept no ${stem}.ptx in ${keep}:\n${line}")
endif()
file(COPY_FILE "${keep}/${stem}.ptx" "${PTX}")
file(REMOVE_RECURSE "${keep}")  # the other intermediates (preprocessed source: megabytes)
file(WRITE "${PTXAS}" "${out}${err}")
file(WRITE "${CMDLINE}" "${line}\n# the .ptx artifact is the PTX this command kept (-keep): what ptxas compiled\n")
