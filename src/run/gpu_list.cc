// Parsing of `--gpus all|N|LIST`.
#include "forgek/run/gpu_list.h"

#include <algorithm>
#include <cctype>

namespace forgek {
namespace {

bool ParseIndex(const std::string& text, int* out) {
  if (text.empty() || text.size() > 4) return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  *out = std::stoi(text);
  return true;
}

}  // namespace

bool ParseGpuList(const std::string& spec, int device_count, std::vector<int>* out, std::string* err) {
  out->clear();
  if (device_count <= 0) {
    *err = "no GPU on this host";
    return false;
  }
  if (spec.empty() || spec == "all") {
    for (int i = 0; i < device_count; ++i) out->push_back(i);
    return true;
  }
  if (spec.find(',') == std::string::npos) {
    int n = 0;
    if (!ParseIndex(spec, &n) || n == 0) {
      *err = "--gpus must be all, a count (2) or a list of indices (0,2 or 3,), not '" + spec + "'";
      return false;
    }
    if (n > device_count) {
      *err = "--gpus " + spec + " asks for " + std::to_string(n) + " GPUs; this host has " + std::to_string(device_count);
      return false;
    }
    for (int i = 0; i < n; ++i) out->push_back(i);
    return true;
  }
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    if (item.empty() && comma == std::string::npos) break;  // the trailing comma of "3,"
    int index = 0;
    if (!ParseIndex(item, &index)) {
      *err = "--gpus: '" + item + "' is not a device index";
      return false;
    }
    if (index >= device_count) {
      *err = "--gpus: device " + item + " does not exist (this host has " + std::to_string(device_count) + ": 0.." +
             std::to_string(device_count - 1) + ")";
      return false;
    }
    if (std::find(out->begin(), out->end(), index) != out->end()) {
      *err = "--gpus: device " + item + " is listed twice";
      return false;
    }
    out->push_back(index);
  }
  if (out->empty()) {
    *err = "--gpus: no device listed";
    return false;
  }
  return true;
}

}  // namespace forgek
