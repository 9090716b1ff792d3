// CUPTI result codes as readable errors.
#include "cupti_status.h"

namespace forgek {

bool CuptiOk(CUptiResult status, const char* what, std::string* err) {
  if (status == CUPTI_SUCCESS) return true;
  const char* name = nullptr;
  const char* message = nullptr;
  cuptiGetResultString(status, &name);
  cuptiGetErrorMessage(status, &message);
  if (err) {
    *err = std::string(what) + ": " + (name ? name : "CUPTI error " + std::to_string(int(status)));
    if (message && *message) *err += std::string(": ") + message;
  }
  return false;
}

}  // namespace forgek
