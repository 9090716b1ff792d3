// The worker on a real GPU: golden vs reference and golden vs seed on every shipped operator,
// planted failures get the right outcome while the worker keeps serving, and the harness's copy
// timing vs a cold nvbench-style measurement.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <optional>

#include "forgek/core/param_corners.h"
#include "forgek/core/params.h"
#include "forgek/worker/gpu_context.h"
#include "gpu_worker_util.h"

namespace forgek {
namespace {

using testing::CompileKernel;
using testing::CompileSeed;
using testing::LoadOp;
using testing::OperatorsRoot;

using testing::NoCache;

TEST(GpuWorker, ProbeAndCalibrateReportTheDevice) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  WorkerEvaluator ev(opts);
  ProbeResult probe;
  std::string err;
  ASSERT_TRUE(ev.Probe(&probe, &err)) << err;
  ASSERT_FALSE(probe.devices.empty());
  EXPECT_GT(probe.devices[0].sms, 0);
  EXPECT_GT(probe.devices[0].l2_bytes, 0);
  EXPECT_GE(probe.driver_version, 12000);
  DevicePeaks peaks;
  ASSERT_TRUE(ev.Peaks(&peaks, &err)) << err;
  std::printf("[ peaks    ] %s\n", ToJson(peaks).dump().c_str());
  EXPECT_GT(peaks.copy_kernel_gbps, 500);
  EXPECT_GT(peaks.bf16_tflops, 50);
  // An empty launch under graph replay costs a microsecond or so on any recent GPU; a floor of 0
  // or of 50 us would mean the measurement timed something else.
  EXPECT_GT(peaks.launch_floor_us, 0.2);
  EXPECT_LT(peaks.launch_floor_us, 50);
}

// num_sms in a manifest is the SM count of the worker's device: the supervisor learns it from the
// worker and resolves with it. The count is compared with cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)
// read here, in the test's own process; then a kernel launched with "grid": ["num_sms"] traps unless
// gridDim.x is that count (passed as a literal argument), and is correct. With the count off by one
// the same kernel traps: the check is live.
TEST(GpuWorker, LaunchesBindNumSmsToTheDevicesMultiprocessorCount) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  const ProbeResult here = worker::ProbeDevices();
  ASSERT_TRUE(here.ok && !here.devices.empty()) << here.error;
  const int sms = here.devices[0].sms;
  ASSERT_GT(sms, 0);
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  WorkerEvaluator ev(opts);
  int64_t bound = 0;
  std::string err;
  ASSERT_TRUE(ev.DeviceSms(&bound, &err)) << err;
  EXPECT_EQ(bound, sms);
  EXPECT_EQ(ev.SmCount(), sms);
  std::printf("[ num_sms  ] %s: %d SMs\n", here.devices[0].name.c_str(), sms);

  const OperatorSpec op = LoadOp(SourceDir() + "/tests/core/data/operators/tiny_scale");
  Compiler compiler(NoCache());
  auto per_sm = [&](int expected) {
    const std::string source =
        "/* forgek\n{\"name\": \"scale_per_sm\", \"launches\": [{\"kernel\": \"scale_per_sm\", \"grid\": [\"num_sms\"],\n"
        "  \"block\": [256], \"args\": [\"x\", \"y\", \"alpha\", \"N\", \"" + std::to_string(expected) + "\"]}]}\n*/\n"
        "extern \"C\" __global__ void scale_per_sm(const float* x, float* y, float alpha, int n, int expected) {\n"
        "  if (gridDim.x != (unsigned)expected) __trap();\n"
        "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = alpha * x[i];\n"
        "}\n";
    Candidate c;
    Diagnostics diags;
    EXPECT_TRUE(ParseCandidate("scale_per_sm.cu", source, &c, &diags)) << FormatDiagnostics(diags);
    EXPECT_TRUE(ValidateCandidate(c, op, &diags)) << FormatDiagnostics(diags);
    return testing::CompileLoaded(compiler, c, "scale_per_sm.cu", "candidate");
  };
  EvalRequest req;
  req.op = &op;
  req.golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
  req.candidate = per_sm(sms);
  req.time = false;
  req.seeds = 1;
  EvalResult r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::correct) << OutcomeName(r.outcome) << ": " << r.detail;
  req.candidate = per_sm(sms + 1);
  r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::crash) << "a grid of another count would not trap: " << r.detail;
}

