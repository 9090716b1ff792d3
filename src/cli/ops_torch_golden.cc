// The PyTorch golden of an operator (a KernelBench problem or a FlashInfer-Bench definition) against
// its operator.json.
#include "ops_torch_golden.h"

#include <filesystem>
#include <map>
#include <vector>

#include "forgek/core/torch_helper.h"

namespace forgek::cli {
namespace {

std::string ShapeText(const std::vector<std::string>& shape) {
  std::string out;
  for (const std::string& d : shape) out += (out.empty() ? "" : ", ") + d;
  return "[" + out + "]";
}

}  // namespace

void CheckTorchGolden(const OperatorSpec& op, Diagnostics* diags) {
  const std::string path = (std::filesystem::path(op.dir) / op.golden).lexically_normal().string();
  auto fail = [&](const std::string& message, int line = 0) { diags->push_back({path, "golden", line, 0, message}); };
  TorchHelperPaths paths;
  std::string err;
  if (!FindTorchHelper(&paths, &err)) return fail("a PyTorch golden needs python3 with torch: " + err);
  std::map<std::string, int64_t> sizes(op.configs.front().values.begin(), op.configs.front().values.end());
  KernelBenchProblem problem;
  ProblemError refusal;
  if (!DescribeKernelBench(paths, path, sizes, 600, &problem, &refusal))
    return fail("at config '" + op.configs.front().name + "': " + refusal.message, refusal.line);
  std::vector<const TensorSpec*> outputs;
  std::map<std::string, const TensorSpec*> inputs;
  for (const TensorSpec& t : op.tensors) {
    if (t.role == TensorRole::output) outputs.push_back(&t);
    else inputs[t.name] = &t;
  }
  size_t out_index = 0;
  for (const ProblemTensor& p : problem.tensors) {
    const TensorSpec* t = nullptr;
    if (p.role == "output") {
      if (out_index < outputs.size()) t = outputs[out_index];
      ++out_index;
      if (!t) continue;
    } else {
      auto it = inputs.find(p.name);
      if (it == inputs.end()) {
        fail("the problem's input " + p.name + " is not an input of operator.json");
        continue;
      }
      t = it->second;
    }
    const std::string what = p.role == "output" ? "output " + std::to_string(out_index - 1) + " (" + t->name + ")"
                                                : "input " + p.name;
    if (p.dtype != DTypeName(t->dtype))
      fail(what + ": the problem gives " + p.dtype + ", operator.json says " + DTypeName(t->dtype));
    if (p.shape != t->shape)
      fail(what + ": the problem's shape is " + ShapeText(p.shape) + ", operator.json says " + ShapeText(t->shape));
  }
  // A definition's scalar inputs are the operator's scalars: the golden is given the values its
  // golden.json holds, so they must be the ones a kernel is given.
  for (const nlohmann::json& g : problem.scalars) {
    const std::string name = g.value("name", "");
    const ScalarSpec* s = nullptr;
    for (const ScalarSpec& c : op.scalars)
      if (c.name == name) s = &c;
    if (!s) {
      fail("the definition's scalar input " + name + " is not a scalar of operator.json");
      continue;
    }
    const double value = g.value("value", 0.0);
    if (g.value("dtype", "") != DTypeName(s->dtype) || value != s->value)
      fail("scalar " + name + ": the golden gives " + g.value("dtype", "") + " " + g["value"].dump() +
           ", operator.json says " + DTypeName(s->dtype) + " " + nlohmann::json(s->value).dump());
  }
  if (out_index != outputs.size())
    fail("the problem returns " + std::to_string(out_index) + " output(s), operator.json has " +
         std::to_string(outputs.size()));
}

}  // namespace forgek::cli
