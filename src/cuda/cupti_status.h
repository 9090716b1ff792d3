// CUPTI result codes as readable errors, shared by the activity collector and the range profiler.
#pragma once

#include <cupti_result.h>

#include <string>

namespace forgek {

// True on CUPTI_SUCCESS; else fills `err` with "<what>: CUPTI_ERROR_...: <message>".
bool CuptiOk(CUptiResult status, const char* what, std::string* err);

}  // namespace forgek
