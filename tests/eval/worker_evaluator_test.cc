// WorkerEvaluator's outcomes from scripted worker replies: crash, timeout and respawn, wrong,
// impossible speed, faster/slower, unsupported checks.
#include "forgek/eval/worker_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "test_util.h"

namespace forgek {
namespace {

// A fake worker: answers hello and calibrate, and every evaluate with `evaluate_fields`.
// Its device has `sms` SMs.
std::vector<std::string> FakeWorker(const std::string& evaluate_fields, const std::string& on_evaluate = "",
                                    const std::string& peaks = R"("copy_kernel_gbps":4000,"tf32_tflops":400)",
                                    int sms = 132) {
  std::string script = R"sh(while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9-]*\).*/\1/')
  type=$(printf '%s' "$line" | sed 's/.*"type":"\([a-z]*\)".*/\1/')
  case "$type" in
    hello) printf '{"id":%s,"type":"reply","ok":true,"driver_version":13000,"devices":[{"index":0,"name":"Fake GPU","cc":"9.0","sms":)sh" + std::to_string(sms) + R"sh(,"l2_bytes":1,"memory_bytes":1}]}\n' "$id" ;;
    calibrate) printf '{"id":%s,"type":"reply","ok":true,"peaks":{)sh" + peaks + R"sh(}}\n' "$id" ;;
    evaluate) )sh" + on_evaluate + R"sh( printf '{"id":%s,"type":"reply",%s}\n' "$id" ')sh" + evaluate_fields + R"sh(' ;;
    *) printf '{"id":%s,"type":"reply","ok":true}\n' "$id" ;;
  esac
done)sh";
  return {"/bin/sh", "-c", script};
}

class WorkerEvaluatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    op_.name = "copy_f32";
    op_.path = "/ops/copy_f32/operator.json";
    op_.params = {"N"};
    op_.configs = {{"small", {{"N", 1024}}}, {"large", {{"N", 1 << 20}}}};
    TensorSpec x;
    x.name = "x";
    x.shape = {"N"};
    TensorSpec y;
    y.name = "y";
    y.role = TensorRole::output;
    y.shape = {"N"};
    op_.tensors = {x, y};
    op_.flops = "0";
    op_.bytes = "8*N";
    op_.tolerance.rel_l2 = 1e-6;
    op_.tolerance.max_abs = 1e-6;
    LaunchSpec l;
    l.kernel = "copy";
    l.grid = {"ceil_div(N, 256)"};
    l.block = {"256"};
    l.args = {"x", "y", "N"};
    kernel_.manifest.launches = {l};
    kernel_.cubin = "not really a cubin";
    kernel_.label = "candidate";
  }

  EvalResult Run(WorkerEvaluator& ev, bool with_incumbent = true) {
    EvalRequest req;
    req.op = &op_;
    req.golden = kernel_;
    req.golden.label = "golden";
    req.candidate = kernel_;
    if (with_incumbent) req.incumbent = {"reference", "cublas.fake", "", {}, {}};
    req.deadline_s = 1;
    return ev.Evaluate(req);
  }

  WorkerEvaluatorOptions Opts(std::vector<std::string> command) {
    WorkerEvaluatorOptions o;
    o.command = std::move(command);
    return o;
  }

  OperatorSpec op_;
  KernelUnderTest kernel_;
};

const char* kTimed =
    R"sh("ok":true,"status":"ok","correctness":{"ok":true,"rel_l2":1e-9,"max_abs":0},"timed":true,)sh"
    R"sh("candidate_timing":{"median_us":%s,"rel_noise":0.01,"samples":30},)sh"
    R"sh("incumbent_timing":{"median_us":12,"rel_noise":0.01,"samples":30})sh";

std::string Timed(const std::string& median) {
  std::string s = kTimed;
  return s.replace(s.find("%s"), 2, median);
}

TEST_F(WorkerEvaluatorTest, FasterWithSpeedupAndSol) {
  WorkerEvaluator ev(Opts(FakeWorker(Timed("10"))));
  EvalResult r = Run(ev);
  ASSERT_EQ(r.outcome, Outcome::faster) << r.detail;
  ASSERT_EQ(r.configs.size(), 2u);
  EXPECT_DOUBLE_EQ(r.configs[0].speedup, 1.2);
  EXPECT_NEAR(r.geomean_speedup, 1.2, 1e-12);
  // large: 8 MiB at 4000 GB/s = 2.097 us; 10 us measured = 21% of SOL.
  EXPECT_NEAR(r.configs[1].sol_us, 8.0 * (1 << 20) / 4000e9 * 1e6, 1e-9);
  EXPECT_NEAR(r.configs[1].sol_pct, r.configs[1].sol_us / 10 * 100, 1e-9);
}

