// CI gate: every shipped kernel (operators/**/*.cu) compiles for sm_90a without a single spill; a
// search space (seed or family) at every corner of its domains.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <future>
#include <map>
#include <cstdint>

#include "forgek/core/candidate.h"
#include "forgek/compile/compile.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/param_corners.h"
#include "test_util.h"

namespace forgek {
namespace {
namespace fs = std::filesystem;

// The tree under test (FORGEK_SOURCE_DIR at run time, so one build can check another checkout).
const std::string kOperatorsDir = SourceDir() + "/operators";

// Paths relative to operators/, sorted, so test names are stable.
std::vector<std::string> ShippedKernelFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(kOperatorsDir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".cu")
      files.push_back(fs::relative(it->path(), kOperatorsDir).string());
  std::sort(files.begin(), files.end());
  return files;
}

// One instance of a file: its -D options and the manifest's kernel names.
struct Instance {
  std::string label;  // "first valid params" / "last valid params"
  std::vector<std::string> defines;
  std::future<CompileResult> result;
};

struct FileJob {
  bool loaded = false;
  std::string load_error;
  std::vector<std::string> launched_kernels;
  std::vector<Instance> instances;
};

// The operator a kernel file belongs to: operators/<name>/... -> operators/<name>.
bool LoadOwningOperator(const std::string& rel, OperatorSpec* op, std::string* err) {
  std::string name = fs::path(rel).begin()->string();
  Diagnostics diags;
  if (!LoadOperator(kOperatorsDir + "/" + name, op, &diags)) {
    *err = FormatDiagnostics(diags);
    return false;
  }
  return true;
}

// An instance is worth compiling when its constraints hold for at least one config (compiling
// does not depend on the config; an instance no config accepts is never launched).
bool ValidSomewhere(const CandidateManifest& m, const OperatorSpec& op, const ParamAssignment& a) {
  for (const ConfigSpec& c : op.configs) {
    std::string why;
    if (ConstraintsHold(m, a, c.values, NominalSmCount(m), &why)) return true;  // no device: the nominal count
  }
  return false;
}

// The first and last valid instances in domain order (params in file order, the last one
// varying fastest); a file without domains has exactly one instance.
std::vector<std::pair<std::string, ParamAssignment>> Picks(const CandidateManifest& m, const OperatorSpec& op) {
  uint64_t total = 1;
  for (const ParamSpec& p : m.params) total *= std::max<size_t>(1, p.values.size());
  total = std::min<uint64_t>(total, 200000);
  auto at = [&](uint64_t index) {
    ParamAssignment a;
    for (auto it = m.params.rbegin(); it != m.params.rend(); ++it) {
      if (it->values.empty()) continue;
      a[it->name] = it->values[index % it->values.size()];
      index /= it->values.size();
    }
    return a;
  };
  std::vector<std::pair<std::string, ParamAssignment>> picks;
  for (uint64_t i = 0; i < total; ++i)
    if (ValidSomewhere(m, op, at(i))) {
      picks.push_back({"first valid params", at(i)});
      break;
    }
  for (uint64_t i = total; i-- > 0;)
    if (ValidSomewhere(m, op, at(i))) {
      if (picks.empty() || picks.front().second != at(i)) picks.push_back({"last valid params", at(i)});
      break;
    }
  return picks;
}

class ShippedKernel : public ::testing::TestWithParam<std::string> {
 protected:
  // Each test submits only its own file: ctest runs every test in its own process (in parallel),
  // so compiling everything up front would repeat the whole suite's work in each of them.
  static void SetUpTestSuite() {
    CompilerOptions opts;  // no cache: CI proves the files compile today
    compiler_ = new Compiler(opts);
    jobs_ = new std::map<std::string, FileJob>;
  }

  static void TearDownTestSuite() {
    delete jobs_;
    delete compiler_;
  }

