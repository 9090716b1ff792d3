// `forgek seal list|show|export|verify|diff`: the sealed kernels of the knowledge store.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "option_checks.h"
#include "printable.h"
#include "load_operator.h"
#include "gpu_session.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"
#include "forgek/seal/seal.h"
#include "forgek/knowledge/store.h"

namespace forgek::cli {
namespace {

struct SealArgs {
  std::string op;
  std::string id, other;
  std::string dir;
  std::string lang = "folder";  // export: "folder" (docs/seal-format.md), "c" or "torch"
  bool allow_rebuilt = false;
};

void OpenOrFail(Store& store, const Context& ctx, StoreMode mode) {
  std::string err;
  if (!store.Open(StorePath(ctx), &err, mode)) throw Failure(err);
}

SealRecord FindOrFail(Store& store, const std::string& id) {
  SealRecord seal;
  std::string err;
  if (!FindSeal(store, id, &seal, &err)) throw Failure(err);
  return seal;
}

void List(const Context& ctx, const SealArgs& a) {
  Store store;
  OpenOrFail(store, ctx, StoreMode::read_only);
  std::vector<SealRecord> seals;
  std::string err;
  if (!store.ListSeals(a.op, ctx.arch, &seals, &err)) throw Failure(err);
  if (ctx.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const SealRecord& s : seals)
      arr.push_back({{"id", s.id}, {"operator", s.operator_name}, {"arch", s.arch}, {"device", s.device},
                     {"parent", s.parent}, {"geomean_speedup", s.geomean_speedup}, {"created_at", s.created_at}});
    std::printf("%s\n", arr.dump(2).c_str());
    return;
  }
  if (seals.empty()) {
    std::fprintf(stderr, "no seals%s%s on %s in %s\n", a.op.empty() ? "" : " of ", Printable(a.op).c_str(), ctx.arch.c_str(),
                 store.path().c_str());
    return;
  }
  std::printf("%-14s %-24s %-6s %-22s %-10s %-14s\n", "seal", "operator", "arch", "created", "speedup", "parent");
  for (const SealRecord& s : seals) {
    char speedup[32];
    std::snprintf(speedup, sizeof speedup, "%.3fx", s.geomean_speedup);
    std::printf("%-14s %-24s %-6s %-22s %-10s %-14s\n", Printable(s.id.substr(0, 12)).c_str(), Printable(s.operator_name).c_str(),
                Printable(s.arch).c_str(), Printable(s.created_at).c_str(), speedup,
                s.parent.empty() ? "(reference)" : Printable(s.parent.substr(0, 12)).c_str());
  }
}

void Show(const Context& ctx, const SealArgs& a) {
  Store store;
  OpenOrFail(store, ctx, StoreMode::read_only);
  SealRecord seal = FindOrFail(store, a.id);
  std::vector<SealRecord> lineage;
  std::string err;
  if (!store.SealLineage(seal.id, &lineage, &err)) throw Failure(err);
  std::printf("%s\n", SealJson(seal, lineage).c_str());
}

void Export(const Context& ctx, const SealArgs& a) {
  Store store;
  OpenOrFail(store, ctx, StoreMode::read_only);
  SealRecord seal = FindOrFail(store, a.id);
  OperatorSpec op = LoadOperatorOrFail(ctx, seal.operator_name);
  CompilerOptions copts;
  copts.cache_dir = CacheDir("nvrtc");
  Compiler compiler(copts);
  std::string err;
  const bool c = a.lang == "c", torch = a.lang == "torch";
  const bool ok = c       ? ExportSealC(store, seal, op, compiler, a.dir, a.allow_rebuilt, &err)
                  : torch ? ExportSealTorch(store, seal, op, compiler, a.dir, a.allow_rebuilt, &err)
                          : ExportSeal(store, seal, op, compiler, a.dir, a.allow_rebuilt, &err);
  if (!ok) throw Failure(err);
  const std::string stem = CExportName(op.name);
  if (ctx.json) {
    nlohmann::json out = {{"seal", seal.id}, {"dir", a.dir}, {"lang", a.lang}};
    if (c) out["files"] = {stem + ".h", stem + ".c"};
    if (torch)
      out["files"] = {stem + "/__init__.py", stem + "/_shapes.py", stem + "/" + stem + ".h", stem + "/" + stem + ".c"};
    std::printf("%s\n", out.dump().c_str());
  } else if (torch) {
    std::printf("exported seal %s as the PyTorch package %s in %s (with %s on sys.path: import %s, then "
                "torch.ops.forgek.%s)\n",
                Printable(seal.id.substr(0, 12)).c_str(), stem.c_str(), Printable(a.dir).c_str(),
                Printable(a.dir).c_str(), stem.c_str(), Printable(op.name).c_str());
  } else if (c) {
    std::printf("exported seal %s as C to %s (%s.h, %s.c)\n", Printable(seal.id.substr(0, 12)).c_str(),
                Printable(a.dir).c_str(), stem.c_str(), stem.c_str());
  } else {
    std::printf("exported seal %s to %s\n", Printable(seal.id.substr(0, 12)).c_str(), a.dir.c_str());
  }
}

void Diff(const Context& ctx, const SealArgs& a) {
  Store store;
  OpenOrFail(store, ctx, StoreMode::read_only);
  SealRecord x = FindOrFail(store, a.id), y = FindOrFail(store, a.other);
  if (ctx.json)
    std::printf("%s\n", SealDiffJson(store, x, y).c_str());
  else
    std::printf("%s", Printable(SealDiffText(store, x, y)).c_str());
}

void Verify(Context& ctx, const SealArgs& a) {
  Store store;
  OpenOrFail(store, ctx, StoreMode::read_only);
  SealRecord seal = FindOrFail(store, a.id);
  OperatorSpec op = LoadOperatorOrFail(ctx, seal.operator_name);
  VerifyOutcome v = VerifySealOnGpu(ctx, store, op, seal);
  if (ctx.json) {
    std::printf("%s\n", v.json.c_str());
  } else {
    std::printf("%s", Printable(v.text).c_str());
  }
  ctx.exit_code = v.exit_code;
}

}  // namespace

