// `forgek ops`: list, show and validate the operators of the operators folder.
#include <cstdio>
#include <filesystem>
#include <future>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "ops_bench.h"
#include "ops_import.h"
#include "ops_torch_golden.h"
#include "printable.h"
#include "forgek/core/candidate.h"
#include "forgek/compile/compile.h"
#include "forgek/cuda/library_reference.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/param_corners.h"
#include "forgek/core/paths.h"
#include "forgek/core/spec_limits.h"
#include "forgek/core/torch_helper.h"

namespace forgek::cli {
namespace {

// One error line per diagnostic, the first kMaxDiagnosticsShown of them, then how many more.
void LogDiagnostics(const Diagnostics& diags) {
  for (size_t i = 0; i < diags.size() && i < kMaxDiagnosticsShown; ++i) spdlog::error("{}", diags[i].str());
  if (diags.size() > kMaxDiagnosticsShown) spdlog::error("... and {} more", diags.size() - kMaxDiagnosticsShown);
}

namespace fs = std::filesystem;
using nlohmann::json;

std::string Join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The reference as operator.json writes it.
json ReferenceJson(const ReferenceSpec& r) {
  if (!r.library.empty()) return {{"library", r.library}};
  if (r.params.empty()) return {{"kernel", r.kernel}};
  return {{"kernel", r.kernel}, {"params", r.params}};
}

json DiagnosticJson(const Diagnostic& d) {
  return {{"file", d.file}, {"field", d.field}, {"line", d.line}, {"column", d.column}, {"message", d.message}};
}

// The folder of an operator named by name or alias; an unknown name is a usage error naming close matches.
std::string OperatorDir(const Context& ctx, const std::string& name) {
  std::string dir, err;
  if (!ResolveOperator(OperatorsDir(ctx), name, &dir, &err)) throw UsageError(err);
  return dir;
}

// ---- ops list ----

void ListOperators(const Context& ctx) {
  std::string root = OperatorsDir(ctx);
  json rows = json::array();
  std::vector<std::vector<std::string>> table = {{"NAME", "CATEGORY", "CONFIGS", "REFERENCE", "ALIASES"}};
  int invalid = 0;
  for (const std::string& dir : ListOperatorDirs(root)) {
    OperatorSpec op;
    Diagnostics diags;
    if (!LoadOperator(dir, &op, &diags)) {
      ++invalid;
      // The folder's name is any name a file system allows: shown escaped, suggested shell-quoted.
      const std::string name = fs::path(dir).filename().string();
      spdlog::error("{}: invalid operator ({} problem{}, the first: {}); run: forgek ops validate {}", Printable(name),
                    diags.size(), diags.size() == 1 ? "" : "s", diags.empty() ? "" : Printable(diags.front().str()),
                    ShellQuote(name));
      continue;
    }
    json ref = ReferenceJson(op.reference);
    rows.push_back({{"name", op.name}, {"category", op.category}, {"configs", op.configs.size()}, {"reference", ref},
                    {"aliases", op.aliases}, {"dir", op.dir}});
    table.push_back({op.name, op.category, std::to_string(op.configs.size()), ReferenceText(op.reference),
                     Join(op.aliases)});
  }
  if (ctx.json) {
    std::printf("%s\n", rows.dump(2).c_str());
  } else {
    std::vector<size_t> widths(table[0].size(), 0);
    for (const auto& row : table)
      for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    for (const auto& row : table) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i)
        line += i + 1 < row.size() ? fmt::format("{:<{}}  ", row[i], widths[i]) : row[i];
      while (!line.empty() && line.back() == ' ') line.pop_back();
      std::printf("%s\n", line.c_str());
    }
  }
  if (invalid > 0) throw Failure(fmt::format("{} operator{} in {} could not be loaded", invalid, invalid == 1 ? "" : "s", root));
}

// ---- ops show ----

std::string InitText(const TensorSpec& t) {
  if (t.role == TensorRole::output) return "";
  const InitSpec& i = t.init;
  if (i.dist == "normal") return fmt::format("normal(mean {}, std {})", i.mean, i.stddev);
  if (i.dist == "uniform") return fmt::format("uniform[{}, {})", i.lo, i.hi);
  if (i.dist == "int_range") return fmt::format("int_range[{}, {})", i.lo, i.hi_expr.empty() ? fmt::format("{}", i.hi) : i.hi_expr);
  if (i.dist == "partition") return fmt::format("partition(total {}, multiple {}, min {})", i.total_expr, i.multiple, i.part_min);
  return i.dist;
}

