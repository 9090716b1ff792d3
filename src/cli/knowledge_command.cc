// `forgek knowledge list|show|search|export|import|merge|forget`: look into and move the knowledge store.
//
// Read-only subcommands (list, show, search, export) never create a store: on a path with no store,
// list and search say so on stderr and print nothing (exit 0), show and export fail (exit 1).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "forgek/core/atomic_file.h"
#include "forgek/core/file_read.h"
#include "forgek/core/json_parse.h"
#include "commands.h"
#include "option_checks.h"
#include "printable.h"
#include "forgek/knowledge/knowledge.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"
#include "forgek/knowledge/store.h"
#include "forgek/knowledge/store_io.h"

namespace forgek::cli {
namespace {

using nlohmann::json;

struct KnowledgeOptions {
  std::string op, category, regime, kind, subject, id, text, file, output;
  std::string forget_decision, forget_op, forget_mechanism, forget_seal;
  int limit = 0;
};

// True when something is at `path` (a link loop or a FIFO included: Store::Open then says what).
bool StoreExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
}

void OpenOrThrow(Store* store, const std::string& path, StoreMode mode) {
  std::string err;
  if (!store->Open(path, &err, mode)) throw Failure(err);
}

// A JSON value kept in the store as text; null when unreadable, so the output stays valid JSON.
json StoredJson(const std::string& text) {
  json j = ParseJsonLenient(text);
  return j.is_discarded() ? json(nullptr) : j;
}

json ObservationJson(const Observation& o) {
  return {{"id", o.id},           {"operator", o.operator_name}, {"arch", o.arch},     {"subject", o.subject},
          {"config", o.config},   {"kind", o.kind},              {"key", o.key},       {"value", o.value},
          {"number", o.number},   {"mechanism", o.mechanism},    {"evidence", o.evidence}};
}

json DecisionJson(const DecisionRecord& d) {
  return {{"id", d.id},
          {"arch", d.scope.arch},
          {"category", d.scope.category},
          {"regime", d.scope.regime},
          {"mechanism", d.scope.mechanism},
          {"setting", d.scope.setting},
          {"settings", StoredJson(d.settings_json)},
          {"verdict", DecisionVerdictName(d.verdict)},
          {"effect", d.effect},
          {"effect_interval", {d.effect_lo, d.effect_hi}},
          {"comparisons", d.comparisons},
          {"operators", d.operators},
          {"confidence", d.confidence},
          {"supporting", d.supporting},
          {"contradicting", d.contradicting},
          {"text", d.text},
          {"updated_at", d.updated_at}};
}

json EvidenceJson(const EvidenceRecord& e) {
  return {{"id", e.id},
          {"kind", e.kind},
          {"source", e.source},
          {"operator", e.operator_name},
          {"config", e.config},
          {"candidate", e.candidate_hash},
          {"settings", StoredJson(e.settings_json)},
          {"supports", e.supports},
          {"speedup", e.speedup},
          {"noise", e.noise},
          {"detail", StoredJson(e.detail_json)},
          {"metric_deltas", StoredJson(e.metric_deltas_json)},
          {"device", e.device},
          {"created_at", e.created_at}};
}

// Whether a decision was learned on operators other than `op` only (then it is transferred to it).
bool TransferredTo(const DecisionRecord& d, const std::string& op) {
  return !op.empty() && !d.operators.empty() && std::find(d.operators.begin(), d.operators.end(), op) == d.operators.end();
}

std::string EffectCell(const DecisionRecord& d) {
  if (d.comparisons == 0) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2fx [%.2f, %.2f]", d.effect, d.effect_lo, d.effect_hi);
  return buf;
}

// One row per decision: what a person needs to take in the store within seconds.
void PrintDecisionTable(const std::vector<DecisionRecord>& decisions, const std::string& op) {
  if (decisions.empty()) return;
  std::printf("  %-10s  %-24s %-22s %-7s %-10s %-20s %5s  %s\n", "id", "mechanism", "setting", "regime", "verdict",
              "effect [interval]", "cmp", "learned on");
  for (const auto& d : decisions) {
    std::string from;
    for (const auto& o : d.operators) from += (from.empty() ? "" : ",") + o;
    if (TransferredTo(d, op)) from = "transferred from " + from;
    std::printf("  %-10.10s  %-24s %-22s %-7s %-10s %-20s %5d  %s\n", Printable(d.id).c_str(), Printable(d.scope.mechanism.substr(0, 24)).c_str(),
                d.scope.setting.empty() ? "(mechanism)" : Printable(d.scope.setting.substr(0, 22)).c_str(), Printable(d.scope.regime).c_str(),
                DecisionVerdictName(d.verdict), Printable(EffectCell(d)).c_str(), d.comparisons, Printable(from).c_str());
  }
}

// The operator's own name: `knowledge list --op gemm` means the operator `forgek run --op gemm` ran.
std::string CanonicalOperator(Store& store, const Context& ctx, const std::string& op) {
  std::vector<OperatorRecord> ops;
  std::string err;
  if (store.ListOperators(&ops, &err))
    for (const auto& o : ops)
      if (o.name == op) return op;
  try {
    std::string dir;
    OperatorSpec spec;
    Diagnostics diags;
    if (ResolveOperator(OperatorsDir(ctx), op, &dir, &err) && LoadOperator(dir, &spec, &diags)) return spec.name;
  } catch (const Failure&) {
  }
  return op;
}

// The category of an operator: as the store recorded it, else from its operator.json.
std::string CategoryOf(Store& store, const Context& ctx, const std::string& op) {
  std::vector<OperatorRecord> ops;
  std::string err;
  if (store.ListOperators(&ops, &err))
    for (const auto& o : ops)
      if (o.name == op) return o.category;
  try {
    std::string dir;
    OperatorSpec spec;
    Diagnostics diags;
    if (ResolveOperator(OperatorsDir(ctx), op, &dir, &err) && LoadOperator(dir, &spec, &diags)) return spec.category;
  } catch (const Failure&) {
  }
  return "";
}

void RunList(Context& ctx, const KnowledgeOptions& o) {
  std::string path = StorePath(ctx);
  // A missing store is an error for every command that reads one (as for `seal list`).
  if (!StoreExists(path)) throw Failure("no knowledge store at " + path);
  Store store;
  OpenOrThrow(&store, path, StoreMode::read_only);
  std::string err;
  std::vector<Observation> obs;
  const std::string op = o.op.empty() ? "" : CanonicalOperator(store, ctx, o.op);
  if (!op.empty()) {
    ObservationQuery q;
    q.operator_name = op;
    q.arch = ctx.arch;
    q.kind = o.kind;
    q.subject = o.subject;
    q.limit = o.limit;
    if (!store.ListObservations(q, &obs, &err)) throw Failure(err);
  }
  DecisionQuery dq;
  dq.arch = ctx.arch;
  dq.category = o.category.empty() && !op.empty() ? CategoryOf(store, ctx, op) : o.category;
  dq.regime = o.regime;
  dq.limit = o.limit;
  std::vector<DecisionRecord> decisions;
  if (o.op.empty() || !dq.category.empty())
    if (!store.ListDecisions(dq, &decisions, &err)) throw Failure(err);
  if (ctx.json) {
    json j = {{"store", path}, {"exists", true}, {"arch", ctx.arch}, {"operator", op}, {"category", dq.category}};
    j["observations"] = json::array();
    for (const auto& x : obs) j["observations"].push_back(ObservationJson(x));
    j["decisions"] = json::array();
    for (const auto& d : decisions) {
      json dj = DecisionJson(d);
      dj["transferred"] = TransferredTo(d, op);
      j["decisions"].push_back(std::move(dj));
    }
    std::printf("%s\n", j.dump(1).c_str());
    return;
  }
  if (!op.empty()) {
    // Observations are many (every metric, SASS class and launch field of every profiled kernel):
    // counted per subject here, listed with --kind / --subject or --json.
    std::map<std::string, std::map<std::string, int>> counts;  // subject -> kind -> n
    for (const auto& x : obs) counts[x.subject][x.kind] += 1;
    std::printf("%s on %s%s: %zu observation(s)\n", Printable(op).c_str(), ctx.arch.c_str(),
                dq.category.empty() ? "" : Printable((" (category " + dq.category + ")")).c_str(), obs.size());
    bool detail = !o.kind.empty() || !o.subject.empty();
    for (const auto& [subject, kinds] : counts) {
      std::string line;
      for (const auto& [kind, n] : kinds) line += (line.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
      std::printf("  %-40s %s\n", Printable(subject.substr(0, 40)).c_str(), Printable(line).c_str());
    }
    for (const auto& x : obs)
      if (detail || (x.kind == "claim" && x.value == "unverified"))
        std::printf("    %-20s %-8s %-18s %-24s %-22s %s\n", Printable(x.subject.substr(0, 20)).c_str(), Printable(x.kind).c_str(),
                    Printable(x.key).c_str(), Printable(x.value.substr(0, 24)).c_str(), x.mechanism.empty() ? "" : Printable(("-> " + x.mechanism)).c_str(),
                    Printable(x.evidence).c_str());
  }
  std::printf("%zu decision(s) for %s on %s:\n", decisions.size(),
              dq.category.empty() ? "every category" : Printable(dq.category).c_str(), ctx.arch.c_str());
  PrintDecisionTable(decisions, op);
}

void RunShow(Context& ctx, const KnowledgeOptions& o) {
  std::string path = StorePath(ctx);
  if (!StoreExists(path)) throw Failure("no knowledge store at " + path);
  Store store;
  OpenOrThrow(&store, path, StoreMode::read_only);
  std::string err;
  DecisionRecord d;
  std::vector<EvidenceRecord> ev;
  bool found = false;
  if (!store.GetDecision(o.id, &d, &ev, &found, &err)) throw Failure(err);
  if (found) {
    if (ctx.json) {
      json j = DecisionJson(d);
      j["evidence"] = json::array();
      for (const auto& e : ev) j["evidence"].push_back(EvidenceJson(e));
      std::printf("%s\n", j.dump(1).c_str());
      return;
    }
    std::printf("decision %s\n  %s\n  scope: %s / %s / %s / %s / %s\n  settings: %s\nevidence (%zu):\n",
                Printable(d.id).c_str(), Printable(d.text).c_str(), Printable(d.scope.arch).c_str(), Printable(d.scope.category).c_str(), Printable(d.scope.regime).c_str(),
                Printable(d.scope.mechanism).c_str(), d.scope.setting.empty() ? "(whole mechanism)" : Printable(d.scope.setting).c_str(),
                Printable(d.settings_json).c_str(), ev.size());
    for (const auto& e : ev) {
      if (e.kind == "observation") {
        std::printf("  observation  %s\n", Printable(e.source).c_str());
        continue;
      }
      json detail = ParseJsonLenient(e.detail_json);
      std::string against = detail.is_object() ? detail.value("against", "") : "";
      std::printf("  %-10s %.3fx (noise %.1f%%) vs %s on %s: %s\n", Printable(e.kind).c_str(), e.speedup, 100 * e.noise,
                  Printable(against).c_str(), Printable(e.operator_name).c_str(), Printable(e.source).c_str());
      if (detail.is_object() && detail.contains("configs") && detail["configs"].is_array())
        for (const auto& c : detail["configs"])
          if (c.is_object())
            std::printf("      %-22s %10.2f us vs %10.2f us  %.3fx (noise %.1f%%)\n", Printable(c.value("config", "")).c_str(),
                        c.value("setting_us", 0.0), c.value("against_us", 0.0), c.value("speedup", 0.0),
                        100 * c.value("noise", 0.0));
      if (e.metric_deltas_json != "{}" && !e.metric_deltas_json.empty())
        std::printf("      metric deltas (this setting minus the other): %s\n", Printable(e.metric_deltas_json).c_str());
    }
    return;
  }
  // Not a decision: a mechanism of the catalogue.
  KnowledgeBase kb;
  Diagnostics diags;
  if (LoadKnowledgeBase(KnowledgeDir(), &kb, &diags))
    if (const Mechanism* m = kb.FindMechanism(o.id)) {
      if (ctx.json) {
        std::printf("%s\n", ParseJsonLenient(m->json).dump(1).c_str());
      } else {
        std::printf("%s: %s (%s)\n  what: %s\n  helps: %s\n  hurts: %s\n  words: %s\n", Printable(m->id).c_str(), Printable(m->name).c_str(),
                    Printable(m->unit).c_str(), Printable(m->what).c_str(), Printable(m->helps).c_str(), Printable(m->hurts).c_str(), Printable(m->llm_words).c_str());
      }
      return;
    }
  throw Failure("no decision or mechanism '" + o.id + "' in " + path);
}

bool Contains(const std::string& hay, const std::string& needle) {
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return lower(hay).find(lower(needle)) != std::string::npos;
}

void RunSearch(Context& ctx, const KnowledgeOptions& o) {
  json j = {{"decisions", json::array()}, {"observations", json::array()}, {"mechanisms", json::array()}};
  std::string path = StorePath(ctx);
  std::string err;
  if (StoreExists(path)) {
    Store store;
    OpenOrThrow(&store, path, StoreMode::read_only);
    std::vector<DecisionRecord> decisions;
    if (!store.ListDecisions({}, &decisions, &err)) throw Failure(err);
    for (const auto& d : decisions)
      if (Contains(d.text, o.text) || Contains(d.scope.category, o.text)) j["decisions"].push_back(DecisionJson(d));
    std::vector<Observation> obs;
    if (!store.ListObservations({}, &obs, &err)) throw Failure(err);
    for (const auto& x : obs)
      if (Contains(x.key + " " + x.value + " " + x.mechanism + " " + x.evidence + " " + x.operator_name, o.text))
        j["observations"].push_back(ObservationJson(x));
  } else {
    spdlog::info("no knowledge store at {} yet: searching the catalogue only", path);
  }
  KnowledgeBase kb;
  Diagnostics diags;
  if (LoadKnowledgeBase(KnowledgeDir(), &kb, &diags))
    for (const auto& m : kb.mechanisms)
      if (Contains(m.id + " " + m.name + " " + m.what + " " + m.helps + " " + m.llm_words, o.text))
        j["mechanisms"].push_back({{"id", m.id}, {"name", m.name}, {"unit", m.unit}});
  if (ctx.json) {
    std::printf("%s\n", j.dump(1).c_str());
    return;
  }
  std::printf("mechanisms (%zu):\n", j["mechanisms"].size());
  for (const auto& m : j["mechanisms"])
    std::printf("  %-22s %s\n", Printable(m["id"].get<std::string>()).c_str(), Printable(m["name"].get<std::string>()).c_str());
  std::printf("decisions (%zu):\n", j["decisions"].size());
  for (const auto& d : j["decisions"])
    std::printf("  %.10s  %s\n", Printable(d["id"].get<std::string>()).c_str(), Printable(d["text"].get<std::string>()).c_str());
  std::printf("observations (%zu):\n", j["observations"].size());
  for (const auto& x : j["observations"])
    std::printf("  %s/%s %s %s = %s\n", Printable(x["operator"].get<std::string>()).c_str(), Printable(x["config"].get<std::string>()).c_str(),
                Printable(x["kind"].get<std::string>()).c_str(), Printable(x["key"].get<std::string>()).c_str(),
                Printable(x["value"].get<std::string>()).c_str());
}

void RunExport(Context& ctx, const KnowledgeOptions& o) {
  std::string path = StorePath(ctx);
  if (!StoreExists(path)) throw Failure("no knowledge store at " + path);
  Store store;
  OpenOrThrow(&store, path, StoreMode::read_only);
  std::string text, err;
  if (!ExportStore(store, &text, &err)) throw Failure(err);
  if (o.output.empty() || o.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  if (!WriteFileAtomic(o.output, text, &err)) throw Failure(err);
  spdlog::info("exported {} to {}", path, o.output);
}

void PrintImportStats(const Context& ctx, const std::string& what, const ImportStats& st) {
  if (ctx.json) {
    std::printf("%s\n", json({{"added", st.added},
                              {"present", st.present},
                              {"left_out", st.left_out},
                              {"cached_profiles_left_out", st.cached_profiles_left_out},
                              {"decisions_updated", st.decisions_updated},
                              {"decisions_dropped", st.decisions_dropped}})
                            .dump(1)
                            .c_str());
    return;
  }
  int added = 0, present = 0;
  for (const auto& [t, n] : st.added) added += n;
  for (const auto& [t, n] : st.present) present += n;
  std::printf("%s: %d row(s) added, %d already present, %d decision(s) re-derived\n", what.c_str(), added, present,
              st.decisions_updated);
  if (st.left_out > 0)
    std::printf("  %d evidence row(s) of kind \"attempt\" left out: uncontrolled, dropped since schema 4\n",
                st.left_out);
  if (st.cached_profiles_left_out > 0)
    std::printf("  %d cached profile(s) left out: a profile cache holds its own machine's measurements\n",
                st.cached_profiles_left_out);
  if (st.decisions_dropped > 0)
    std::printf("  %d decision(s) left out: no evidence of theirs remains, so nothing measured their verdict\n",
                st.decisions_dropped);
  for (const auto& [t, n] : st.added) std::printf("  %-22s +%d\n", t.c_str(), n);
}

void RunImport(Context& ctx, const KnowledgeOptions& o) {
  std::string why;
  if (!IsReadableFile(o.file, &why)) throw Failure("cannot import " + o.file + ": it " + why);  // a FIFO would hang
  std::string text;
  // Checked from the file's size before it is read: an import is one JSON text, within its limit.
  if (!ReadFileLimited(o.file, kJsonMaxBytes, "a knowledge import (one JSON text)", &text, &why))
    throw Failure("cannot import " + o.file + ": " + why);
  Store store;
  OpenOrThrow(&store, StorePath(ctx), StoreMode::create);
  ImportStats st;
  std::string err;
  if (!ImportStore(store, text, o.file, &st, &err)) throw Failure(err);
  PrintImportStats(ctx, "imported " + o.file, st);
}

void RunMerge(Context& ctx, const KnowledgeOptions& o) {
  if (!StoreExists(o.file)) throw Failure("no knowledge store at " + o.file);
  Store store;
  OpenOrThrow(&store, StorePath(ctx), StoreMode::create);
  ImportStats st;
  std::string err;
  if (!MergeStore(store, o.file, &st, &err)) throw Failure(err);
  PrintImportStats(ctx, "merged " + o.file, st);
}

void RunForget(Context& ctx, const KnowledgeOptions& o) {
  int chosen =
      !o.forget_decision.empty() + !o.forget_op.empty() + !o.forget_mechanism.empty() + !o.forget_seal.empty();
  if (chosen != 1) throw UsageError("knowledge forget: give exactly one of --decision, --op, --mechanism, --seal");
  std::string path = StorePath(ctx);
  if (!StoreExists(path)) throw Failure("no knowledge store at " + path);
  Store store;
  OpenOrThrow(&store, path, StoreMode::existing);
  ForgetQuery q;
  q.decision = o.forget_decision;
  q.operator_name = o.forget_op;
  q.mechanism = o.forget_mechanism;
  q.seal = o.forget_seal;
  if (q.decision.empty() && q.seal.empty()) q.arch = ctx.arch;
  std::map<std::string, int> removed;
  std::string err;
  if (!Forget(store, q, &removed, &err)) throw Failure(err);
  if (ctx.json) {
    std::printf("%s\n", json({{"removed", removed}}).dump(1).c_str());
    return;
  }
  int total = 0;
  for (const auto& [t, n] : removed) total += n;
  std::printf("forgot %d row(s)\n", total);
  for (const auto& [t, n] : removed)
    if (n > 0) std::printf("  %-14s -%d\n", t.c_str(), n);
}

}  // namespace

void set_knowledge_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<KnowledgeOptions>();
  CLI::App* cmd = app.add_subcommand("knowledge", "Look into, move and prune the knowledge store");
  cmd->require_subcommand(1);

  CLI::App* list = cmd->add_subcommand("list", "Observations of an operator and ranked decisions (for --arch)");
  list->add_option("--op", o->op, "Operator whose observations to show (and its category's decisions)");
  list->add_option("--category", o->category, "Decisions of this category (default: the operator's)");
  list->add_option("--regime", o->regime, "Decisions of this shape regime (skinny, small, large)");
  list->add_option("--kind", o->kind, "Observations of this kind (launch, name, metric, sass, roofline)");
  list->add_option("--subject", o->subject, "Observations of this subject (reference, seal:ID, ...)");
  list->add_option("--limit", o->limit, "At most this many rows of each (0: all)")->check(WholeNumber(0, 1000000000));
  list->callback([&ctx, o] { RunList(ctx, *o); });

  CLI::App* show = cmd->add_subcommand("show", "A decision with its evidence, or a catalogue mechanism");
  show->add_option("id", o->id, "Decision id (or unique prefix) or mechanism id")->required();
  show->callback([&ctx, o] { RunShow(ctx, *o); });

  CLI::App* search = cmd->add_subcommand("search", "Decisions, observations and mechanisms mentioning TEXT");
  search->add_option("text", o->text, "Text to look for (case-insensitive)")->required();
  search->callback([&ctx, o] { RunSearch(ctx, *o); });

  CLI::App* exp = cmd->add_subcommand("export", "The whole store as JSON");
  exp->add_option("-o,--output", o->output, "File to write (default: stdout)");
  exp->callback([&ctx, o] { RunExport(ctx, *o); });

  CLI::App* imp = cmd->add_subcommand("import", "Add an exported JSON document to the store");
  imp->add_option("file", o->file, "JSON written by 'forgek knowledge export'")->required();
  imp->callback([&ctx, o] { RunImport(ctx, *o); });

  CLI::App* merge = cmd->add_subcommand("merge", "Add another store file (e.g. from another machine)");
  merge->add_option("store", o->file, "The other store file")->required();
  merge->callback([&ctx, o] { RunMerge(ctx, *o); });

  CLI::App* forget =
      cmd->add_subcommand("forget", "Remove a decision, an operator's knowledge, a mechanism or a seal");
  forget->add_option("--decision", o->forget_decision, "Decision id (or unique prefix)");
  forget->add_option("--op", o->forget_op, "Operator: its observations, profiles and evidence (on --arch)");
  forget->add_option("--mechanism", o->forget_mechanism, "Mechanism: every decision about it (on --arch)");
  forget->add_option("--seal", o->forget_seal,
                     "Seal id (or unique prefix): the seal; its children take its parent. Its candidate is kept");
  forget->callback([&ctx, o] { RunForget(ctx, *o); });
}

}  // namespace forgek::cli
