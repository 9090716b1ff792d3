// Every shipped operator's tolerance must reject an all-zero output (issue: a tolerance loose
// enough that zeros pass makes every "correct" meaningless). Checked on the GPU for real.
#include <gtest/gtest.h>

#include "gpu_worker_util.h"

namespace forgek {
namespace {

// A candidate that writes zero bytes over every output and inout tensor of `op`, one launch per
// tensor, built from the operator's own shape expressions.
std::string ZeroCandidate(const OperatorSpec& op) {
  std::string launches;
  for (const TensorSpec& t : op.tensors) {
    if (t.role == TensorRole::input) continue;
    std::string bytes = std::to_string(DTypeBytes(t.dtype));
    for (const std::string& dim : t.shape) bytes += "*(" + dim + ")";
    if (!launches.empty()) launches += ",\n";
    launches += "    {\"kernel\": \"zero_bytes\", \"grid\": [\"ceil_div(" + bytes + ", 4096)\"], \"block\": [256], " +
                "\"args\": [\"" + t.name + "\", \"i64:" + bytes + "\"]}";
  }
  return "/* forgek\n{ \"name\": \"zeros\", \"launches\": [\n" + launches + "\n  ] }\n*/\n" + R"(
// Each block clears one 4096-byte chunk.
extern "C" __global__ void zero_bytes(unsigned char* p, long long n) {
  long long begin = blockIdx.x * 4096LL, end = begin + 4096 < n ? begin + 4096 : n;
  for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) p[i] = 0;
}
)";
}

TEST(GpuZeroOutput, EveryOperatorRejectsAnAllZeroOutput) {
  FORGEK_SKIP_WITHOUT_WORKER_GPU();
  CompilerOptions copts;
  Compiler compiler(copts);
  WorkerEvaluatorOptions opts;
  opts.command = testing::WorkerCommand();
  WorkerEvaluator ev(opts);
  std::vector<std::string> dirs = ListOperatorDirs(testing::OperatorsRoot());
  ASSERT_FALSE(dirs.empty());
  for (const std::string& dir : dirs) {
    OperatorSpec op = testing::LoadOp(dir);
    if (op.name.empty()) continue;
    Candidate zeros;
    Diagnostics diags;
    ASSERT_TRUE(ParseCandidate("zeros.cu", ZeroCandidate(op), &zeros, &diags)) << op.name << ": " << FormatDiagnostics(diags);
    ASSERT_TRUE(ValidateCandidate(zeros, op, &diags)) << op.name << ": " << FormatDiagnostics(diags);
    CompileRequest req{"zeros.cu", zeros.source, "sm90", {}};
    CompileResult compiled = compiler.CompileNow(req);
    ASSERT_TRUE(compiled.ok) << compiled.Summary();
    const KernelUnderTest golden = testing::CompileKernel(compiler, op.dir + "/" + op.golden, "golden");
    // One config at a time: the evaluator stops at the first wrong config, and every config must
    // reject zeros on its own.
    for (const ConfigSpec& config : op.configs) {
      EvalRequest ereq;
      ereq.op = &op;
      ereq.golden = golden;
      ereq.candidate = {"zeros", "", compiled.cubin, zeros.manifest, {}};
      ereq.configs = {config.name};
      ereq.time = false;
      EvalResult r = ev.Evaluate(ereq);
      EXPECT_EQ(r.outcome, Outcome::wrong) << op.name << " " << config.name << ": an all-zero output got "
                                           << OutcomeName(r.outcome) << ": " << r.detail;
      std::printf("[ zeros    ] %s %s -> %s\n", op.name.c_str(), config.name.c_str(), OutcomeName(r.outcome));
    }
  }
}

}  // namespace
}  // namespace forgek