  static void Submit(const std::string& rel) {
    FileJob& job = (*jobs_)[rel];
    Candidate cand;
    Diagnostics diags;
    if (!LoadCandidateFile(kOperatorsDir + "/" + rel, &cand, &diags)) {
      job.load_error = FormatDiagnostics(diags);
      return;
    }
    OperatorSpec op;
    if (!LoadOwningOperator(rel, &op, &job.load_error)) return;
    job.loaded = true;
    for (const LaunchSpec& l : cand.manifest.launches) job.launched_kernels.push_back(l.kernel);
    // A search space (a seed or a family) compiles every corner (each param at its min and max,
    // the others at the first valid instance, as `ops validate` does) and its last valid
    // instance (every param at its far end); a fixed kernel its one instance.
    std::vector<std::pair<std::string, ParamAssignment>> picks = Picks(cand.manifest, op);
    if (cand.manifest.IsFamily()) {
      for (ParamAssignment& corner : DomainCorners(cand.manifest, op)) {
        const bool seen = std::any_of(picks.begin(), picks.end(), [&](const auto& p) { return p.second == corner; });
        if (!seen) picks.push_back({"corner", std::move(corner)});
      }
    }
    if (picks.empty()) {
      job.loaded = false;
      job.load_error = "no param assignment satisfies the constraints under any config";
      return;
    }
    for (auto& [label, params] : picks) {
      CompileRequest req;
      req.name = fs::path(rel).filename().string();
      req.source = cand.source;
      req.arch = "sm90";
      req.options = ParamDefines(params);
      req.timeout_s = 300;
      job.instances.push_back({label, req.options, compiler_->Submit(req)});
    }
  }

  static Compiler* compiler_;
  static std::map<std::string, FileJob>* jobs_;
};

Compiler* ShippedKernel::compiler_ = nullptr;
std::map<std::string, FileJob>* ShippedKernel::jobs_ = nullptr;

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : " ") + s;
  return out.empty() ? "(no -D options)" : out;
}

TEST_P(ShippedKernel, CompilesForSm90aWithoutSpills) {
  const std::string& rel = GetParam();
  Submit(rel);
  FileJob& job = jobs_->at(rel);
  ASSERT_TRUE(job.loaded) << "operators/" << rel << ": manifest does not load:\n" << job.load_error;
  for (Instance& inst : job.instances) {
    CompileResult r = inst.result.get();
    std::string where = "operators/" + rel + " (" + inst.label + ": " + Join(inst.defines) + ")";
    if (!r.ok) {
      ADD_FAILURE() << where << " does not compile for sm_90a:\n" << r.Summary() << "\n--- NVRTC log ---\n" << r.log;
      continue;
    }
    for (const KernelResources& k : r.kernels)
      EXPECT_TRUE(k.spill_store_bytes == 0 && k.spill_load_bytes == 0)
          << where << ": kernel " << k.kernel << " spills " << k.spill_store_bytes << " B stores / "
          << k.spill_load_bytes << " B loads at " << k.registers << " registers";
    for (const KernelResources& k : r.kernels)
      EXPECT_EQ(k.wgmma_serialized, "") << where << ": kernel " << k.kernel << ": ptxas serialised its wgmmas ("
                                        << k.wgmma_serialized << "): none overlaps another";
    for (const std::string& name : job.launched_kernels) {
      bool compiled = std::any_of(r.kernels.begin(), r.kernels.end(),
                                  [&](const KernelResources& k) { return k.kernel == name; });
      EXPECT_TRUE(compiled) << where << ": the manifest launches '" << name
                            << "' but no entry function of that name was compiled (is it extern \"C\" __global__?)";
    }
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Operators, ShippedKernel, ::testing::ValuesIn(ShippedKernelFiles()), TestName);

TEST(ShippedKernels, OperatorsFolderHasKernels) {
  EXPECT_FALSE(ShippedKernelFiles().empty()) << "no .cu file under " << kOperatorsDir;
}

}  // namespace
}  // namespace forgek
