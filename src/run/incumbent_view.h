// What an agent is told about a dispatch incumbent: per config, the kernel that serves it.
#pragma once

#include <string>
#include <vector>

#include "forgek/agent/agent.h"
#include "forgek/knowledge/store.h"
#include "forgek/seal/incumbent.h"

namespace forgek {

// Per config of `configs` (in that order), the kernel of the dispatch incumbent `inc` that serves
// it, with its source (from `store`; the seal's own kernel and the expert's from `inc` and
// `expert`). Empty when `inc` is not a dispatch. False with `err` on a store error.
bool DescribeDispatchIncumbent(const Incumbent& inc, const Incumbent& expert, const std::vector<std::string>& configs,
                               Store* store, std::vector<IncumbentServer>* out, std::string* err);

}  // namespace forgek