// Shapes, FLOPs and bytes of every config (the loader has proven they evaluate).
json ConfigsJson(const OperatorSpec& op) {
  json configs = json::array();
  for (const ConfigSpec& c : op.configs) {
    json shapes = json::object();
    for (const TensorSpec& t : op.tensors) {
      std::vector<int64_t> shape;
      Diagnostic d;
      if (op.TensorShape(t, c.values, &shape, &d)) shapes[t.name] = shape;
    }
    int64_t flops = 0, bytes = 0;
    Diagnostic d;
    EvalExpression(op.flops, c.values, &flops, &d);
    EvalExpression(op.bytes, c.values, &bytes, &d);
    configs.push_back({{"name", c.name}, {"values", c.values}, {"shapes", shapes}, {"flops", flops}, {"bytes", bytes}});
  }
  return configs;
}

json OperatorJson(const OperatorSpec& op) {
  json tensors = json::array();
  for (const TensorSpec& t : op.tensors) {
    json j = {{"name", t.name}, {"role", TensorRoleName(t.role)}, {"dtype", DTypeName(t.dtype)}, {"shape", t.shape}};
    if (t.role != TensorRole::output) j["init"] = InitText(t);
    tensors.push_back(j);
  }
  json scalars = json::array();
  for (const ScalarSpec& s : op.scalars) scalars.push_back({{"name", s.name}, {"dtype", DTypeName(s.dtype)}, {"value", s.value}});
  const Tolerance& t = op.tolerance;
  return {{"name", op.name},
          {"aliases", op.aliases},
          {"category", op.category},
          {"description", op.description},
          {"dir", op.dir},
          {"params", op.params},
          {"tensors", tensors},
          {"scalars", scalars},
          {"flops", op.flops},
          {"bytes", op.bytes},
          {"tolerance", {{"rel_l2", t.rel_l2}, {"max_abs", t.max_abs}, {"exact", t.exact}, {"check", t.check}, {"why", t.why}}},
          {"golden", op.golden},
          {"reference", ReferenceJson(op.reference)},
          {"seed", op.seed_params.empty() ? json(op.seed) : json{{"kernel", op.seed}, {"params", op.seed_params}}},
          {"families", op.families},
          {"configs", ConfigsJson(op)}};
}

std::string Human(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  while (v >= 1000 && p < 5) v /= 1000, ++p;
  return fmt::format("{:.4g} {}{}", v, prefixes[p], unit);
}

