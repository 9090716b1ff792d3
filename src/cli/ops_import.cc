// `forgek ops import kernelbench|flashinfer`: describe the problem with torch, write operator.json
// with the problem kept as the golden and the given seed, check the folder, then move it into place.
#include "ops_import.h"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "context.h"
#include "flashinfer_definition.h"
#include "ops_torch_golden.h"
#include "option_checks.h"
#include "forgek/core/atomic_file.h"
#include "forgek/core/candidate.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"
#include "forgek/core/torch_helper.h"
#include "forgek/run/llm_seed.h"

namespace forgek::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ImportArgs {
  std::string file, sizes, name, out, seed, category, workloads, scalars;
  // The seed asked of the LLM agent instead (--agent llm).
  std::string agent, provider = "openai", model, base_url, api_key_env;
  int replies = 3;
};

// NAME=V[,NAME=V...] of an option, each V checked by `value` (false: not a valid value, with what it
// must be in *must).
template <typename Parse>
void ParseAssignments(const std::string& option, const std::string& text, Parse value) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError(option + ": expected NAME=V[,NAME=V...], got '" + item + "'");
    std::string must;
    if (!value(item.substr(0, eq), item.substr(eq + 1), &must))
      throw UsageError(option + ": " + item.substr(0, eq) + " must be " + must + ", not '" + item.substr(eq + 1) + "'");
    start = end + 1;
  }
}

std::map<std::string, int64_t> ParseSizes(const std::string& text) {
  std::map<std::string, int64_t> sizes;
  ParseAssignments("--sizes", text, [&sizes](const std::string& name, const std::string& v, std::string* must) {
    *must = "a positive integer";
    try {
      size_t used = 0;
      const long long n = std::stoll(v, &used);
      if (used != v.size() || n < 1) return false;
      sizes[name] = n;
      return true;
    } catch (const std::exception&) {
      return false;
    }
  });
  return sizes;
}

