// `forgek ops import kernelbench`: describe the problem with torch, write operator.json with the
// problem kept as the golden and the given seed, check the folder, then move it into place.
#include "ops_import.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "ops_torch_golden.h"
#include "forgek/core/atomic_file.h"
#include "forgek/core/candidate.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"
#include "forgek/core/torch_helper.h"

namespace forgek::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ImportArgs {
  std::string file, sizes, name, out, seed, category;
};

std::map<std::string, int64_t> ParseSizes(const std::string& text) {
  std::map<std::string, int64_t> sizes;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--sizes: expected NAME=V[,NAME=V...], got '" + item + "'");
    try {
      size_t used = 0;
      const long long v = std::stoll(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1 || v < 1) throw std::invalid_argument("");
      sizes[item.substr(0, eq)] = v;
    } catch (const std::exception&) {
      throw UsageError("--sizes: " + item.substr(0, eq) + " must be a positive integer, not '" + item.substr(eq + 1) + "'");
    }
    start = end + 1;
  }
  return sizes;
}

// The file's stem in operator-name form: lower case, runs of other characters as one '_'.
std::string NameFromFile(const std::string& file) {
  std::string out;
  for (char c : fs::path(file).stem().string()) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(l))) out += l;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

bool ValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// A category from words of the file name; elementwise when none is recognised.
std::string GuessCategory(const std::string& name) {
  const std::pair<const char*, const char*> words[] = {
      {"softmax", "softmax"}, {"norm", "norm"},  {"cumsum", "scan"},     {"cumprod", "scan"}, {"scan", "scan"},
      {"matmul", "gemm"},     {"gemm", "gemm"},  {"conv", "conv"},       {"attention", "attention"},
      {"sum", "reduction"},   {"mean", "reduction"}, {"max", "reduction"}, {"loss", "loss"}, {"transpose", "transpose"}};
  for (const auto& [word, category] : words)
    if (name.find(word) != std::string::npos) return category;
  return "elementwise";
}

int DtypeBytes(const std::string& dtype) { return TorchWireDtypeSize(dtype); }

// Tolerance by the outputs' dtypes: KernelBench's own (torch.allclose with atol = rtol, 1e-4 for
// fp32 and 1e-2 for fp16/bf16, kernelbench/eval.py get_tolerance_for_precision).
json ToleranceFor(const KernelBenchProblem& p) {
  bool half = false, floating = false;
  for (const ProblemTensor& t : p.tensors) {
    if (t.role != "output") continue;
    if (t.dtype == "f16" || t.dtype == "bf16") half = true;
    if (t.dtype == "f16" || t.dtype == "bf16" || t.dtype == "f32" || t.dtype == "f64") floating = true;
  }
  if (!floating) return {{"exact", true}, {"why", "integer outputs: exact"}};
  if (half)
    return {{"rel_l2", 1e-2}, {"max_abs", 1e-1},
            {"why", "KernelBench's fp16/bf16 tolerance (atol = rtol = 1e-2): rel_l2 at it, max_abs allowing rtol on outputs up to ~10"}};
  return {{"rel_l2", 1e-4}, {"max_abs", 1e-3},
          {"why", "KernelBench's fp32 tolerance (atol = rtol = 1e-4): rel_l2 at it, max_abs allowing rtol on outputs up to ~10"}};
}

json OperatorJson(const KernelBenchProblem& p, const std::string& name, const std::string& category,
                  const std::string& source) {
  json tensors = json::array();
  std::string bytes;
  for (const ProblemTensor& t : p.tensors) {
    json shape = json::array();
    std::string elements = std::to_string(DtypeBytes(t.dtype));
    for (const std::string& d : t.shape) {
      shape.push_back(d);
      elements += "*" + d;
    }
    bytes += (bytes.empty() ? "" : " + ") + elements;
    json j = {{"name", t.name}, {"role", t.role}, {"dtype", t.dtype}, {"shape", shape}};
    if (t.role != "output") j["init"] = t.init;
    tensors.push_back(j);
  }
  std::string fixed;
  for (const auto& [k, v] : p.fixed.items()) fixed += (fixed.empty() ? "" : ", ") + k + " = " + v.dump();
  std::string description = "KernelBench problem " + source + ": the output of Model.forward in golden.py (PyTorch)";
  if (!fixed.empty()) description += "; fixed in the problem: " + fixed;
  return {{"name", name},
          {"category", category},
          {"description", description},
          {"params", p.params},
          {"configs", json::array({{{"name", "kernelbench"}, {"values", p.config}}})},
          {"tensors", tensors},
          {"flops", "0"},
          {"bytes", bytes},
          {"tolerance", ToleranceFor(p)},
          {"golden", "golden.py"},
          {"reference", {{"kernel", "seed.cu"}}},
          {"seed", "seed.cu"}};
}

