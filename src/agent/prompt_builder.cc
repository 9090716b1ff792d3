// Renders a proposal context as prompt text: the operator, its shapes, the hardware and the run so far.
#include "prompt_builder.h"

#include <fmt/format.h>

#include <algorithm>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "forgek/core/device_library.h"
#include "forgek/core/file_read.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/torch_helper.h"

namespace forgek {
namespace {

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string OrNone(const std::string& text) { return text.empty() ? "(none)" : text; }

// What the kernel must compute when the golden is a PyTorch problem, which the operator's
// description only names: the problem's source (KernelBench) or the definition's reference
// (FlashInfer-Bench). A CUDA golden is said in the description and the tensors.
std::string GoldenText(const OperatorSpec& op) {
  if (!IsTorchGolden(op.golden))
    return "A CUDA kernel of the operator's folder; the description and the tensors above say what it computes.";
  const std::string path = (std::filesystem::path(op.dir) / op.golden).string();
  std::string text, why;
  if (!ReadFileLimited(path, 1u << 20, "a PyTorch golden", &text, &why))
    return "(the PyTorch golden " + op.golden + " could not be read: " + why + ")";
  if (op.golden.size() > 5 && op.golden.compare(op.golden.size() - 5, 5, ".json") == 0) {
    const nlohmann::json j = ParseJsonLenient(text);
    const nlohmann::json* def = j.is_object() && j.contains("flashinfer") ? &j["flashinfer"] : &j;
    if (!def->is_object() || !def->contains("reference") || !(*def)["reference"].is_string())
      return "(the FlashInfer-Bench definition " + op.golden + " holds no reference text)";
    std::string scalars;
    if (j.is_object() && j.contains("scalars") && j["scalars"].is_object())
      for (const auto& [name, value] : j["scalars"].items()) scalars += " " + name + "=" + value.dump();
    return "The reference of a FlashInfer-Bench definition (PyTorch): the kernel's outputs are those of `run(...)` "
           "below, called with the tensors above in the definition's input order" +
           (scalars.empty() ? std::string() : " and the scalar inputs" + scalars) + ".\n\n```python\n" +
           (*def)["reference"].get<std::string>() + "\n```";
  }
  return "A PyTorch problem (KernelBench format): the kernel's outputs are those of "
         "`Model(*get_init_inputs()).forward(*get_inputs())`, with the input tensors above as forward's arguments "
         "and the Model's parameters (inputs named after their state_dict keys, dots as underscores); the size "
         "constants are the configs' params.\n\n```python\n" +
         text + "\n```";
}


std::string TensorLines(const OperatorSpec& op) {
  std::vector<std::string> lines;
  for (const auto& t : op.tensors) {
    lines.push_back(fmt::format("- {} ({}, {}): [{}]", t.name, TensorRoleName(t.role), DTypeName(t.dtype), Join(t.shape, ", ")));
  }
  for (const auto& s : op.scalars) {
    lines.push_back(fmt::format("- {} (scalar, {}) = {:g}", s.name, DTypeName(s.dtype), s.value));
  }
  return OrNone(Join(lines, "\n"));
}

std::string ConfigLines(const OperatorSpec& op) {
  std::vector<std::string> lines;
  for (const auto& c : op.configs) {
    std::vector<std::string> values, shapes;
    for (const auto& [name, v] : c.values) values.push_back(fmt::format("{}={}", name, v));
    for (const auto& t : op.tensors) {
      std::vector<int64_t> shape;
      Diagnostic diag;
      if (op.TensorShape(t, c.values, &shape, &diag)) {
        std::vector<std::string> dims;
        for (int64_t d : shape) dims.push_back(std::to_string(d));
        shapes.push_back(fmt::format("{} [{}]", t.name, Join(dims, ", ")));
      }
    }
    lines.push_back(fmt::format("- {}: {}; {}", c.name, Join(values, ", "), Join(shapes, ", ")));
  }
  return OrNone(Join(lines, "\n"));
}

std::string ToleranceText(const Tolerance& t) {
  if (t.exact) return "bit-exact";
  std::string text = fmt::format("relative L2 error <= {:g}, max abs error <= {:g}", t.rel_l2, t.max_abs);
  if (t.check != "elementwise") text += " (" + t.check + " check)";
  return text;
}

std::string DecisionLines(const std::vector<RetrievedDecision>& decisions) {
  std::vector<std::string> lines;
  for (const auto& d : decisions) {
    std::string text = d.text.empty() ? fmt::format("{} {}", d.mechanism, d.settings) : d.text;
    lines.push_back(fmt::format("- [{}, effect x{:.2f}, confidence {:.2f}] {}", DecisionVerdictName(d.verdict), d.effect, d.confidence, text));
  }
  return OrNone(Join(lines, "\n"));
}

std::string FirstLines(const std::string& text, size_t max_chars) {
  std::string one = text.substr(0, std::min(text.size(), max_chars));
  std::replace(one.begin(), one.end(), '\n', ' ');
  return text.size() > max_chars ? one + " ..." : one;
}


std::string HistoryLines(const std::vector<AttemptSummary>& history, int recent) {
  std::vector<std::string> lines;
  size_t first = history.size() > static_cast<size_t>(std::max(recent, 0)) ? history.size() - recent : 0;
  for (size_t i = first; i < history.size(); ++i) {
    const auto& a = history[i];
    std::string what = a.family.empty() ? "free-form kernel" : "family " + a.family;
    if (!a.params.empty()) what += " (" + ParamsText(a.params) + ")";
    std::string speed = a.geomean_speedup > 0 ? fmt::format(", x{:.3f} vs incumbent", a.geomean_speedup) : "";
    lines.push_back(fmt::format("- attempt {}: {} -> {}{}: {}", a.iteration + 1, what, OutcomeName(a.outcome), speed,
                                OrNone(FirstLines(a.feedback, 400))));
  }
  return OrNone(Join(lines, "\n"));
}

std::string PriorLines(const std::vector<PriorResult>& prior) {
  std::vector<std::string> lines;
  for (const auto& r : prior)
    lines.push_back(fmt::format("- family {} ({}): {}", r.family, ParamsText(r.params), r.source));
  return OrNone(Join(lines, "\n"));
}

// A dispatch incumbent: no one kernel is the one to beat. Per config, what serves it, then each
// distinct source once, naming the configs it serves.
std::string DispatchIncumbentText(const std::vector<IncumbentServer>& servers) {
  std::vector<std::string> sources;               // distinct, in order of first use
  std::vector<std::vector<std::string>> serves;  // per source, the configs it serves
  std::string out =
      "The incumbent is a dispatch: each config is served by its own kernel, and your kernel is timed on each "
      "config against the one serving it there (beat each on its own config):\n";
  for (const IncumbentServer& s : servers) {
    std::string where = "a library call, no source";
    if (!s.source.empty()) {
      std::string shown = CollapseDeviceLibrary(s.source);
      size_t i = std::find(sources.begin(), sources.end(), shown) - sources.begin();
      if (i == sources.size()) {
        sources.push_back(std::move(shown));
        serves.emplace_back();
      }
      serves[i].push_back(s.config);
      where = fmt::format("source {} below", static_cast<char>('A' + i % 26));
    }
    out += fmt::format("- {}: {} ({})\n", s.config, s.kernel, where);
  }
  for (size_t i = 0; i < sources.size(); ++i)
    out += fmt::format("\nSource {} (serves {}):\n\n```cuda\n{}\n```\n", static_cast<char>('A' + i % 26),
                       Join(serves[i], ", "), sources[i]);
  return out;
}

std::string IncumbentText(const ProposalContext& ctx) {
  if (!ctx.incumbent_dispatch.empty()) return DispatchIncumbentText(ctx.incumbent_dispatch);
  if (ctx.incumbent_source) {
    return "The incumbent kernel (the one to beat):\n\n```cuda\n" + CollapseDeviceLibrary(ctx.incumbent_source->source) +
           "\n```";
  }
  if (ctx.op && !ctx.op->reference.library.empty()) {
    return "The incumbent is the library call `" + ctx.op->reference.library + "` (no source).";
  }
  return "The incumbent has no source to show.";
}

}  // namespace

std::string CutText(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return text.substr(0, max_chars) + "\n[... cut: " + std::to_string(text.size() - max_chars) + " more characters]";
}

std::string ParamsText(const ParamAssignment& params) {
  std::vector<std::string> parts;
  for (const auto& [name, v] : params) parts.push_back(fmt::format("{}={}", name, v));
  return Join(parts, ", ");
}

TemplateVars ProposeVariables(const ProposalContext& ctx, const LlmOptions& opts, const PromptTemplates& prompts,
                              int variant, int variants, const ParentChoice& parents) {
  const OperatorSpec& op = *ctx.op;
  TemplateVars v;
  v["operator_name"] = op.name;
  v["operator_category"] = op.category;
  v["operator_description"] = OrNone(op.description);
  v["golden"] = GoldenText(op);
  v["operator_params"] = OrNone(Join(op.params, ", "));
  v["tensors"] = TensorLines(op);
  v["configs"] = ConfigLines(op);
  v["tolerance"] = ToleranceText(op.tolerance);
  v["arch"] = ctx.arch;
  v["hardware"] = OrNone(ctx.hardware);
  v["incumbent_summary"] = OrNone(ctx.incumbent_summary);
  v["incumbent"] = IncumbentText(ctx);
  v["decisions"] = DecisionLines(ctx.decisions);
  v["history"] = HistoryLines(ctx.history, opts.recent_attempts);
  v["prior_results"] = PriorLines(ctx.prior_results);
  v["candidate_format"] = prompts.Text("candidate_format.md");
  v["device_library"] = DeviceLibraryApi();
  // Operator files and store contents are not ours: a 10 MB description must not become a 10 MB
  // request. The format text and the library's API are forgek's own and are left whole.
  for (auto& [name, value] : v)
    if (name != "candidate_format" && name != "device_library") value = CutText(value, opts.max_prompt_field_chars);
  v["variant"] = std::to_string(variant);
  v["variants"] = std::to_string(variants);
  v["parents"] = ParentsText(parents, opts);
  v["task"] = TaskText(parents);
  return v;
}

TemplateVars RepairVariables(const AttemptSummary& attempt, const LlmOptions& opts) {
  return {{"outcome", OutcomeName(attempt.outcome)}, {"feedback", CutText(attempt.feedback, opts.max_feedback_chars)}};
}

TemplateVars FormatRepairVariables(const std::string& problem, const LlmOptions& opts) {
  return {{"problem", CutText(problem, opts.max_feedback_chars)}};
}

}  // namespace forgek