// --scalars: a definition's scalar inputs, integers kept as integers.
std::map<std::string, json> ParseScalars(const std::string& text) {
  std::map<std::string, json> scalars;
  ParseAssignments("--scalars", text, [&scalars](const std::string& name, const std::string& v, std::string* must) {
    *must = "a number";
    const json j = ParseJsonLenient(v);
    if (j.is_discarded() || !j.is_number()) return false;
    scalars[name] = j;
    return true;
  });
  return scalars;
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

bool IsFloating(const std::string& dtype) { return dtype == "f16" || dtype == "bf16" || dtype == "f32" || dtype == "f64"; }

// Two significant digits, rounded up: a bound printed short that stays a bound.
double RoundUp2(double x) {
  if (x <= 0) return x;
  const double scale = std::pow(10.0, std::floor(std::log10(x)) - 1);
  return std::ceil(x / scale - 1e-9) * scale;
}

// Tolerance by the outputs' dtypes: KernelBench's own (torch.allclose with atol = rtol, 1e-4 for
// fp32, 1e-2 for fp16/bf16): rel_l2 at it; max_abs the larger of a floor that allows rtol on
// outputs up to ~10 and rtol of twice the largest |output| the problem gave (allclose lets an
// element be off by rtol of its own magnitude: a running sum of 32768 values reaches ~16000, and
// fp32 rounding alone moves it by ~0.1), twice since other seeds draw other values.
json KernelBenchTolerance(const KernelBenchProblem& p) {
  bool half = false, floating = false;
  double largest = 0;
  for (const ProblemTensor& t : p.tensors) {
    if (t.role != "output") continue;
    if (t.dtype == "f16" || t.dtype == "bf16") half = true;
    if (!IsFloating(t.dtype)) continue;
    floating = true;
    if (auto it = p.max_abs.find(t.name); it != p.max_abs.end()) largest = std::max(largest, it->second);
  }
  if (!floating) return {{"exact", true}, {"why", "integer outputs: exact"}};
  const double tol = half ? 1e-2 : 1e-4;
  const double least = half ? 1e-1 : 1e-3;
  const double max_abs = std::max(least, RoundUp2(tol * 2 * largest));
  const std::string where = p.magnitude_at == "config" ? "at the config's sizes" : "at small probe sizes";
  char why[400];
  std::snprintf(why, sizeof why,
                "KernelBench's %s tolerance (atol = rtol = %g): rel_l2 at it; max_abs rtol of twice the largest "
                "|output| the problem gave %s (%.3g), at least %g",
                half ? "fp16/bf16" : "fp32", tol, where.c_str(), largest, least);
  return {{"rel_l2", tol}, {"max_abs", max_abs}, {"why", why}};
}

// FlashInfer-Bench's tolerance (flashinfer_bench/bench/config.py: atol = rtol = 1e-2 for every
// dtype; an element fails when it is off by more than both). Its error is at most rtol of the
// largest output, so max_abs is rtol times twice the largest |output| the reference gave at the
// first (smallest) config: twice, since the larger configs draw more, and more extreme, values.
json FlashInferTolerance(const KernelBenchProblem& p) {
  bool floating = false;
  double largest = 0;
  for (const ProblemTensor& t : p.tensors) {
    if (t.role != "output" || !IsFloating(t.dtype)) continue;
    floating = true;
    auto it = p.max_abs.find(t.name);
    if (it != p.max_abs.end()) largest = std::max(largest, it->second);
  }
  if (!floating) return {{"exact", true}, {"why", "integer outputs: exact"}};
  const double max_abs = RoundUp2(std::max(1e-2, 1e-2 * 2 * largest));
  char why[400];
  std::snprintf(why, sizeof why,
                "FlashInfer-Bench's tolerance (atol = rtol = 1e-2): rel_l2 at rtol; max_abs rtol of twice the largest "
                "|output| the reference gave at the first config (%.3g)",
                largest);
  return {{"rel_l2", 1e-2}, {"max_abs", max_abs}, {"why", why}};
}

// The described tensors as operator.json's, and `bytes` as each tensor moved once.
json TensorsJson(const KernelBenchProblem& p, std::string* bytes) {
  json tensors = json::array();
  for (const ProblemTensor& t : p.tensors) {
    json shape = json::array();
    std::string elements = std::to_string(DtypeBytes(t.dtype));
    for (const std::string& d : t.shape) {
      shape.push_back(d);
      elements += "*" + d;
    }
    *bytes += (bytes->empty() ? "" : " + ") + elements;
    json j = {{"name", t.name}, {"role", t.role}, {"dtype", t.dtype}, {"shape", shape}};
    if (t.role != "output") j["init"] = t.init;
    tensors.push_back(j);
  }
  return tensors;
}

json OperatorJson(const KernelBenchProblem& p, const std::string& name, const std::string& category,
                  const std::string& source) {
  std::string bytes;
  json tensors = TensorsJson(p, &bytes);
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
          {"tolerance", KernelBenchTolerance(p)},
          {"golden", "golden.py"},
          {"reference", {{"kernel", "seed.cu"}}},
          {"seed", "seed.cu"}};
}

// An operator folder written under a staging folder beside its destination and renamed into place
// only once it loads, its seed validates and its golden agrees (Commit); left uncommitted (an
// error anywhere), the staging folder is removed and nothing is left.
class StagedOperator {
 public:
  explicit StagedOperator(const std::string& dest)
      : dest_(dest), staging_(fs::path(dest).parent_path() / (".import-" + std::to_string(getpid()))),
        dir_(staging_ / fs::path(dest).filename()) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) Fail("cannot create " + dir_.string() + ": " + ec.message());
  }
  ~StagedOperator() { Remove(); }
  StagedOperator(const StagedOperator&) = delete;
  StagedOperator& operator=(const StagedOperator&) = delete;

  std::string Path(const std::string& file) const { return (dir_ / file).string(); }

  void Write(const std::string& file, const std::string& text) {
    std::string err;
    if (!WriteFileAtomic(Path(file), text, &err)) Fail(err);
  }

  void Copy(const std::string& file, const std::string& src) {
    std::error_code ec;
    fs::copy_file(src, dir_ / file, ec);
    if (ec) Fail("cannot copy " + src + ": " + ec.message());
  }

  void Commit() {
    OperatorSpec spec;
    Diagnostics diags;
    Candidate seed;
    if (LoadOperator(dir_.string(), &spec, &diags) && LoadSeed(spec, &seed, &diags)) {
      ValidateCandidate(seed, spec, &diags);
      CheckTorchGolden(spec, &diags);
    }
    if (!diags.empty()) {
      for (Diagnostic& d : diags)
        if (d.file.rfind(dir_.string(), 0) == 0) d.file = (fs::path(dest_) / d.file.substr(dir_.string().size() + 1)).string();
      Fail("the imported operator does not validate (nothing written):\n" + FormatDiagnostics(diags));
    }
    std::error_code ec;
    fs::rename(dir_, dest_, ec);
    if (ec) Fail("cannot move the operator to " + dest_ + ": " + ec.message());
    Remove();
  }

 private:
  [[noreturn]] void Fail(const std::string& why) {
    Remove();
    throw Failure(why);
  }
  void Remove() {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }

  std::string dest_;
  fs::path staging_, dir_;
};

