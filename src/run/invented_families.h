// Families a model wrote in earlier runs that won there, offered to this run as families.
#pragma once

#include <string>
#include <vector>

#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
#include "forgek/knowledge/store.h"

namespace forgek {

// The store's families of `op` on `arch` whose key starts with kInventedFamilyPrefix and which
// were rated faster than their incumbent in some run (sealed ones were), parsed and valid for
// `op` today; each Candidate's path is its family key, so agents name it as the store does.
// At most `limit`, best speedup first. A stored family that no longer parses is skipped with a
// warning (the operator may have changed since).
bool LoadInventedFamilies(Store& store, const OperatorSpec& op, const std::string& arch, size_t limit,
                          std::vector<Candidate>* out, std::string* err);

}  // namespace forgek