// Recorded timings: 2.3 us on both configs, with a measured launch floor of 1 us. The small config
// moves 8 KiB, a roofline of 0.002 us: against it alone the kernel would sit at 0.1 % of SOL with
// all its headroom left; its bound is the floor, so it is at 43 %. The large config (8 MiB) is
// bound by its roofline, at the calibrated bandwidth and, a higher bar, at the datasheet's.
TEST_F(WorkerEvaluatorTest, TheBoundIsTheLongerOfTheRooflineAndTheLaunchFloor) {
  WorkerEvaluatorOptions o =
      Opts(FakeWorker(Timed("2.3"), "", R"("copy_kernel_gbps":4000,"tf32_tflops":400,"launch_floor_us":1.0)"));
  o.datasheet.dram_gbps = 4800;
  WorkerEvaluator ev(o);
  EvalResult r = Run(ev);
  ASSERT_EQ(r.configs.size(), 2u) << r.detail;
  const ConfigResult& small = r.configs[0];
  EXPECT_NEAR(small.roofline_us, 8.0 * 1024 / 4000e9 * 1e6, 1e-12);
  EXPECT_DOUBLE_EQ(small.floor_us, 1.0);
  EXPECT_DOUBLE_EQ(small.sol_us, 1.0) << "the floor binds the small config";
  EXPECT_NEAR(small.sol_pct, 1.0 / 2.3 * 100, 1e-9);
  EXPECT_DOUBLE_EQ(small.datasheet_sol_us, 1.0);
  EXPECT_NEAR(small.datasheet_sol_pct, 1.0 / 2.3 * 100, 1e-9);
  const ConfigResult& large = r.configs[1];
  EXPECT_NEAR(large.sol_us, 8.0 * (1 << 20) / 4000e9 * 1e6, 1e-9) << "the roofline binds the large config";
  EXPECT_NEAR(large.datasheet_sol_us, 8.0 * (1 << 20) / 4800e9 * 1e6, 1e-9);
  EXPECT_NEAR(large.datasheet_sol_pct, large.datasheet_sol_us / 2.3 * 100, 1e-9);
  EXPECT_LT(large.datasheet_sol_pct, large.sol_pct) << "the datasheet's bandwidth is the higher bar";
}

// The floor is a measurement, not a law: a kernel timed under it is not called impossible (only
// the roofline judges that), and a device without a datasheet reports no datasheet SOL %.
TEST_F(WorkerEvaluatorTest, AKernelUnderTheLaunchFloorIsNotImpossible) {
  WorkerEvaluator ev(Opts(FakeWorker(Timed("1.5"), "", R"("copy_kernel_gbps":4000,"launch_floor_us":2.0)")));
  EvalRequest req;
  req.op = &op_;
  req.golden = kernel_;
  req.candidate = kernel_;
  req.incumbent = {"reference", "cublas.fake", "", {}, {}};
  req.configs = {"small"};
  req.deadline_s = 1;
  EvalResult r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::faster) << r.detail;
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_NEAR(r.configs[0].sol_pct, 2.0 / 1.5 * 100, 1e-9);
  EXPECT_EQ(r.configs[0].datasheet_sol_us, 0);
  EXPECT_EQ(r.configs[0].datasheet_sol_pct, 0);
}

TEST_F(WorkerEvaluatorTest, SlowerWhenTheIncumbentWins) {
  WorkerEvaluator ev(Opts(FakeWorker(Timed("15"))));
  EvalResult r = Run(ev);
  EXPECT_EQ(r.outcome, Outcome::slower) << r.detail;
  EXPECT_NE(r.detail.find("slower beyond noise"), std::string::npos) << r.detail;
}

TEST_F(WorkerEvaluatorTest, FasterThanSpeedOfLightIsWrong) {
  WorkerEvaluator ev(Opts(FakeWorker(Timed("0.5"))));  // large needs >= 2.1 us
  EvalResult r = Run(ev);
  EXPECT_EQ(r.outcome, Outcome::wrong);
  EXPECT_NE(r.detail.find("speed-of-light"), std::string::npos) << r.detail;
}

TEST_F(WorkerEvaluatorTest, StickyErrorIsACrashNamingTheCudaError) {
  WorkerEvaluator ev(Opts(FakeWorker(
      R"sh("ok":false,"status":"crash","cuda_error":"CUDA_ERROR_ILLEGAL_ADDRESS","failed_kernel":"candidate","error":"candidate: an illegal memory access")sh",
      "")));
  EvalResult r = Run(ev);
  EXPECT_EQ(r.outcome, Outcome::crash);
  EXPECT_NE(r.detail.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("config small (candidate)"), std::string::npos) << r.detail;
}

TEST_F(WorkerEvaluatorTest, WrongCarriesTheMismatchReport) {
  WorkerEvaluator ev(Opts(FakeWorker(
      R"sh("ok":true,"status":"ok","correctness":{"ok":false,"rel_l2":1,"bad_elements":512,"detail":"y: 512 of 1024 elements are NaN/Inf"})sh")));
  EvalResult r = Run(ev);
  EXPECT_EQ(r.outcome, Outcome::wrong);
  EXPECT_NE(r.detail.find("512 of 1024"), std::string::npos) << r.detail;
  ASSERT_EQ(r.configs.size(), 1u);  // stops at the first wrong config
  EXPECT_EQ(r.configs[0].correctness.bad_elements, 512);
}