// --seed FILE or --agent llm (with --model), one of them; checked before anything is read or written.
TorchHelperPaths HelperPaths();

// `forgek_may_write`: without either, forgek writes the seed of an elementwise problem itself
// (KernelBench problems only).
void CheckSeedSource(const ImportArgs& a, bool forgek_may_write) {
  std::string why;
  if (!a.agent.empty() && a.agent != "llm") throw UsageError("--agent must be llm (the seed asked of the model), not '" + a.agent + "'");
  if (!a.seed.empty() && !a.agent.empty())
    throw UsageError("give the seed kernel with --seed FILE, or ask the model for one with --agent llm --model M: not both");
  if (a.seed.empty() && a.agent.empty() && !forgek_may_write)
    throw UsageError("give the seed kernel with --seed FILE, or ask the model for one with --agent llm --model M");
  if (!a.seed.empty() && !IsReadableFile(a.seed, &why)) throw UsageError("--seed " + a.seed + " " + why);
  if (a.agent.empty()) return;
  if (a.model.empty()) throw UsageError("--agent llm needs --model");
  LlmOptions o;
  if (!ParseLlmProvider(a.provider, &o.provider))
    throw UsageError("--provider must be openai or anthropic, not '" + a.provider + "'");
  o.base_url = a.base_url;
  o.key_env = a.api_key_env;
  if (!CheckLlmBaseUrl(ResolveLlmBaseUrl(o), ResolveLlmKeyEnv(o), &why)) throw UsageError("LLM " + why);
}

// The staged folder's seed.cu: the --seed file, or the model's reply (--agent llm), asked with the
// staged operator (its golden shown as what to compute) and compiled before it is kept.
void WriteSeed(StagedOperator* stage, const ImportArgs& a) {
  if (!a.seed.empty()) {
    stage->Copy("seed.cu", a.seed);
    return;
  }
  if (a.agent.empty()) {
    // An elementwise KernelBench problem: forgek writes the seed from the traced forward.
    std::string source;
    ProblemError refusal;
    if (!WriteElementwiseSeed(HelperPaths(), fs::absolute(a.file).string(), ParseSizes(a.sizes), 600, &source,
                              &refusal)) {
      refusal.file = a.file;
      throw Failure("no seed given, and forgek writes one only for an elementwise problem: " + refusal.str() +
                    " (nothing written; give --seed FILE or --agent llm --model M)");
    }
    stage->Write("seed.cu", source);
    return;
  }
  stage->Write("seed.cu", "");  // the operator loads with its seed named; the model's reply replaces it
  OperatorSpec op;
  Diagnostics diags;
  if (!LoadOperator(stage->Path(""), &op, &diags))
    throw Failure("the imported operator does not load (nothing written):\n" + FormatDiagnostics(diags));
  LlmSeedOptions o;
  ParseLlmProvider(a.provider, &o.llm.provider);
  o.llm.model = a.model;
  o.llm.base_url = a.base_url;
  o.llm.key_env = a.api_key_env;
  o.replies = a.replies;
  o.cache_dir = CacheDir("nvrtc");
  o.pch_dir = CacheDir("pch");
  std::string source, err;
  if (!AskLlmSeed(op, o, &source, &err)) throw Failure("no seed from the model (nothing written): " + err);
  stage->Write("seed.cu", source);
}

