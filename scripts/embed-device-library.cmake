# Writes OUTPUT: a C++ source that holds every header of the device library (DIR/forgek/*.cuh) as
# text, so forgek can expand a candidate's #include <forgek/...> without finding files at run time.
# Run as: cmake -DDIR=<device_library> -DOUTPUT=<file.cc> -P embed-device-library.cmake
file(GLOB headers RELATIVE "${DIR}" "${DIR}/forgek/*.cuh")
list(SORT headers)
set(delimiter "fk_lib")
set(body "")
foreach(rel IN LISTS headers)
  file(READ "${DIR}/${rel}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${DIR}/${rel} holds the raw-string delimiter ')${delimiter}\"'")
  endif()
  string(APPEND body "      {\"${rel}\", R\"${delimiter}(${text})${delimiter}\"},\n")
endforeach()
set(content "// Generated from device_library/forgek/*.cuh by scripts/embed-device-library.cmake; do not edit.
#include \"device_library_data.h\"

namespace forgek {

const std::vector<DeviceHeader>& EmbeddedDeviceLibrary() {
  static const std::vector<DeviceHeader> headers = {
${body}  };
  return headers;
}

}  // namespace forgek
")
# Rewrite only on change, so that a build after an unrelated edit recompiles nothing.
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