TEST_F(WorkerEvaluatorTest, FailedAuditIsWrong) {
  std::string fields = Timed("10") + R"sh(,"audit_ok":false,"audit_detail":"timed sample 3: y: 1024 NaN")sh";
  WorkerEvaluator ev(Opts(FakeWorker(fields)));
  EvalResult r = Run(ev);
  EXPECT_EQ(r.outcome, Outcome::wrong);
  EXPECT_NE(r.detail.find("wrong when timed"), std::string::npos) << r.detail;
}

TEST_F(WorkerEvaluatorTest, HangIsATimeoutAndTheNextEvaluationRespawns) {
  TempDir dir;
  std::string marker = dir.file("hung-once");
  WorkerEvaluator ev(Opts(FakeWorker(Timed("10"), "if [ ! -e " + marker + " ]; then touch " + marker + "; sleep 30; fi;")));
  EvalResult r = Run(ev);
  EXPECT_EQ(r.outcome, Outcome::timeout) << r.detail;
  EXPECT_NE(r.detail.find("worker killed"), std::string::npos) << r.detail;
  EvalResult next = Run(ev);
  EXPECT_EQ(next.outcome, Outcome::faster) << next.detail;
  EXPECT_EQ(ev.client().spawns(), 2);
}

TEST_F(WorkerEvaluatorTest, WorkerDeathIsACrash) {
  WorkerEvaluator ev(Opts(FakeWorker(Timed("10"), "echo 'Segmentation fault' >&2; exit 139;")));
  EvalResult r = Run(ev);
  EXPECT_EQ(r.outcome, Outcome::crash);
  EXPECT_NE(r.detail.find("status 139"), std::string::npos) << r.detail;
}

TEST_F(WorkerEvaluatorTest, DistributionCheckIsRejectedByName) {
  op_.tolerance.check = "distribution";
  WorkerEvaluator ev(Opts(FakeWorker(Timed("10"))));
  EvalResult r = Run(ev);
  EXPECT_EQ(r.outcome, Outcome::launch_error);
  EXPECT_NE(r.detail.find("distribution"), std::string::npos) << r.detail;
}

TEST_F(WorkerEvaluatorTest, UnknownConfigAndMissingCubinAreLaunchErrors) {
  WorkerEvaluator ev(Opts(FakeWorker(Timed("10"))));
  EvalRequest req;
  req.op = &op_;
  req.golden = kernel_;
  req.candidate = kernel_;
  req.configs = {"huge"};
  EvalResult r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::launch_error);
  EXPECT_NE(r.detail.find("huge"), std::string::npos);
  req.configs = {};
  req.candidate.cubin.clear();
  r = ev.Evaluate(req);
  EXPECT_EQ(r.outcome, Outcome::launch_error);
  EXPECT_NE(r.detail.find("no cubin"), std::string::npos) << r.detail;
}

// A grid that reads num_sms reaches the worker resolved with the SM count the worker reports for
// its device (here 78), not the nominal 132: the supervisor asks the worker before it resolves.
TEST_F(WorkerEvaluatorTest, LaunchesBindNumSmsToTheWorkersDevice) {
  const std::string log = ::testing::TempDir() + "/num_sms_evaluate.json";
  std::remove(log.c_str());
  kernel_.manifest.launches[0].grid = {"min(ceil_div(N, 256), num_sms)"};
  WorkerEvaluator ev(Opts(FakeWorker(Timed("10"), "printf '%s\\n' \"$line\" >> '" + log + "';", R"("copy_kernel_gbps":4000)", 78)));
  EvalResult r = Run(ev);
  ASSERT_EQ(r.outcome, Outcome::faster) << r.detail;
  EXPECT_EQ(ev.SmCount(), 78);
  std::ifstream in(log);
  std::string line;
  int seen = 0;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    const int64_t n = j["config"]["values"]["N"].get<int64_t>();
    const int64_t want = std::min<int64_t>((n + 255) / 256, 78);
    EXPECT_EQ(j["candidate"]["launch"]["launches"][0]["grid"][0].get<int64_t>(), want) << line;
    ++seen;
  }
  EXPECT_EQ(seen, 2);  // both configs; the large one (4096 blocks) capped at 78
}

// A worker that cannot name its device leaves num_sms unbound: nothing is launched.
TEST_F(WorkerEvaluatorTest, AWorkerWithoutADeviceIsACrashNamingNumSms) {
  WorkerEvaluator ev(Opts(FakeWorker(Timed("10"), "", R"("copy_kernel_gbps":4000)", 0)));
  EvalResult r = Run(ev, /*with_incumbent=*/false);
  EXPECT_EQ(r.outcome, Outcome::crash);
  EXPECT_NE(r.detail.find("num_sms"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace forgek
