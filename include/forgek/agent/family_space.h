// The parameter space of one family: valid instances, sampling, mutation and crossover.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"

namespace forgek {

using Rng = std::mt19937_64;

// Which instances a space holds: those whose constraints hold under every config of the operator
// (what one kernel sealed alone needs: ablations and a model's proposals), or under at least one
// (the builtin search: an instance that serves some configs measures there and can serve them in a
// dispatch seal).
enum class Coverage { every_config, some_config };

// A family's genes are its params; an instance is valid when its params are in their domains and
// its constraints hold under the configs its coverage asks for.
class FamilySpace {
 public:
  FamilySpace(const Candidate& family, const OperatorSpec& op, Coverage coverage = Coverage::every_config);

  bool Valid(const ParamAssignment& params, std::string* why = nullptr) const;

  // A uniformly drawn valid instance; false when none exists (after exhaustive search of small
  // spaces, or many failed draws of large ones).
  bool Sample(Rng& rng, ParamAssignment* out) const;

  // `parent` with one or two genes moved to a neighbouring value of their domain (valid, and
  // different from the parent when any valid neighbour exists); false when none was found.
  bool Mutate(const ParamAssignment& parent, Rng& rng, ParamAssignment* out) const;

  // Each gene taken from `a` or `b` at random; false when no valid mix was found.
  bool Crossover(const ParamAssignment& a, const ParamAssignment& b, Rng& rng, ParamAssignment* out) const;

  // `base` with the genes named in `settings` overridden where the family has them and the value
  // is in the domain; returns how many genes were set.
  int Apply(const ParamAssignment& settings, ParamAssignment* base) const;

  // Product of domain sizes (saturating).
  uint64_t Size() const;
  const Candidate& family() const { return family_; }

 private:
  ParamAssignment Draw(Rng& rng) const;
  const Candidate& family_;
  const OperatorSpec& op_;
  Coverage coverage_;
};

}  // namespace forgek