void ShowOperator(const Context& ctx, const std::string& name) {
  OperatorSpec op;
  Diagnostics diags;
  if (!LoadOperator(OperatorDir(ctx, name), &op, &diags)) {
    LogDiagnostics(diags);
    throw Failure(fmt::format("operator '{}' is invalid ({} problem{})", name, diags.size(), diags.size() == 1 ? "" : "s"));
  }
  json j = OperatorJson(op);
  if (ctx.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::string out = op.name + (op.aliases.empty() ? "" : " (aliases: " + Join(op.aliases) + ")") + "\n";
  out += fmt::format("  category     {}\n  description  {}\n  folder       {}\n  params       {}\n", op.category,
                     op.description, op.dir, Join(op.params));
  out += "  tensors\n";
  for (const TensorSpec& t : op.tensors)
    out += fmt::format("    {:<10} {:<6} {:<5} [{}]  {}\n", t.name, TensorRoleName(t.role), DTypeName(t.dtype), Join(t.shape),
                       InitText(t));
  if (!op.scalars.empty()) {
    out += "  scalars\n";
    for (const ScalarSpec& s : op.scalars) out += fmt::format("    {:<10} {:<5} {}\n", s.name, DTypeName(s.dtype), s.value);
  }
  const Tolerance& t = op.tolerance;
  out += fmt::format("  flops        {}\n  bytes        {}\n", op.flops, op.bytes);
  out += t.exact ? "  tolerance    exact" : fmt::format("  tolerance    rel_l2 {} max_abs {}", t.rel_l2, t.max_abs);
  out += (t.check == "elementwise" ? "" : " (" + t.check + ")") + std::string("\n               ") + t.why + "\n";
  out += fmt::format("  golden       {}\n  reference    {}\n  seed         {}\n", op.golden, ReferenceText(op.reference),
                     op.SeedText());
  out += "  families     " + (op.families.empty() ? std::string("(none)") : Join(op.families, "\n               ")) + "\n";
  out += "  configs\n";
  for (const json& c : j["configs"]) {
    std::vector<std::string> values, shapes;
    for (const auto& [k, v] : c["values"].items()) values.push_back(k + "=" + v.dump());
    for (const TensorSpec& ts : op.tensors) {
      std::vector<std::string> dims;
      for (const json& d : c["shapes"][ts.name]) dims.push_back(d.dump());
      shapes.push_back(ts.name + "[" + Join(dims, ",") + "]");
    }
    out += fmt::format("    {:<18} {}\n      {}\n      {}, {}\n", c["name"].get<std::string>(), Join(values, " "),
                       Join(shapes, " "), Human(c["flops"].get<double>(), "FLOP"), Human(c["bytes"].get<double>(), "B"));
  }
  std::printf("%s", out.c_str());
}

// ---- ops validate ----

// One kernel file of an operator and what it must be.
struct KernelFile {
  std::string field;  // "golden", "seed", "reference.kernel", "families[2]"
  std::string path;   // absolute
  bool fixed;         // every param must have one value (golden, reference)
};

struct Validation {
  std::string name;
  std::string dir;
  Diagnostics diags;
  json compiled = json::array();
};

std::vector<KernelFile> KernelFiles(const OperatorSpec& op) {
  auto abs = [&](const std::string& rel) { return (fs::path(op.dir) / rel).lexically_normal().string(); };
  // A seed may be a search space (params with domains); golden and reference are fixed kernels.
  // A PyTorch golden is no kernel: CheckTorchGolden checks it instead.
  std::vector<KernelFile> files = {{"seed", abs(op.seed), false}};
  if (!IsTorchGolden(op.golden)) files.insert(files.begin(), {"golden", abs(op.golden), true});
  if (!op.reference.kernel.empty()) files.push_back({"reference.kernel", abs(op.reference.kernel), true});
  for (size_t i = 0; i < op.families.size(); ++i)
    files.push_back({"families[" + std::to_string(i) + "]", abs(op.families[i]), false});
  return files;
}

// Parses and validates one kernel file; a fixed one must also resolve under every config.
// Resolves one instance under every config (launch shapes, shared memory, arguments); with
// `where_constraints_hold`, only under the configs that the instance's constraints allow.
bool ResolveOnConfigs(const OperatorSpec& op, const std::string& path, const CandidateManifest& m,
                      const ParamAssignment& params, bool where_constraints_hold, Diagnostics* diags) {
  bool ok = true;
  // No device: num_sms is the nominal count of the kernel's arch (a persistent grid's bound checks
  // hold for it; the worker binds the real count when it launches).
  const int64_t num_sms = NominalSmCount(m);
  for (const ConfigSpec& config : op.configs) {
    std::string why;
    if (where_constraints_hold && !ConstraintsHold(m, params, config.values, num_sms, &why)) continue;
    ResolvedCandidate resolved;
    Diagnostics found;
    if (ResolveCandidate(m, op, params, config.values, num_sms, &resolved, &found)) continue;
    for (Diagnostic d : found) {
      d.file = path;
      d.message = "config '" + config.name + "': " + d.message;
      diags->push_back(d);
    }
    ok = false;
  }
  return ok;
}

bool CheckKernelFile(const OperatorSpec& op, const KernelFile& k, Candidate* c, Diagnostics* diags) {
  const bool loaded = k.field == "seed"               ? LoadSeed(op, c, diags)
                      : k.field == "reference.kernel" ? LoadReferenceKernel(op, c, diags)
                                                      : LoadCandidateFile(k.path, c, diags);
  if (!loaded) return false;
  if (!ValidateCandidate(*c, op, diags)) return false;
  // A seed without domains is held to what a fixed kernel must do: resolve under every config.
  if (!k.fixed && !(k.field == "seed" && !c->manifest.IsFamily())) return true;
  if (c->manifest.IsFamily()) {
    diags->push_back({k.path, "params", 0, 0, "the " + k.field + " must give every param one value, not a domain"});
    return false;
  }
  ParamAssignment params;
  for (const ParamSpec& p : c->manifest.params) params[p.name] = p.values[0];
  return ResolveOnConfigs(op, k.path, c->manifest, params, /*where_constraints_hold=*/false, diags);
}

void ValidateOperator(const std::string& dir, const std::string& arch,
                      std::vector<std::pair<CompileRequest, Validation*>>* compiles,
                      std::vector<std::unique_ptr<Validation>>* owner, OperatorSpec* loaded) {
  owner->push_back(std::make_unique<Validation>());
  Validation& v = *owner->back();
  v.dir = dir;
  v.name = fs::path(dir).filename().string();
  OperatorSpec op;
  if (!LoadOperator(dir, &op, &v.diags)) return;
  if (!op.reference.library.empty() && !HasLibraryReference(op.reference.library))
    v.diags.push_back({op.path, "reference.library", 0, 0,
                       "unknown library reference '" + op.reference.library + "'; this build provides: " +
                           Join(LibraryReferenceIds())});
  if (IsTorchGolden(op.golden)) CheckTorchGolden(op, &v.diags);
  for (const KernelFile& k : KernelFiles(op)) {
    Candidate c;
    if (!CheckKernelFile(op, k, &c, &v.diags)) continue;
    // A family compiles its first valid instance; a seed that is a search space compiles every
    // corner of its domains (each param at its min and max), since the run will reach them all.
    std::vector<ParamAssignment> instances;
    if (k.field == "seed" && c.manifest.IsFamily()) {
      instances = DomainCorners(c.manifest, op);
    } else {
      ParamAssignment first;
      if (FirstValidInstance(c.manifest, op, &first)) instances.push_back(std::move(first));
    }
    if (instances.empty()) {
      v.diags.push_back({k.path, "constraints", 0, 0,
                         "no assignment of the params satisfies the constraints under any config"});
      continue;
    }
    const ParamAssignment& first = instances.front();
    if (c.manifest.IsFamily() && !ResolveOnConfigs(op, k.path, c.manifest, first, true, &v.diags)) continue;
    if (!c.manifest.ForArch(arch)) {
      // A kernel written for other archs is checked but not compiled for this one.
      spdlog::info("{}: {} is for {}, not {}: not compiled", v.name, k.field, c.manifest.ArchsText(), arch);
      v.compiled.push_back({{"file", k.path}, {"skipped", "for " + c.manifest.ArchsText() + ", not " + arch}});
      continue;
    }
    for (const ParamAssignment& params : instances) {
      CompileRequest req;
      req.name = k.path;
      req.source = c.source;
      req.options = ParamDefines(params);
      compiles->emplace_back(std::move(req), &v);
    }
  }
  *loaded = std::move(op);
}

// Aliases and names must identify one operator each.
void CheckAliasesUnique(const std::vector<OperatorSpec>& ops, std::vector<std::unique_ptr<Validation>>& results) {
  std::map<std::string, std::string> owner;
  for (const OperatorSpec& op : ops) owner.emplace(op.name, op.name);
  for (const OperatorSpec& op : ops) {
    for (size_t i = 0; i < op.aliases.size(); ++i) {
      auto [it, fresh] = owner.emplace(op.aliases[i], op.name);
      if (fresh || it->second == op.name) continue;
      for (auto& v : results)
        if (v->name == op.name)
          v->diags.push_back({op.path, "aliases[" + std::to_string(i) + "]", 0, 0,
                              "alias '" + op.aliases[i] + "' already names operator " + it->second});
    }
  }
}

void CompileAll(const Context& ctx, std::vector<std::pair<CompileRequest, Validation*>>& compiles) {
  if (compiles.empty()) return;
  CompilerOptions opts;
  opts.cache_dir = CacheDir("");
  Compiler compiler(opts);
  std::vector<std::future<CompileResult>> futures;
  for (auto& [req, v] : compiles) {
    req.arch = ctx.arch;
    futures.push_back(compiler.Submit(req));
  }
  for (size_t i = 0; i < futures.size(); ++i) {
    CompileResult r = futures[i].get();
    const CompileRequest& req = compiles[i].first;
    Validation& v = *compiles[i].second;
    v.compiled.push_back({{"file", req.name}, {"ok", r.ok}, {"cache_hit", r.cache_hit}, {"seconds", r.seconds},
                          {"options", req.options}});
    if (r.ok) continue;
    std::string opts_text = req.options.empty() ? "" : " (" + Join(req.options, " ") + ")";
    bool reported = false;
    for (const CompileMessage& m : r.messages) {
      if (m.severity != "error") continue;
      v.diags.push_back({req.name, "", m.line, m.column, "compile error" + opts_text + ": " + m.message});
      reported = true;
    }
    if (!reported)
      v.diags.push_back({req.name, "", 0, 0,
                         (r.timed_out ? "compile timed out" : "compile failed") + opts_text + ": " + r.Summary()});
  }
}

void ValidateOperators(const Context& ctx, const std::vector<std::string>& names, bool compile) {
  std::string root = OperatorsDir(ctx);
  std::vector<std::string> dirs;
  std::vector<std::unique_ptr<Validation>> results;
  if (names.empty()) {
    dirs = ListOperatorDirs(root);
    if (dirs.empty()) throw Failure("no operators in " + root);
  }
  for (const std::string& name : names) {
    std::string dir, err;
    if (!ResolveOperator(root, name, &dir, &err)) throw UsageError(err);  // a name that means nothing
    dirs.push_back(dir);
  }
  std::vector<std::pair<CompileRequest, Validation*>> compiles;
  std::vector<OperatorSpec> loaded;
  for (const std::string& dir : dirs) {
    OperatorSpec op;
    ValidateOperator(dir, ctx.arch, &compiles, &results, &op);
    if (!op.name.empty()) loaded.push_back(std::move(op));
  }
  CheckAliasesUnique(loaded, results);
  if (compile) CompileAll(ctx, compiles);  // last: the slow step, and only for files that parsed

  int failed = 0;
  json out = json::array();
  for (const auto& v : results) {
    bool ok = v->diags.empty();
    failed += ok ? 0 : 1;
    if (ctx.json) {
      json diags = json::array();
      for (const Diagnostic& d : v->diags) diags.push_back(DiagnosticJson(d));
      out.push_back({{"name", v->name}, {"dir", v->dir}, {"ok", ok}, {"diagnostics", diags}, {"compiled", v->compiled}});
      continue;
    }
    std::printf("%s: %s\n", v->name.c_str(), ok ? "ok" : fmt::format("{} problem{}", v->diags.size(), v->diags.size() == 1 ? "" : "s").c_str());
    LogDiagnostics(v->diags);
  }
  if (ctx.json) std::printf("%s\n", out.dump(2).c_str());
  std::fflush(stdout);
  if (failed > 0) throw Failure(fmt::format("{} of {} operator{} failed validation", failed, results.size(),
                                            results.size() == 1 ? "" : "s"));
}

}  // namespace

