// Param assignments as JSON objects ({"BM":128,"STAGES":4}): how the store, seals and agents keep them.
#pragma once

#include <string>

#include "forgek/core/candidate.h"

namespace forgek {

// Parses a params JSON object into an assignment; every member must be an integer ("" is {}).
bool ParseParamsJson(const std::string& text, ParamAssignment* out, std::string* err);

// The integer members of a JSON object, others ignored; {} for text that is not an object.
ParamAssignment IntegerParamsOf(const std::string& text);

// An assignment as a JSON object, members in name order.
std::string ParamsJson(const ParamAssignment& params);

}  // namespace forgek
