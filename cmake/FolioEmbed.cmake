# Files compiled into the binary as byte arrays, read at configure time:
# editing one re-runs CMake (as openapi.json and the chat templates do).

# folio_embed_bytes(<var> <file>): sets <var> to the file's bytes as C array
# elements ("0x3c,0x21,..."), 16 a line. An empty file is refused: a
# zero-length array does not compile.
function(folio_embed_bytes var file)
  file(READ ${file} hex HEX)
  if(hex STREQUAL "")
    message(FATAL_ERROR "${file} is empty: nothing to embed")
  endif()
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
  string(REGEX REPLACE "(${line})" "\\1\n" bytes "${bytes}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  set(${var} "${bytes}" PARENT_SCOPE)
endfunction()