void set_seal_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<SealArgs>();
  CLI::App* seal = app.add_subcommand("seal", "Sealed kernels: list, show, export, verify, diff");
  seal->require_subcommand(1);

  CLI::App* list = seal->add_subcommand("list", "List seals (newest first) of the --arch");
  list->add_option("--op", args->op, "Only this operator");
  list->callback([&ctx, args] { List(ctx, *args); });

  CLI::App* show = seal->add_subcommand("show", "Show one seal with its lineage, as JSON");
  show->add_option("ID", args->id, "Seal id or unique prefix")->required()->check(NonEmpty());
  show->callback([&ctx, args] { Show(ctx, *args); });

  CLI::App* exp = seal->add_subcommand(
      "export",
      "Write a self-contained folder loadable with the CUDA driver API, or (--lang c) C source that runs it, or "
      "(--lang torch) a Python package registering it as a PyTorch op");
  exp->add_option("ID", args->id, "Seal id or unique prefix")->required()->check(NonEmpty());
  exp->add_option("DIR", args->dir, "Folder to create (must not exist or be empty; through a symbolic link, the folder it points to)")->required()->check(NonEmpty());
  exp->add_option("--lang", args->lang,
                  "folder (default): kernel.cu, kernel.cubin, launch.json (every suite config's launches resolved), "
                  "seal.json, README.md, and a dispatch's table and kernels. c: forgek_<op>.h and forgek_<op>.c, the "
                  "cubins embedded; one function per operator, forgek_<op>(stream, tensors, scalars, sizes, workspace), "
                  "plans the launches for any sizes from the manifests' expressions, checks the constraints, returns "
                  "an error code for sizes no kernel takes, picks a dispatch seal's kernel by its rule and needs the "
                  "CUDA driver API alone (docs/seal-format.md). torch: the package DIR/forgek_<op>/ (that C, "
                  "_shapes.py, __init__.py); importing it builds the C with the system cc against the CUDA toolkit "
                  "into a cache and registers torch.ops.forgek.<op>, taking and returning tensors (sizes read from "
                  "their shapes; device, dtype, shape and contiguity checked), with a fake implementation for "
                  "torch.compile. The package needs python3, torch, cc and the CUDA toolkit's headers; forgek "
                  "does not")
      ->check(CLI::IsMember({"folder", "c", "torch"}));
  exp->add_flag("--allow-rebuilt", args->allow_rebuilt,
                "Export even when this toolchain's cubin differs from the sealed one");
  exp->callback([&ctx, args] { Export(ctx, *args); });

  CLI::App* verify = seal->add_subcommand(
      "verify", "Re-validate a seal on this GPU: correct on every config, not slower than sealed (exit 3 if so)");
  verify->add_option("ID", args->id, "Seal id or unique prefix")->required()->check(NonEmpty());
  verify->callback([&ctx, args] { Verify(ctx, *args); });

  CLI::App* diff = seal->add_subcommand("diff", "Compare two seals side by side");
  diff->add_option("A", args->id, "First seal")->required()->check(NonEmpty());
  diff->add_option("B", args->other, "Second seal")->required()->check(NonEmpty());
  diff->callback([&ctx, args] { Diff(ctx, *args); });
}

}  // namespace forgek::cli
