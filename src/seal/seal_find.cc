// Looking up a seal by id or unique prefix.
#include "forgek/seal/seal.h"

namespace forgek {

bool FindSeal(Store& store, const std::string& id_or_prefix, SealRecord* out, std::string* err) {
  bool found = false;
  if (!store.GetSeal(id_or_prefix, out, &found, err)) return false;
  if (found) return true;
  if (id_or_prefix.size() < 4) {
    *err = "seal id '" + id_or_prefix + "' is too short: give at least 4 characters";
    return false;
  }
  std::vector<SealRecord> all;
  if (!store.ListSeals("", "", &all, err)) return false;
  const SealRecord* match = nullptr;
  for (const SealRecord& s : all) {
    if (s.id.compare(0, id_or_prefix.size(), id_or_prefix) != 0) continue;
    if (match) {
      *err = "seal prefix '" + id_or_prefix + "' is ambiguous: " + match->id.substr(0, 12) + ", " + s.id.substr(0, 12);
      return false;
    }
    match = &s;
  }
  if (!match) {
    *err = "no seal '" + id_or_prefix + "' in the store " + store.path();
    return false;
  }
  *out = *match;
  return true;
}

}  // namespace forgek
