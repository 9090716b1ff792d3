// Ablations of a run's best candidate: the best with one controlled param moved, to be timed
// interleaved against the best itself.
#pragma once

#include <vector>

#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"

namespace forgek {

// Up to `max` variants of `best`, each differing from it in one param of one control group of
// `family` (moved to a neighbouring value of its domain, lower first), valid under every config.
// Groups take turns, so a small budget covers as many mechanisms as it can.
std::vector<ParamAssignment> AblationVariants(const Candidate& family, const OperatorSpec& op,
                                              const ParamAssignment& best, int max);

}  // namespace forgek