// The destination folder DIR/NAME of an import, refused (usage) when the name is not an operator
// name or DIR is no folder, and (failure) when it exists.
std::string Destination(const Context& ctx, const ImportArgs& a, const std::string& name) {
  if (!ValidName(name)) throw UsageError("operator name '" + name + "' is not [a-z0-9_]+: give --name");
  const std::string out = a.out.empty() ? OperatorsDir(ctx) : a.out;
  if (out.empty() || !fs::is_directory(out)) throw UsageError("--out " + out + " is not a folder");
  const std::string dest = (fs::path(out) / name).string();
  if (fs::exists(dest)) throw Failure(dest + " already exists: give another --name or remove it");
  return dest;
}

TorchHelperPaths HelperPaths() {
  TorchHelperPaths paths;
  std::string err;
  if (!FindTorchHelper(&paths, &err)) throw Failure(err);
  return paths;
}

void ImportKernelBench(const Context& ctx, const ImportArgs& a) {
  std::string why;
  if (!IsReadableFile(a.file, &why)) throw UsageError(a.file + " " + why);
  CheckSeedSource(a, true);
  const std::map<std::string, int64_t> sizes = ParseSizes(a.sizes);
  const std::string name = a.name.empty() ? NameFromFile(a.file) : a.name;
  const std::string dest = Destination(ctx, a, name);
  KernelBenchProblem problem;
  ProblemError refusal;
  if (!DescribeKernelBench(HelperPaths(), fs::absolute(a.file).string(), sizes, 600, &problem, &refusal)) {
    refusal.file = a.file;
    throw Failure(refusal.str());
  }
  const std::string category = a.category.empty() ? GuessCategory(name) : a.category;
  StagedOperator stage(dest);
  stage.Write("operator.json",
              OperatorJson(problem, name, category, fs::path(a.file).filename().string()).dump(2) + "\n");
  stage.Copy("golden.py", a.file);
  WriteSeed(&stage, a);
  stage.Commit();
  if (ctx.json) {
    std::printf("%s\n", json({{"name", name}, {"dir", dest}, {"params", problem.params}, {"config", problem.config}}).dump(2).c_str());
  } else {
    std::printf("%s\n", dest.c_str());
  }
}

// A category from the definition's op_type (FlashInfer-Bench's families), else from the name.
std::string FlashInferCategory(const FiDefinition& def, const std::string& name) {
  const std::string& t = def.op_type;
  if (t == "gemm") return "gemm";
  if (t.find("rmsnorm") != std::string::npos || t.find("norm") != std::string::npos) return "norm";
  if (t == "sampling" || t == "multinomial") return "sampling";
  if (t.find("gqa") == 0 || t.find("mla") == 0 || t.find("dsa") == 0 || t.find("attention") != std::string::npos)
    return "attention";
  if (t == "moe") return "moe";
  return GuessCategory(name);
}

// The configs: one a workload (distinct var-axis values), or the one --sizes gives; each holds
// every axis, const ones at their value.
std::vector<FiConfig> FlashInferConfigs(const FiDefinition& def, const ImportArgs& a, FiWorkloads* w) {
  std::vector<FiConfig> configs;
  if (!a.workloads.empty()) {
    std::string err;
    if (!ReadFiWorkloads(a.workloads, def, w, &err)) throw Failure(err);
    configs = w->configs;
  } else {
    const std::map<std::string, int64_t> sizes = ParseSizes(a.sizes);
    FiConfig c;
    std::string missing;
    for (const FiAxis& axis : def.axes) {
      auto it = sizes.find(axis.name);
      if (axis.is_const && it != sizes.end())
        throw UsageError("--sizes: " + axis.name + " is a const axis of the definition (" + std::to_string(axis.value) + ")");
      if (axis.is_const) continue;
      if (it == sizes.end()) missing += (missing.empty() ? "" : ", ") + axis.name;
      else c.values[axis.name] = it->second;
    }
    for (const auto& [k, v] : sizes)
      if (!c.values.count(k)) {
        bool known = false;
        for (const FiAxis& axis : def.axes) known = known || axis.name == k;
        if (!known) throw UsageError("--sizes: " + k + " is not an axis of the definition");
      }
    if (!missing.empty())
      throw UsageError("the definition's var axes " + missing + " need values: give --workloads FILE.jsonl or --sizes");
    c.name = FiConfigName(def, c.values);
    configs.push_back(c);
  }
  for (FiConfig& c : configs)
    for (const FiAxis& axis : def.axes)
      if (axis.is_const) c.values[axis.name] = axis.value;
  return configs;
}