void set_ops_command(CLI::App& app, Context& ctx) {
  CLI::App* ops = app.add_subcommand("ops", "List, show, validate, bench and import operators");
  ops->require_subcommand(1);

  CLI::App* list = ops->add_subcommand("list", "One line per operator: name, category, configs, reference, aliases");
  list->callback([&ctx] { ListOperators(ctx); });

  auto name = std::make_shared<std::string>();
  CLI::App* show = ops->add_subcommand("show", "Everything about one operator, with shapes, FLOPs and bytes per config");
  show->add_option("name", *name, "Operator name or alias")->required();
  show->callback([&ctx, name] { ShowOperator(ctx, *name); });

  auto names = std::make_shared<std::vector<std::string>>();
  auto no_compile = std::make_shared<bool>(false);
  CLI::App* validate = ops->add_subcommand(
      "validate", "Check operators (all when none named): spec, kernel files, library reference, NVRTC compile");
  validate->add_option("names", *names, "Operator names or aliases");
  validate->add_flag("--no-compile", *no_compile, "Skip compiling the kernel files (the slowest check)");
  validate->callback([&ctx, names, no_compile] { ValidateOperators(ctx, *names, !*no_compile); });

  AddOpsBenchCommand(ops, ctx);
  AddOpsImportCommand(ops, ctx);
}

}  // namespace forgek::cli
