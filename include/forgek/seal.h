// Seals: finding them, exporting a self-contained folder, and comparing two of them.
#pragma once

#include <string>

#include "forgek/compile.h"
#include "forgek/operator_spec.h"
#include "forgek/store.h"

namespace forgek {

// A seal by full id or unique prefix (at least 4 characters).
bool FindSeal(Store& store, const std::string& id_or_prefix, SealRecord* out, std::string* err);

// Writes the folder of docs/seal-format.md: kernel.cu, kernel.cubin, launch.json (launches
// resolved per config), seal.json (metadata and lineage), README.md. The cubin is rebuilt from
// the sealed source and must hash to the sealed cubin hash (else an error naming both toolchains,
// unless `allow_rebuilt` is set). The folder must not exist or be empty; it is written in a
// temporary sibling and renamed, so a failure leaves nothing half-written.
bool ExportSeal(Store& store, const SealRecord& seal, const OperatorSpec& op, Compiler& compiler,
                const std::string& dir, bool allow_rebuilt, std::string* err);

// Side-by-side differences of two seals: lineage, params, mechanisms, per-config times.
std::string SealDiffText(Store& store, const SealRecord& a, const SealRecord& b);
// The same comparison as JSON: both seals, params as [a, b], per-config times, descent.
std::string SealDiffJson(Store& store, const SealRecord& a, const SealRecord& b);

// One seal as JSON (the seal.json of an export, without the launches).
std::string SealJson(const SealRecord& seal, const std::vector<SealRecord>& lineage);

}  // namespace forgek
