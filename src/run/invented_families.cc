// Families a model wrote in earlier runs that won there, offered to this run as families.
#include "invented_families.h"

#include <spdlog/spdlog.h>

#include <set>

#include "forgek/agent/agent.h"

namespace forgek {

bool LoadInventedFamilies(Store& store, const OperatorSpec& op, const std::string& arch, size_t limit,
                          std::vector<Candidate>* out, std::string* err) {
  out->clear();
  std::vector<TimedAttempt> past;  // best speedup first
  if (!store.ListTimedAttempts(op.name, arch, 400, &past, err)) return false;
  std::set<std::string> seen;
  for (const TimedAttempt& a : past) {
    if (out->size() >= limit) break;
    if (a.outcome != "faster" || a.family.rfind(kInventedFamilyPrefix, 0) != 0) continue;
    if (!seen.insert(a.family).second) continue;
    CandidateRecord rec;
    bool found = false;
    if (!store.GetCandidate(a.candidate_hash, &rec, &found, err)) return false;
    if (!found) continue;
    Candidate family;
    Diagnostics diags;
    if (!ParseCandidate(a.family, rec.source, &family, &diags) || !ValidateCandidate(family, op, &diags)) {
      spdlog::warn("family {} of an earlier run skipped: {}", a.family, FormatDiagnostics(diags));
      continue;
    }
    family.path = a.family;
    out->push_back(std::move(family));
  }
  return true;
}

}  // namespace forgek
