// Reading an input file whole, with its size checked before a byte is read.
#pragma once

#include <cstdint>
#include <string>

namespace forgek {

// Reads the regular file `path` into *out when it holds at most `max_bytes`. The file is opened
// without blocking (a FIFO put in its place cannot hang the open) and its kind and size are taken
// from the opened descriptor (fstat) before anything is read, so a 20 GiB file costs one system
// call instead of an allocation that fails with std::bad_alloc. A file that grows while it is read
// is cut at max_bytes + 1 and refused too. On failure *why says what is wrong, starting with "it"
// so that callers can put the file's name before it: "it is 21474836480 bytes (20 GiB); a
// candidate's source may be at most 1048576 bytes (1 MiB)", "it is a FIFO, not a regular file".
// `what` names the kind of file for that message ("a candidate's source", "a JSON file").
bool ReadFileLimited(const std::string& path, uint64_t max_bytes, const std::string& what, std::string* out,
                     std::string* why);

// A byte count for people: "1 MiB", "64 MiB", "20 GiB", "1.5 KiB", "300 bytes".
std::string BytesText(uint64_t bytes);

}  // namespace forgek