// Checks, for every shipped operator, the kernel `pick` chooses against the golden on every config
// and two fresh seeds (correctness only), printing one line per config under `tag`.
void ExpectEveryOperatorCorrect(const char* tag, KernelUnderTest (*pick)(Compiler&, const OperatorSpec&)) {
  Compiler compiler(NoCache());
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  WorkerEvaluator ev(opts);
  std::vector<std::string> dirs = ListOperatorDirs(OperatorsRoot());
  ASSERT_FALSE(dirs.empty()) << "no operators under " << OperatorsRoot();
  for (const std::string& dir : dirs) {
    OperatorSpec op = LoadOp(dir);
    if (op.name.empty()) continue;
    EvalRequest req;
    req.op = &op;
    req.golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
    req.candidate = pick(compiler, op);
    req.time = false;
    req.seeds = 2;
    EvalResult r = ev.Evaluate(req);
    EXPECT_EQ(r.outcome, Outcome::correct) << op.name << " (" << tag << "): " << OutcomeName(r.outcome) << ": "
                                          << r.detail;
    for (const ConfigResult& c : r.configs)
      std::printf("[ %-8s ] %s %s rel_l2 %.3g max_abs %.3g\n", tag, op.name.c_str(), c.config.c_str(),
                  c.correctness.rel_l2, c.correctness.max_abs);
  }
}

// Every shipped operator: its reference (library call or expert kernel) agrees with its golden on
// every config and two fresh seeds.
TEST(GpuWorker, GoldenAgreesWithReferenceOnEveryConfigOfEveryOperator) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectEveryOperatorCorrect("golden", [](Compiler& compiler, const OperatorSpec& op) {
    return testing::Reference(compiler, op);
  });
}

// Every shipped operator's seed (where an empty store starts) is correct on every config.
TEST(GpuWorker, SeedIsCorrectOnEveryConfigOfEveryOperator) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  ExpectEveryOperatorCorrect("seed", [](Compiler& compiler, const OperatorSpec& op) {
    return CompileSeed(compiler, op, "seed");
  });
}

// The first instance of `m` in domain order (the last param varying fastest) whose constraints
// hold on `config`; false when none does.
bool FirstValidInstance(const CandidateManifest& m, const ConfigSpec& config, ParamAssignment* out) {
  uint64_t total = 1;
  for (const ParamSpec& p : m.params) total *= std::max<size_t>(1, p.values.size());
  for (uint64_t i = 0; i < std::min<uint64_t>(total, 100000); ++i) {
    ParamAssignment a;
    uint64_t index = i;
    for (auto it = m.params.rbegin(); it != m.params.rend(); ++it) {
      if (it->values.empty()) continue;
      a[it->name] = it->values[index % it->values.size()];
      index /= it->values.size();
    }
    std::string why;
    if (ConstraintsHold(m, a, config.values, NominalSmCount(m), &why)) {
      *out = std::move(a);
      return true;
    }
  }
  return false;
}

// The operator with its inputs drawn so that ties are everywhere, for the operators whose answer
// depends on a tie rule (selection, sorting, routing): small integer ranges give each row of
// 128256 thousands of equal values, each sort key ~4 million duplicates (stability then shows in
// the values), each token's router many equal experts. nullopt for the other operators.
std::optional<OperatorSpec> TieHeavy(const OperatorSpec& op) {
  const std::map<std::string, std::map<std::string, std::pair<double, double>>> ranges = {
      {"argmax_rows_bf16", {{"x", {-8, 8}}}},
      {"topk_rows_fp32", {{"x", {0, 64}}}},
      {"top_p_sampling_fp32", {{"logits", {-4, 4}}}},
      {"moe_topk_softmax", {{"logits", {-2, 2}}}},
      {"radix_sort_pairs_u32", {{"keys_in", {0, 16}}}},
  };
  auto it = ranges.find(op.name);
  if (it == ranges.end()) return std::nullopt;
  OperatorSpec tied = op;
  for (TensorSpec& t : tied.tensors) {
    auto r = it->second.find(t.name);
    if (r == it->second.end()) continue;
    t.init = InitSpec{};
    t.init.dist = "int_range";
    t.init.lo = r->second.first;
    t.init.hi = r->second.second;
  }
  // top-p: 8 logit levels put ~16000 tied maxima in each row, 63 % of the mass, so at top_p 0.5
  // theta is the maximum and the nucleus is exactly those ties (every one must be in), each of
  // weight exp(0) = 1, which fp32 sums exactly. At 0.9 the nucleus would be ~48000 tokens of three
  // weights, Z ~ 25000, and any fp32 sum (the golden's is fp64) misses u*Z by more than a token in
  // a few % of rows: the index is then ill-conditioned (operator.json's tolerance says why), which
  // is no tie rule.
  if (op.name == "top_p_sampling_fp32")
    for (ScalarSpec& s : tied.scalars)
      if (s.name == "top_p") s.value = 0.5;
  return tied;
}

