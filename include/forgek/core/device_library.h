// forgek's device library: headers a kernel includes as <forgek/NAME.cuh>, expanded into its source.
//
// A candidate's includes of the library are replaced by the headers' text (each header once,
// between marker comments, with a #line after each so the candidate's own lines keep their
// numbers). The expanded source is what forgek hashes, compiles, stores and seals: a candidate's
// identity covers the library code it uses, and editing a header can never change a sealed kernel,
// whose stored source already holds the code it was measured with.
#pragma once

#include <string>
#include <vector>

namespace forgek {

struct DeviceHeader {
  std::string name;  // as included: "forgek/reduce.cuh"
  std::string text;
};

using DeviceLibrary = std::vector<DeviceHeader>;

// The headers built into this forgek (device_library/forgek/*.cuh), sorted by name.
const DeviceLibrary& ShippedDeviceLibrary();

// True for a header name of the library's namespace ("forgek/...").
bool IsDeviceLibraryName(const std::string& header);

// Where and why an expansion failed: an include of a name the library does not hold.
struct ExpandError {
  int line = 0;
  int column = 0;
  std::string message;
};

// `source` with every #include <forgek/...> (or "forgek/...") replaced by the header's text. A
// source that includes no library header comes back unchanged, so expanding is idempotent.
bool ExpandDeviceLibrary(const std::string& source, std::string* expanded, ExpandError* err,
                         const DeviceLibrary& library = ShippedDeviceLibrary());

// `source` expanded, or `source` itself when it names a header the library lacks (the compile of
// such a source fails on that include and says so).
std::string ExpandedSource(const std::string& source, const DeviceLibrary& library = ShippedDeviceLibrary());

// The reverse for reading: each expanded header block becomes its #include again, when expanding
// the result gives back `expanded` exactly (the blocks are this library's text); else `expanded`.
std::string CollapseDeviceLibrary(const std::string& expanded, const DeviceLibrary& library = ShippedDeviceLibrary());

// The library's API for a reader (a person or a model): each header's name and its opening comment.
std::string DeviceLibraryApi(const DeviceLibrary& library = ShippedDeviceLibrary());

}  // namespace forgek
