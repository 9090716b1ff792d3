// The search can draw an instance of every shipped family: FamilySpace, the builtin agent's own
// space, finds one whose constraints hold under every config of its operator.
#include "forgek/agent/family_space.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "forgek/core/diagnostic.h"
#include "test_util.h"

namespace forgek {
namespace {

TEST(ShippedFamilies, TheSearchCanDrawAnInstanceOfEach) {
  namespace fs = std::filesystem;
  int families = 0;
  for (const fs::directory_entry& op_dir : fs::directory_iterator(SourceDir() + "/operators")) {
    if (!fs::is_regular_file(op_dir.path() / "operator.json")) continue;
    OperatorSpec op;
    Diagnostics op_diags;
    ASSERT_TRUE(LoadOperator(op_dir.path().string(), &op, &op_diags)) << FormatDiagnostics(op_diags);
    for (const std::string& rel : op.families) {
      const std::string where = op.name + "/" + rel;
      Candidate c;
      Diagnostics diags;
      ASSERT_TRUE(LoadCandidateFile((op_dir.path() / rel).string(), &c, &diags)) << where << FormatDiagnostics(diags);
      Rng rng(1);
      ParamAssignment drawn;
      EXPECT_TRUE(FamilySpace(c, op).Sample(rng, &drawn))
          << where << ": no instance's constraints hold under every config of " << op.name
          << ", so no search ever draws one (let one instance serve every shape, with `when` if it must)";
      ++families;
    }
  }
  EXPECT_GE(families, 9) << "the shipped families were not found under " << SourceDir() << "/operators";
}

}  // namespace
}  // namespace forgek