// The scalar inputs' values: the workloads', else --scalars'; every scalar input needs one.
std::map<std::string, json> FlashInferScalars(const FiDefinition& def, const ImportArgs& a, const FiWorkloads& w) {
  std::map<std::string, json> scalars = a.workloads.empty() ? ParseScalars(a.scalars) : w.scalars;
  if (!a.workloads.empty() && !a.scalars.empty()) throw UsageError("--scalars: the workloads give the scalar inputs' values");
  for (const auto& [k, v] : scalars) {
    bool known = false;
    for (const FiTensor& t : def.inputs) known = known || (t.scalar && t.name == k);
    if (!known) throw UsageError("--scalars: " + k + " is not a scalar input of the definition");
  }
  for (const FiTensor& t : def.inputs)
    if (t.scalar && !scalars.count(t.name))
      throw UsageError("the definition's scalar input " + t.name + " needs a value: give --scalars " + t.name + "=V");
  return scalars;
}

json FlashInferOperatorJson(const FiDefinition& def, const KernelBenchProblem& p, const std::vector<FiConfig>& configs,
                            const std::string& name, const std::string& category) {
  std::string bytes;
  json tensors = TensorsJson(p, &bytes);
  json config_list = json::array();
  for (const FiConfig& c : configs) config_list.push_back({{"name", c.name}, {"values", c.values}});
  std::string description = def.description.empty() ? "" : def.description + " ";
  description += "FlashInfer-Bench definition " + def.name + (def.op_type.empty() ? "" : " (op_type " + def.op_type + ")") +
                 ": the outputs of its reference run(...), kept in golden.json (PyTorch)";
  json op = {{"name", name},
             {"category", category},
             {"description", description},
             {"params", p.params},
             {"configs", config_list},
             {"tensors", tensors}};
  if (!p.scalars.empty()) op["scalars"] = p.scalars;
  op.update({{"flops", "0"},
             {"bytes", bytes},
             {"tolerance", FlashInferTolerance(p)},
             {"golden", "golden.json"},
             {"reference", {{"kernel", "seed.cu"}}},
             {"seed", "seed.cu"}});
  return op;
}

void ImportFlashInfer(const Context& ctx, const ImportArgs& a) {
  std::string why;
  if (!IsReadableFile(a.file, &why)) throw UsageError(a.file + " " + why);
  CheckSeedSource(a, false);
  if (!a.workloads.empty() && !IsReadableFile(a.workloads, &why)) throw UsageError("--workloads " + a.workloads + " " + why);
  if (!a.workloads.empty() && !a.sizes.empty()) throw UsageError("--sizes: the workloads give the var axes' values");
  FiDefinition def;
  std::string err;
  if (!ReadFiDefinition(a.file, &def, &err)) throw Failure(err);
  FiWorkloads workloads;
  const std::vector<FiConfig> configs = FlashInferConfigs(def, a, &workloads);
  const std::map<std::string, json> scalars = FlashInferScalars(def, a, workloads);
  const std::string name = a.name.empty() ? (ValidName(def.name) ? def.name : NameFromFile(a.file)) : a.name;
  const std::string dest = Destination(ctx, a, name);
  // golden.json: the definition as read (its inputs' order is run's) and the scalar inputs' values.
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  for (const auto& [k, v] : scalars) {
    nlohmann::ordered_json number;  // a number forgek wrote itself: its text parses
    JsonParseError error;
    if (!ParseJsonLimited(v.dump(), &number, &error)) throw Failure("scalar " + k + ": " + error.message);
    values[k] = number;
  }
  nlohmann::ordered_json golden = {{"flashinfer", def.json}, {"scalars", values}};
  StagedOperator stage(dest);
  stage.Write("golden.json", golden.dump(2) + "\n");
  KernelBenchProblem problem;
  ProblemError refusal;
  if (!DescribeKernelBench(HelperPaths(), stage.Path("golden.json"), configs.front().values, 600, &problem, &refusal))
    throw Failure(a.file + ": " + refusal.message);
  const std::string category = a.category.empty() ? FlashInferCategory(def, name) : a.category;
  stage.Write("operator.json", FlashInferOperatorJson(def, problem, configs, name, category).dump(2) + "\n");
  WriteSeed(&stage, a);
  stage.Commit();
  if (ctx.json) {
    json list = json::array();
    for (const FiConfig& c : configs) list.push_back({{"name", c.name}, {"values", c.values}});
    std::printf("%s\n", json({{"name", name}, {"dir", dest}, {"params", problem.params}, {"configs", list},
                              {"workloads", workloads.workloads}, {"duplicate_workloads", workloads.duplicates}})
                            .dump(2)
                            .c_str());
  } else {
    std::printf("%s\n", dest.c_str());
  }
}

