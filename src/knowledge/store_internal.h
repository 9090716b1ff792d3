// Helpers shared by the store's source files (not part of the public API).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/knowledge/store.h"

namespace forgek::store_detail {

// A random 128-bit id as 32 hex digits.
std::string RandomId();

// Joins fields with a unit separator and hashes them: the content id of a record.
std::string ContentId(const std::vector<std::string>& fields);

std::string ToJson(const std::vector<std::string>& v);
std::string ToJson(const std::map<std::string, double>& m);
// Parses JSON text into the given shape; malformed text yields an empty value (the store wrote it).
std::vector<std::string> StringsFromJson(const std::string& text);
std::map<std::string, double> NumbersFromJson(const std::string& text);

nlohmann::json ProfileToJson(const KernelProfile& p);
bool ProfileFromJson(const nlohmann::json& j, KernelProfile* p, std::string* err);

// Loads the decision's evidence, derives its state (DeriveDecision) and writes it back.
bool RecomputeDecision(Store& store, const std::string& decision_id, DecisionRecord* out, std::string* err);

// Schema migration 4's rule (knowledge/schema.cc) for a decision whose evidence changed by other
// means than new measurements (an import that left out `attempt` evidence, a forgotten operator):
// with no evidence left it is deleted (*dropped), else re-derived from what is left, so that expert
// observations alone make a hypothesis again. A decision the store does not hold is left alone.
bool RederiveOrDrop(Store& store, const std::string& decision_id, bool* dropped, std::string* err);

}  // namespace forgek::store_detail