// Every family of every shipped operator is correct (two fresh seeds) at the instances a search
// reaches first or at the edge of its space: its first valid instance per config, and every corner
// of its domains (each param at its min and max, the others at the first valid instance, as
// param_corners.h picks them), on each config whose constraints accept it. The families are
// written on the device library, and a primitive that breaks one shows here before a run would
// rate it `wrong`. Compiles run in parallel; evaluations one at a time on the worker.
TEST(GpuWorker, EveryFamilyIsCorrectAtTheCornersOfItsDomains) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  Compiler compiler(NoCache());
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  WorkerEvaluator ev(opts);
  struct Instance {
    size_t op = 0;
    std::string family;
    CandidateManifest manifest;
    ParamAssignment params;
    std::vector<std::string> configs;  // those whose constraints accept it
    std::future<CompileResult> compiled;
  };
  std::vector<OperatorSpec> ops;
  std::vector<KernelUnderTest> goldens;
  std::vector<Instance> instances;
  for (const std::string& dir : ListOperatorDirs(OperatorsRoot())) {
    OperatorSpec op = LoadOp(dir);
    if (op.name.empty() || op.families.empty()) continue;
    goldens.push_back(CompileKernel(compiler, op.dir + "/" + op.golden, "golden"));
    ops.push_back(op);
    for (const std::string& family : op.families) {
      const std::string path = op.dir + "/" + family;
      Candidate cand;
      Diagnostics diags;
      ASSERT_TRUE(LoadCandidateFile(path, &cand, &diags)) << FormatDiagnostics(diags);
      if (!cand.manifest.ForArch("sm90")) continue;
      std::vector<ParamAssignment> picks = DomainCorners(cand.manifest, op);
      for (const ConfigSpec& c : op.configs) {
        ParamAssignment a;
        if (FirstValidInstance(cand.manifest, c, &a) && std::find(picks.begin(), picks.end(), a) == picks.end())
          picks.push_back(a);
      }
      for (const ParamAssignment& params : picks) {
        Instance inst;
        inst.op = ops.size() - 1;
        inst.family = family;
        inst.manifest = cand.manifest;
        inst.params = params;
        for (const ConfigSpec& c : op.configs) {
          std::string why;
          if (ConstraintsHold(cand.manifest, params, c.values, NominalSmCount(cand.manifest), &why))
            inst.configs.push_back(c.name);
        }
        if (inst.configs.empty()) continue;
        CompileRequest creq;
        creq.name = path;
        creq.source = cand.source;
        creq.arch = "sm90";
        creq.options = ParamDefines(params);
        inst.compiled = compiler.Submit(creq);
        instances.push_back(std::move(inst));
      }
    }
  }
  ASSERT_FALSE(instances.empty()) << "no family of any operator was checked";
  // The same operators with inputs full of ties (TieHeavy): every instance of theirs is checked
  // again on those, where only the golden's tie rule gives the right answer.
  std::vector<std::optional<OperatorSpec>> tie_ops;
  for (const OperatorSpec& op : ops) tie_ops.push_back(TieHeavy(op));
  size_t tie_checks = 0;
  for (Instance& inst : instances) {
    CompileResult compiled = inst.compiled.get();
    ASSERT_TRUE(compiled.ok) << ops[inst.op].name << " " << inst.family << " " << ParamsJson(inst.params) << ": "
                             << compiled.Summary();
    for (const OperatorSpec* op : {&ops[inst.op], tie_ops[inst.op] ? &*tie_ops[inst.op] : nullptr}) {
      if (!op) continue;
      const bool ties = op != &ops[inst.op];
      tie_checks += ties;
      EvalRequest req;
      req.op = op;
      req.golden = goldens[inst.op];
      req.candidate = {inst.family, "", compiled.cubin, inst.manifest, inst.params};
      req.configs = inst.configs;
      req.time = false;
      req.seeds = 2;
      EvalResult r = ev.Evaluate(req);
      EXPECT_EQ(r.outcome, Outcome::correct) << op->name << (ties ? " (inputs full of ties) " : " ") << inst.family
                                            << " " << ParamsJson(inst.params) << ": " << OutcomeName(r.outcome)
                                            << ": " << r.detail;
      for (const ConfigResult& c : r.configs)
        std::printf("[ family   ] %s%s %s %s %s rel_l2 %.3g max_abs %.3g\n", op->name.c_str(), ties ? " (ties)" : "",
                    inst.family.c_str(), ParamsJson(inst.params).c_str(), c.config.c_str(), c.correctness.rel_l2,
                    c.correctness.max_abs);
    }
  }
  std::printf("[ families ] %zu instances checked, %zu of them again on inputs full of ties\n", instances.size(),
              tie_checks);
}