void AddLlmSeedOptions(CLI::App* cmd, ImportArgs* a) {
  cmd->add_option("--agent", a->agent,
                  "Without --seed: llm asks the model for the seed (the problem shown as what to compute; each "
                  "reply compiled, errors sent back)");
  cmd->add_option("--model", a->model, "LLM model name (--agent llm)");
  cmd->add_option("--provider", a->provider, "LLM API: openai (Chat Completions) or anthropic (Messages)")
      ->capture_default_str();
  cmd->add_option("--base-url", a->base_url, "LLM API base URL")->envname("FORGEK_LLM_BASE_URL");
  cmd->add_option("--api-key-env", a->api_key_env,
                  "Environment variable holding the API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)")
      ->check(EnvVarName());
  cmd->add_option("--replies", a->replies, "Replies asked of the model at most: the first, then one per compile failure")
      ->check(CLI::Range(1, 10))
      ->capture_default_str();
}

}  // namespace

void AddOpsImportCommand(CLI::App* ops, Context& ctx) {
  CLI::App* import = ops->add_subcommand("import", "Write an operator folder from a benchmark's problem or definition");
  import->require_subcommand(1);
  auto a = std::make_shared<ImportArgs>();
  CLI::App* kb = import->add_subcommand(
      "kernelbench", "A KernelBench problem (Model, get_inputs, get_init_inputs) with PyTorch as the golden");
  kb->add_option("file", a->file, "The problem's .py file")->required();
  kb->add_option("--seed", a->seed,
                 "The seed kernel (candidate format), also the reference; without it (and --agent), forgek writes "
                 "one for an elementwise problem");
  kb->add_option("--sizes", a->sizes, "Size constants changed: NAME=V[,NAME=V...]");
  kb->add_option("--name", a->name, "Operator name (default: from the file name)");
  kb->add_option("--out", a->out, "Folder to write the operator folder into (default: the operators folder)");
  kb->add_option("--category", a->category, "Operator category (default: guessed from the name)");
  AddLlmSeedOptions(kb, a.get());
  kb->callback([&ctx, a] { ImportKernelBench(ctx, *a); });

  CLI::App* fi = import->add_subcommand(
      "flashinfer",
      "A FlashInfer-Bench definition (axes, inputs, outputs, a PyTorch reference) with its reference as the golden");
  fi->add_option("file", a->file, "The definition's .json file")->required();
  fi->add_option("--seed", a->seed, "The seed kernel (candidate format), also the reference");
  fi->add_option("--workloads", a->workloads,
                 "The definition's workloads (.jsonl, one a line): each distinct set of var-axis values is a config");
  fi->add_option("--sizes", a->sizes, "Without --workloads: the var axes' values, NAME=V[,NAME=V...]");
  fi->add_option("--scalars", a->scalars, "Without --workloads: the scalar inputs' values, NAME=V[,NAME=V...]");
  fi->add_option("--name", a->name, "Operator name (default: the definition's name)");
  fi->add_option("--out", a->out, "Folder to write the operator folder into (default: the operators folder)");
  fi->add_option("--category", a->category, "Operator category (default: from the definition's op_type)");
  AddLlmSeedOptions(fi, a.get());
  fi->callback([&ctx, a] { ImportFlashInfer(ctx, *a); });
}

}  // namespace forgek::cli
