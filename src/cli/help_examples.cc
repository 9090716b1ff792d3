// The examples of each subcommand, kept in one table so that every --help shows how it is used.
#include "help_examples.h"

#include <map>
#include <string>
#include <vector>

namespace forgek::cli {
namespace {

// Keyed by the command path under `forgek`.
const std::map<std::string, std::vector<std::string>>& Examples() {
  static const std::map<std::string, std::vector<std::string>> kExamples = {
      {"run",
       {"forgek run --op softmax_fp32 --iterations 24",
        "forgek run --op gemm_bf16 --time 15m --gpus all",
        "forgek run --op softmax_fp32 --agent llm --model MODEL --compile-only --iterations 2   # no GPU needed",
        "forgek run --resume RUN_ID --iterations 12"}},
      {"batch", {"forgek batch softmax_fp32 gemm_bf16 --gpus all --iterations 48"}},
      {"version", {"forgek version", "forgek --json version"}},
      {"ops", {"forgek ops list", "forgek ops validate --no-compile"}},
      {"ops list", {"forgek ops list", "forgek --json ops list"}},
      {"ops show", {"forgek ops show softmax_fp32", "forgek --json ops show softmax"}},
      {"ops validate",
       {"forgek ops validate", "forgek ops validate gemm_bf16 --no-compile",
        "forgek --arch sm100 ops validate gemm_bf16"}},
      {"ops bench", {"forgek ops bench softmax_fp32", "forgek ops bench --markdown"}},
      {"ops import",
       {"forgek ops import kernelbench 19_ReLU.py --seed relu_seed.cu --sizes batch_size=4096,dim=16384",
        "forgek ops import flashinfer rmsnorm_h4096.json --workloads rmsnorm_h4096.jsonl --seed rmsnorm_seed.cu"}},
      {"ops import kernelbench",
       {"forgek ops import kernelbench 19_ReLU.py --seed relu_seed.cu --name relu_fp32",
        "forgek --json ops import kernelbench 23_Softmax.py --seed softmax_seed.cu --out my_operators"}},
      {"ops import flashinfer",
       {"forgek ops import flashinfer gemm_n4096_k4096.json --workloads gemm_n4096_k4096.jsonl --seed gemm_seed.cu",
        "forgek --json ops import flashinfer rmsnorm_d4096.json --sizes batch_size=64 --scalars eps=1e-6 --seed rmsnorm_seed.cu"}},
      {"doctor", {"forgek doctor", "forgek doctor --no-gpu", "forgek doctor --calibrate"}},
      {"eval",
       {"forgek eval --op softmax_fp32 --kernel my_softmax.cu",
        "forgek eval --op gemm_bf16 --kernel operators/gemm_bf16/families/wgmma_tma.cu --params BM=128,BN=128"}},
      {"profile",
       {"forgek profile --op gemm_bf16 --reference", "forgek profile --op softmax_fp32 --kernel my_softmax.cu"}},
      {"knowledge", {"forgek knowledge list --op gemm_bf16", "forgek knowledge export -o knowledge.json"}},
      {"knowledge list", {"forgek knowledge list --op gemm_bf16", "forgek knowledge list --category softmax --regime large"}},
      {"knowledge show", {"forgek knowledge show DECISION_ID", "forgek knowledge show wgmma"}},
      {"knowledge search", {"forgek knowledge search 'shared memory'"}},
      {"knowledge export", {"forgek knowledge export -o knowledge.json"}},
      {"knowledge import", {"forgek knowledge import knowledge.json"}},
      {"knowledge merge", {"forgek knowledge merge other-machine/store.db"}},
      {"knowledge forget", {"forgek knowledge forget --decision DECISION_ID", "forgek knowledge forget --op gemm_bf16",
                            "forgek knowledge forget --seal SEAL_ID"}},
      {"seal", {"forgek seal list", "forgek seal show SEAL_ID"}},
      {"seal list", {"forgek seal list", "forgek seal list --op gemm_bf16", "forgek --json seal list"}},
      {"seal show", {"forgek seal show SEAL_ID"}},
      {"seal export", {"forgek seal export SEAL_ID ./gemm_seal", "forgek seal export SEAL_ID ./out --lang c",
                       "forgek seal export SEAL_ID ./out --lang torch"}},
      {"seal verify", {"forgek seal verify SEAL_ID"}},
      {"regress",
       {"forgek regress --junit nightly.xml --json-file nightly.json",
        "forgek regress --ops softmax_fp32,gemm_bf16 --threshold 0.02"}},
      {"report",
       {"forgek report", "forgek report --op softmax_fp32 --format html -o softmax.html",
        "forgek report --run RUN_ID --format json", "forgek report --format csv -o suite.csv",
        "forgek report --torch compare-torch.json --format html -o report.html"}},
      {"seal diff", {"forgek seal diff SEAL_A SEAL_B", "forgek --json seal diff SEAL_A SEAL_B"}},
      {"worker", {"forgek worker --probe   # what the supervisor runs to count GPUs"}},
  };
  return kExamples;
}

void AddTo(CLI::App* cmd, const std::string& path) {
  auto it = Examples().find(path);
  if (it != Examples().end()) {
    std::string footer = "\nExamples:";
    for (const std::string& line : it->second) footer += "\n  " + line;
    cmd->footer(cmd->get_footer() + footer);  // after what the command's own footer explains
  }
  for (CLI::App* sub : cmd->get_subcommands([](CLI::App*) { return true; })) AddTo(sub, path + " " + sub->get_name());
}

}  // namespace

void AddHelpExamples(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) AddTo(sub, sub->get_name());
}

}  // namespace forgek::cli