struct Planted {
  const char* file;
  std::vector<Outcome> expected;  // any of these
  const char* detail;             // a phrase the detail must hold ("" to skip)
};

TEST(GpuWorker, PlantedCandidatesGetTheirOutcomesAndTheWorkerKeepsServing) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  OperatorSpec op = LoadOp(OperatorsRoot() + "/softmax_fp32");
  ASSERT_FALSE(op.name.empty());
  Compiler compiler(NoCache());
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  opts.policy.stop.max_time_s = 0.3;
  WorkerEvaluator ev(opts);
  KernelUnderTest golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
  KernelUnderTest seed = CompileSeed(compiler, op, "seed");
  KernelUnderTest reference = testing::Reference(compiler, op);
  auto evaluate = [&](const KernelUnderTest& k) {
    EvalRequest req;
    req.op = &op;
    req.golden = golden;
    req.candidate = k;
    req.incumbent = reference;
    req.configs = {"65536x1024"};
    req.deadline_s = 3;
    return ev.Evaluate(req);
  };
  const std::string planted = SourceDir() + "/tests/worker/planted/";
  const std::vector<Planted> cases = {
      {"illegal_address.cu", {Outcome::crash}, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {"infinite_loop.cu", {Outcome::timeout}, "worker killed"},
      {"half_output.cu", {Outcome::wrong}, "NaN"},
      {"writes_nan.cu", {Outcome::wrong}, "NaN"},
      {"writes_nothing.cu", {Outcome::wrong}, ""},
      {"cached_result.cu", {Outcome::wrong}, ""},
      {"reads_out_of_bounds.cu", {Outcome::crash, Outcome::wrong}, ""},
  };
  for (const Planted& p : cases) {
    std::string path = planted + p.file;
    if (access(path.c_str(), R_OK) != 0) path = "tests/worker/planted/" + std::string(p.file);
    KernelUnderTest k = CompileKernel(compiler, path, p.file);
    EvalResult r = evaluate(k);
    bool expected = false;
    for (Outcome o : p.expected) expected |= r.outcome == o;
    EXPECT_TRUE(expected) << p.file << ": got " << OutcomeName(r.outcome) << ": " << r.detail;
    EXPECT_NE(r.detail.find(p.detail), std::string::npos) << p.file << ": " << r.detail;
    std::printf("[ planted  ] %-24s -> %-8s %.2fs %s\n", p.file, OutcomeName(r.outcome), r.wall_s,
                r.detail.substr(0, 160).c_str());
    // The next candidate is served (by a respawned worker after a crash or timeout).
    EvalResult next = evaluate(seed);
    EXPECT_TRUE(OutcomeTimed(next.outcome))
        << "after " << p.file << ": " << OutcomeName(next.outcome) << ": " << next.detail;
  }
  std::printf("[ planted  ] worker spawns: %d\n", ev.client().spawns());
}

// The default allowance for dynamic shared memory is 48 KB minus the kernel's static shared
// memory: a kernel asking for 48 KB of dynamic memory beside any static memory must still launch.
TEST(GpuWorker, StaticSharedMemoryBesideFull48KDynamicLaunches) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  OperatorSpec op = LoadOp(OperatorsRoot() + "/softmax_fp32");
  ASSERT_FALSE(op.name.empty());
  Compiler compiler(NoCache());
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  opts.policy.stop.max_time_s = 0.3;
  WorkerEvaluator ev(opts);
  EvalRequest req;
  req.op = &op;
  req.golden = CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
  req.candidate =
      CompileKernel(compiler, SourceDir() + "/tests/worker/shared_memory/static_plus_48k_dynamic.cu", "48k");
  req.incumbent = testing::Reference(compiler, op);
  req.configs = {"65536x1024"};
  req.deadline_s = 3;
  EvalResult r = ev.Evaluate(req);
  EXPECT_TRUE(OutcomeTimed(r.outcome)) << OutcomeName(r.outcome) << ": " << r.detail;
}

}  // namespace
}  // namespace forgek
