// A seal as its C export holds it: the kernels it embeds, a dispatch seal's table, loaded from the store.
#pragma once

#include <string>
#include <vector>

#include "forgek/compile/compile.h"
#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
#include "forgek/knowledge/store.h"

namespace forgek {

// One kernel the export embeds: an entry of the seal's dispatch table, or the seal's own kernel.
struct CKernel {
  int entry = 0;  // its number in the C (plan.kernel): the dispatch entry, 0 for a seal of one kernel
  std::string label;
  std::string candidate_hash;
  Candidate candidate;
  ParamAssignment params;
  size_t cubin = 0;  // index into CSeal::cubins
};

// A row of a dispatch table: a suite config's values and the kernel serving them.
struct CRow {
  std::string config, why;
  Bindings values;
  int kernel = -1;        // index into CSeal::kernels; -1: the expert reference
  std::string reference;  // its label, for a reference row
};

struct CSeal {
  const SealRecord* seal = nullptr;
  const OperatorSpec* op = nullptr;
  std::string prefix, upper;  // forgek_<op>, FORGEK_<OP>
  std::vector<CKernel> kernels;
  std::vector<std::string> cubins, cubin_shas;
  bool dispatch = false;
  std::vector<CRow> rows;
  int fallback = 0;              // index into kernels; -1: the expert reference
  std::string reference;         // the expert reference's label, where the rule can reach it
  bool rebuilt = false;          // a cubin was compiled now (the store kept none)
};

// Fills *s with `seal` of `op` as the export embeds it: the operator's names checked as C
// parameters, every kernel the seal can serve with its stored candidate and its sealed cubin (the
// store's; else rebuilt, which must hash to the sealed one unless `allow_rebuilt`, as ExportSeal
// requires), and a dispatch seal's table and fallback. `seal` and `op` must outlive *s.
bool LoadCSeal(Store& store, Compiler& compiler, const SealRecord& seal, const OperatorSpec& op, bool allow_rebuilt,
               CSeal* s, std::string* err);

}  // namespace forgek
