# kq_write_if_changed(<path> <text>): writes text to path unless the file already holds exactly
# that text, so that a generated source keeps its time stamp, and nothing that compiles it is
# rebuilt, when its text did not change. For the scripts run at build time (cmake -P).
function(kq_write_if_changed path text)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${text}")
endfunction()
