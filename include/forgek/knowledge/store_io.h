// Moving knowledge between stores: JSON export and import, merging another store, forgetting.
#pragma once

#include <map>
#include <string>

#include "forgek/knowledge/store.h"

namespace forgek {

// Every table of `store` as one JSON document ({"format": "forgek-knowledge", "schema": N, ...}),
// rows ordered by key, so that export -> import into an empty store -> export gives the same text.
bool ExportStore(Store& store, std::string* json_text, std::string* err);

struct ImportStats {
  std::map<std::string, int> added;    // table -> rows that were new
  std::map<std::string, int> present;  // table -> rows already there (kept as they are)
  int left_out = 0;                    // evidence of kind "attempt" from exports before schema 4
  int cached_profiles_left_out = 0;    // another store's profile cache (kProfileCachePrefix): not imported
  int decisions_updated = 0;           // decisions re-derived: added by the file or gained evidence
  int decisions_dropped = 0;           // decisions of the file left without evidence (not stored)
};

// Adds the rows of an exported document to `store` in one transaction: rows whose key is already
// present are kept (content-hashed ids make equal knowledge collide), evidence from both sides is
// kept, and every decision the file adds or gives evidence is re-derived from the evidence the store
// then holds for it, or dropped when it has none (docs/KNOWLEDGE.md). A malformed document is an error
// naming the table, row and field, and changes nothing. `origin` names the input in messages.
bool ImportStore(Store& store, const std::string& json_text, const std::string& origin, ImportStats* stats,
                 std::string* err);

// Merges the store file at `other_path` (opened read-only) into `store`.
bool MergeStore(Store& store, const std::string& other_path, ImportStats* stats, std::string* err);

// What to forget. Set exactly one of decision / operator_name / mechanism / seal (arch narrows
// operator_name and mechanism).
struct ForgetQuery {
  std::string decision;       // a decision id or unique prefix: the decision and its evidence
  std::string operator_name;  // observations and profiles of the operator, and its evidence in decisions
  std::string mechanism;      // every decision about the mechanism
  std::string arch;
  std::string seal;           // a seal id or unique prefix: the seal (its children take its parent)
};
// Removes what `q` selects in one transaction; decisions left without evidence are removed, the
// others re-derived. *removed counts rows removed per table.
bool Forget(Store& store, const ForgetQuery& q, std::map<std::string, int>* removed, std::string* err);

}  // namespace forgek
