// Which GPUs of the host a command uses: `--gpus all|N|LIST`.
#pragma once

#include <string>
#include <vector>

namespace forgek {

// "all": every device; "N" (a plain number): the first N; "LIST": comma-separated device
// indices ("0,2,3"; a single index is written "3,"). Indices are checked against
// `device_count`, duplicates rejected. False with a message naming the problem.
bool ParseGpuList(const std::string& spec, int device_count, std::vector<int>* out, std::string* err);

}  // namespace forgek
