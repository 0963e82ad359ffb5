# kq_byte_array(<path> <out_var>): the bytes of a non-empty file as the initialisers of a C++
# byte array, each as 0xNN followed by a comma, 24 to a line (every line after the first indented
# by four spaces). For the scripts that embed a file in a generated source (no xxd needed).
function(kq_byte_array path out_var)
  file(READ "${path}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REPEAT "0x..," 24 line)  # CMake regexes have no {n}
  string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")
  set(${out_var} "${bytes}" PARENT_SCOPE)
endfunction()
