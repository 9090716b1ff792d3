// Every golden kernel shipped or used by the tests writes its floating outputs as fp32 (the golden's
// contract, docs/operator-format.md "Golden outputs": the worker's truth buffer of a floating output
// is f32). A golden that wrote bf16 into it filled half the buffer with pairs of bf16 read as one
// float, and the GPU test that used it failed on a correct kernel (wgmma_pipeline_tma_store).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
#include "test_util.h"

namespace forgek {
namespace {

// The source without comments (a signature's parameters may carry shape comments with commas).
std::string WithoutComments(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "//") == 0) {
      i = s.find('\n', i);
      if (i == std::string::npos) break;
    } else if (s.compare(i, 2, "/*") == 0) {
      i = s.find("*/", i + 2);
      if (i == std::string::npos) break;
      ++i;
      out += ' ';
      continue;
    }
    out += s[i];
  }
  return out;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

// The declarations of `kernel`'s parameters, in order; empty when its definition is not found: the
// first "kernel(" after a "__global__" whose parameter list ends before a '{'.
std::vector<std::string> Parameters(const std::string& code, const std::string& kernel) {
  for (size_t g = code.find("__global__"); g != std::string::npos; g = code.find("__global__", g + 1)) {
    const size_t brace = code.find('{', g);
    const size_t name = code.find(kernel + "(", g) != std::string::npos ? code.find(kernel + "(", g)
                                                                      : code.find(kernel + " (", g);
    if (name == std::string::npos || name > brace) continue;
    const size_t open = code.find('(', name), close = code.find(')', open);
    std::vector<std::string> out;
    std::string part;
    for (char c : code.substr(open + 1, close - open - 1) + ",") {
      if (c != ',') {
        part += c;
        continue;
      }
      out.push_back(Trim(part));
      part.clear();
    }
    return out;
  }
  return {};
}

bool Floating(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::e4m3 || t == DType::e5m2; }

TEST(GoldenOutputs, EveryGoldenKernelWritesItsFloatingOutputsAsFp32) {
  std::vector<std::string> dirs;
  for (const char* root : {"/operators", "/tests/worker/device_library", "/tests/held_out"})
    for (const std::string& d : ListOperatorDirs(SourceDir() + root)) dirs.push_back(d);
  int checked = 0;
  for (const std::string& dir : dirs) {
    OperatorSpec op;
    Diagnostics diags;
    ASSERT_TRUE(LoadOperator(dir, &op, &diags)) << FormatDiagnostics(diags);
    if (op.golden.size() < 3 || op.golden.compare(op.golden.size() - 3, 3, ".cu") != 0) continue;  // a PyTorch golden
    Candidate golden;
    ASSERT_TRUE(LoadCandidateFile(dir + "/" + op.golden, &golden, &diags)) << FormatDiagnostics(diags);
    const std::string code = WithoutComments(golden.source);
    for (const LaunchSpec& launch : golden.manifest.launches) {
      const std::vector<std::string> params = Parameters(code, launch.kernel);
      ASSERT_FALSE(params.empty()) << dir << ": no definition of " << launch.kernel;
      for (size_t i = 0; i < launch.args.size() && i < params.size(); ++i) {
        const TensorSpec* t = op.FindTensor(launch.args[i]);
        if (!t || t->role != TensorRole::output || !Floating(t->dtype)) continue;
        ++checked;
        EXPECT_TRUE(params[i].rfind("float*", 0) == 0 || params[i].rfind("float *", 0) == 0)
            << dir << "/" << op.golden << ": " << launch.kernel << " writes output " << t->name << " ("
            << DTypeName(t->dtype) << ") through '" << params[i] << "'; a golden writes fp32 (float*)";
      }
    }
  }
  EXPECT_GT(checked, 60) << "the goldens' floating outputs were not found";
}

}  // namespace
}  // namespace forgek