// Writes and checks the folder under a staging folder beside its destination, then renames it
// into place; on any error the staging folder is removed and nothing is left.
void WriteOperatorFolder(const std::string& dest, const json& op, const std::string& golden_src,
                         const std::string& seed_src) {
  const fs::path staging = fs::path(dest).parent_path() / (".import-" + std::to_string(getpid()));
  const fs::path dir = staging / fs::path(dest).filename();
  std::error_code ec;
  auto fail = [&](const std::string& why) {
    fs::remove_all(staging, ec);
    throw Failure(why);
  };
  fs::create_directories(dir, ec);
  if (ec) fail("cannot create " + dir.string() + ": " + ec.message());
  std::string err;
  if (!WriteFileAtomic((dir / "operator.json").string(), op.dump(2) + "\n", &err)) fail(err);
  fs::copy_file(golden_src, dir / "golden.py", ec);
  if (ec) fail("cannot copy " + golden_src + ": " + ec.message());
  fs::copy_file(seed_src, dir / "seed.cu", ec);
  if (ec) fail("cannot copy " + seed_src + ": " + ec.message());
  OperatorSpec spec;
  Diagnostics diags;
  Candidate seed;
  if (LoadOperator(dir.string(), &spec, &diags) && LoadSeed(spec, &seed, &diags)) {
    ValidateCandidate(seed, spec, &diags);
    CheckTorchGolden(spec, &diags);
  }
  if (!diags.empty()) {
    for (Diagnostic& d : diags)
      if (d.file.rfind(dir.string(), 0) == 0) d.file = (fs::path(dest) / d.file.substr(dir.string().size() + 1)).string();
    fail("the imported operator does not validate (nothing written):\n" + FormatDiagnostics(diags));
  }
  fs::rename(dir, dest, ec);
  if (ec) fail("cannot move the operator to " + dest + ": " + ec.message());
  fs::remove_all(staging, ec);
}

void ImportKernelBench(const Context& ctx, const ImportArgs& a) {
  std::string why;
  if (!IsReadableFile(a.file, &why)) throw UsageError(a.file + " " + why);
  if (!IsReadableFile(a.seed, &why)) throw UsageError("--seed " + a.seed + " " + why);
  const std::map<std::string, int64_t> sizes = ParseSizes(a.sizes);
  const std::string name = a.name.empty() ? NameFromFile(a.file) : a.name;
  if (!ValidName(name)) throw UsageError("operator name '" + name + "' is not [a-z0-9_]+: give --name");
  const std::string out = a.out.empty() ? OperatorsDir(ctx) : a.out;
  if (out.empty() || !fs::is_directory(out)) throw UsageError("--out " + out + " is not a folder");
  const std::string dest = (fs::path(out) / name).string();
  if (fs::exists(dest)) throw Failure(dest + " already exists: give another --name or remove it");
  TorchHelperPaths paths;
  std::string err;
  if (!FindTorchHelper(&paths, &err)) throw Failure(err);
  KernelBenchProblem problem;
  ProblemError refusal;
  if (!DescribeKernelBench(paths, fs::absolute(a.file).string(), sizes, 600, &problem, &refusal)) {
    refusal.file = a.file;
    throw Failure(refusal.str());
  }
  const std::string category = a.category.empty() ? GuessCategory(name) : a.category;
  WriteOperatorFolder(dest, OperatorJson(problem, name, category, fs::path(a.file).filename().string()), a.file, a.seed);
  if (ctx.json) {
    std::printf("%s\n", json({{"name", name}, {"dir", dest}, {"params", problem.params}, {"config", problem.config}}).dump(2).c_str());
  } else {
    std::printf("%s\n", dest.c_str());
  }
}

}  // namespace

void AddOpsImportCommand(CLI::App* ops, Context& ctx) {
  CLI::App* import = ops->add_subcommand("import", "Write an operator folder from a benchmark's problem");
  import->require_subcommand(1);
  auto a = std::make_shared<ImportArgs>();
  CLI::App* kb = import->add_subcommand(
      "kernelbench", "A KernelBench problem (Model, get_inputs, get_init_inputs) with PyTorch as the golden");
  kb->add_option("file", a->file, "The problem's .py file")->required();
  kb->add_option("--seed", a->seed, "The seed kernel (candidate format), also the reference")->required();
  kb->add_option("--sizes", a->sizes, "Size constants changed: NAME=V[,NAME=V...]");
  kb->add_option("--name", a->name, "Operator name (default: from the file name)");
  kb->add_option("--out", a->out, "Folder to write the operator folder into (default: the operators folder)");
  kb->add_option("--category", a->category, "Operator category (default: guessed from the name)");
  kb->callback([&ctx, a] { ImportKernelBench(ctx, *a); });
}

}  // namespace forgek::cli
