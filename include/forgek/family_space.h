// The parameter space of one family: valid instances, sampling, mutation and crossover.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "forgek/candidate.h"
#include "forgek/operator_spec.h"

namespace forgek {

using Rng = std::mt19937_64;

// A family's genes are its params; an instance is valid when every constraint holds under every
// config of the operator (a seal must serve every config with one assignment).
class FamilySpace {
 public:
  FamilySpace(const Candidate& family, const OperatorSpec& op);

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
};

}  // namespace forgek
