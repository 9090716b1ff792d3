// `forgek report`: what the store knows of one run, one operator or everything (and PyTorch's times
// beside the seals, --torch) as markdown, JSON, CSV or one self-contained HTML file. Reads only.
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "load_operator.h"
#include "output_path.h"
#include "forgek/core/atomic_file.h"
#include "forgek/knowledge/store.h"
#include "forgek/report/report.h"
#include "forgek/report/report_print.h"
#include "forgek/report/torch_compare.h"

namespace forgek::cli {
namespace {

struct ReportArgs {
  std::string run, op;
  std::string format;  // "" : markdown, or JSON under --json
  std::string output;
  std::vector<std::string> torch;  // scripts/compare_torch.py's JSON files, shown beside the seals
};

ReportFormat FormatOf(const Context& ctx, const ReportArgs& a) {
  ReportFormat format = ReportFormat::markdown;
  if (a.format.empty()) return ctx.json ? ReportFormat::json : format;
  if (!ParseReportFormat(a.format, &format))
    throw UsageError("--format " + a.format + " is none of md, json, csv, html");
  if (ctx.json && format != ReportFormat::json)
    throw UsageError("--json asks for JSON on stdout and --format " + a.format + " for another format: give one");
  return format;
}

// True when the store holds anything of operator `name`: a run, a seal or a nightly check.
bool StoreKnows(Store& store, const std::string& name) {
  std::string err;
  std::vector<RunRecord> runs;
  std::vector<SealRecord> seals;
  std::vector<SealCheckRecord> checks;
  if (!store.ListRuns(name, "", &runs, &err) || !store.ListSeals(name, "", &seals, &err) ||
      !store.ListSealChecks("", name, &checks, &err))
    throw Failure("store: " + err);
  return !runs.empty() || !seals.empty() || !checks.empty();
}

// The operators the report may name, loaded where their folder is found: their flops and bytes
// place the seals on the roofline. One that cannot be loaded is left out (the report says so).
std::map<std::string, OperatorSpec> Specs(const Context& ctx, const std::set<std::string>& names) {
  std::map<std::string, OperatorSpec> specs;
  std::string root;
  try {
    root = OperatorsDir(ctx);
  } catch (const Failure& f) {
    spdlog::warn("report: {}: the seals are drawn without a roofline", f.what());
    return specs;
  }
  for (const std::string& name : names) {
    std::string dir, err;
    OperatorSpec op;
    Diagnostics diags;
    if (ResolveOperator(root, name, &dir, &err) && LoadOperator(dir, &op, &diags)) specs[name] = op;
  }
  return specs;
}

// Every --torch file read and checked before anything is built or written: a malformed one is a
// failure (exit 1) that prints no partial report.
std::vector<TorchComparison> TorchComparisons(const ReportArgs& a) {
  std::vector<TorchComparison> out;
  for (const std::string& path : a.torch) {
    TorchComparison t;
    std::string err;
    if (!ReadTorchComparison(path, &t, &err)) throw Failure("--torch " + err);
    out.push_back(std::move(t));
  }
  return out;
}

void Report(Context& ctx, const ReportArgs& a) {
  const ReportFormat format = FormatOf(ctx, a);
  if (!a.output.empty()) {
    std::string why;
    OutputProblem p = CheckOutputFile("-o", a.output, &why);
    if (p == OutputProblem::usage) throw UsageError(why);
    if (p == OutputProblem::failure) throw Failure(why);
  }
  const std::vector<TorchComparison> torch = TorchComparisons(a);
  Store store;
  std::string err;
  if (!store.Open(StorePath(ctx), &err, StoreMode::read_only)) throw Failure(err);

  ReportSelection sel;
  std::set<std::string> names;
  if (!a.run.empty()) {
    RunRecord run;
    bool found = false;
    if (!FindReportRun(store, a.run, &run, &found, &err)) throw UsageError("--run: " + err);
    if (!found)
      throw UsageError("--run " + a.run + ": no such run in " + store.path() + " (`forgek report` lists the runs)");
    sel.run_id = run.id;
    names.insert(run.operator_name);
  } else if (!a.op.empty()) {
    // A name the store holds is reported as it is, its folder gone or not; else the folder
    // resolves an alias, and a name that is neither is a usage error with the close matches.
    sel.op = StoreKnows(store, a.op) ? a.op : LoadOperatorOption(ctx, "--op", a.op).name;
    names.insert(sel.op);
  } else {
    std::vector<RunRecord> runs;
    std::vector<SealRecord> seals;
    if (!store.ListRuns("", "", &runs, &err) || !store.ListSeals("", "", &seals, &err)) throw Failure("store: " + err);
    for (const RunRecord& r : runs) names.insert(r.operator_name);
    for (const SealRecord& s : seals) names.insert(s.operator_name);
  }

  forgek::Report report;
  if (!BuildReport(store, sel, Specs(ctx, names), &report, &err)) throw Failure("store: " + err);
  if (!AttachTorchComparisons(torch, &report, &err)) throw UsageError("--torch: " + err);
  const std::string text = PrintReport(report, format);
  if (a.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  if (!WriteFileAtomic(a.output, text, &err)) throw Failure(err);
  spdlog::info("report: {} of {} in {}", report.Empty() ? "an empty report" : "the report", report.scope, a.output);
}

}  // namespace

void set_report_command(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "What the store knows, per operator and config: expert, incumbent and best times, speedup, SOL %, "
      "mechanisms, attempts and cost, with convergence, roofline, nightly history and knowledge over time");
  CLI::Option* run = cmd->add_option("--run", a->run, "Only this run (its id, or a unique prefix of 4 or more)");
  CLI::Option* op = cmd->add_option("--op", a->op, "Only this operator (name or alias)");
  run->excludes(op);
  cmd->add_option("--format", a->format, "md (default), json (the default under --json), csv or html");
  cmd->add_option("-o,--output", a->output, "Write the report to this file instead of stdout");
  cmd->add_option("--torch", a->torch,
                  "scripts/compare_torch.py's --out JSON: its eager and torch.compile times beside the seals' configs "
                  "(repeatable; each config in one file only)");
  cmd->footer(
      "\nWithout --run or --op, the whole store. markdown: the suite scoreboard and a table per section;\n"
      "json: every field (\"format\": \"forgek-report/1\"); csv: one row per operator and config; html: one\n"
      "self-contained file with the tables and the plots as inline SVG (no script, nothing fetched).\n"
      "--torch FILE.json: what scripts/compare_torch.py timed (the seal, torch eager, torch.compile, the\n"
      "speedups and whether the seal was correct), matched by operator and config name, in every format:\n"
      "a table (md, html) with a bar plot per operator (html), a \"torch\" object per config (json),\n"
      "torch_* columns (csv).\n"
      "The store is only read. Exit codes: 0 written, 2 a usage mistake (an unknown run or operator, a\n"
      "config in two --torch files), 1 no store, an unwritable output, or a --torch file unreadable or\n"
      "not as compare_torch.py writes it (the message names the file and the field).\n");
  cmd->callback([&ctx, a] { Report(ctx, *a); });
}

}  // namespace forgek::cli
