// The instances of a candidate's param domains that validation compiles: the first valid one and
// every corner (each param with a domain at its smallest and largest value).
#pragma once

#include <vector>

#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"

namespace forgek {

// True when the constraints of `m` hold for `params` under at least one config of `op` (an
// instance no config accepts is never launched, so it need not compile).
bool ValidUnderSomeConfig(const CandidateManifest& m, const OperatorSpec& op, const ParamAssignment& params);

// The first valid assignment in domain order (odometer, last param fastest); false when none of
// the first 100000 is valid under any config.
bool FirstValidInstance(const CandidateManifest& m, const OperatorSpec& op, ParamAssignment* out);

// The first valid instance, then for each param with a domain: that param at its minimum and at
// its maximum, the others as in the first instance. A corner the constraints exclude under every
// config is moved to the nearest value of that param they accept (it is then still the param's
// extreme among valid instances of that neighbourhood). Distinct, in that order: at most
// 1 + 2 * params instances. Empty when no instance is valid.
std::vector<ParamAssignment> DomainCorners(const CandidateManifest& m, const OperatorSpec& op);

}  // namespace forgek
