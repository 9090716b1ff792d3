// Content hashes: SHA-256 for cache keys, candidate identity and store deduplication.
#pragma once

#include <string>
#include <string_view>

#include "forgek/core/candidate.h"

namespace forgek {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// The identity of one evaluated kernel: its source with the device library headers it includes
// expanded (forgek/device_library.h), and the params it is compiled with. Two proposals with the
// same hash are the same experiment.
std::string CandidateHash(const std::string& source, const ParamAssignment& params);

}  // namespace forgek
