// Which of a decision's comparisons rest on measurements of their own (docs/KNOWLEDGE.md).
#pragma once

#include <cstddef>
#include <vector>

#include "forgek/knowledge/store.h"

namespace forgek {

// The indices into `evidence` of the comparisons a decision counts: a largest set of its
// `comparison` and `ablation` rows (speedup > 0) in which no attempt's measurement appears twice.
// Search comparisons name their two attempts in detail_json ("attempts", this setting's first); a
// comparison that names none, and every ablation (both sides timed afresh, interleaved), is a
// measurement of its own. Ascending; the choice among equally large sets follows the order of
// (created_at, id), when and what was compared, never their results.
std::vector<size_t> IndependentComparisons(const std::vector<EvidenceRecord>& evidence);

}  // namespace forgek
