// Reading a FlashInfer-Bench definition and its workloads (flashinfer-bench's
// docs/flashinfer-trace/definition.mdx and workload.mdx) for `forgek ops import flashinfer`.
#include "flashinfer_definition.h"

#include <algorithm>
#include <set>

#include "forgek/core/file_read.h"
#include "forgek/core/json_location.h"
#include "forgek/core/json_parse.h"

namespace forgek::cli {
namespace {

using OJson = nlohmann::ordered_json;

constexpr uint64_t kMaxDefinitionBytes = uint64_t{16} << 20;
constexpr uint64_t kMaxWorkloadsBytes = uint64_t{64} << 20;

// FlashInfer-Bench's dtypes: forgek's name for a tensor, or why forgek cannot take it.
struct DtypeRule {
  const char* fi;
  const char* forgek;
  const char* why_not;
};
const DtypeRule kDtypes[] = {
    {"float32", "f32", ""},
    {"float16", "f16", ""},
    {"bfloat16", "bf16", ""},
    {"int64", "i64", ""},
    {"int32", "i32", ""},
    {"int8", "i8", ""},
    {"float8_e4m3fn", "", "the PyTorch golden cannot be given float8 tensors (the helper carries none)"},
    {"float8_e5m2", "", "the PyTorch golden cannot be given float8 tensors (the helper carries none)"},
    {"float4_e2m1", "", "forgek has no 4-bit float dtype"},
    {"int16", "", "forgek has no 16-bit integer dtype"},
    {"bool", "", "forgek has no bool dtype"},
};

const DtypeRule* FindDtype(const std::string& name) {
  for (const DtypeRule& r : kDtypes)
    if (name == r.fi) return &r;
  return nullptr;
}

std::string DtypeList() {
  std::string out;
  for (const DtypeRule& r : kDtypes) out += (out.empty() ? "" : ", ") + std::string(r.fi);
  return out;
}

// A scalar input arrives in Python as a number; forgek's scalars are f32, i32 or i64.
std::string ScalarDtype(const std::string& fi) {
  if (fi == "float32" || fi == "float16" || fi == "bfloat16") return "f32";
  if (fi == "int32") return "i32";
  if (fi == "int64") return "i64";
  return "";
}

// Refusals located in one JSON text: the whole file, or one line of a JSONL file (line_offset
// lines before it).
class Where {
 public:
  Where(const std::string& file, const std::string& text, int line_offset)
      : file_(file), locator_(text, 0, text.size()), line_offset_(line_offset) {}

  bool Fail(const std::string& path, const std::string& message, std::string* err, bool at_key = false) const {
    TextPosition p = at_key ? locator_.KeyAt(path) : locator_.ValueAt(path);
    *err = file_ + ":" + std::to_string(p.line + line_offset_) + ":" + std::to_string(p.column) + ": " +
           (path.empty() ? "" : path + ": ") + message;
    return false;
  }

 private:
  const std::string& file_;
  JsonLocator locator_;
  int line_offset_;
};

bool ParseLocated(const std::string& file, const std::string& text, int line_offset, OJson* out, std::string* err) {
  JsonParseError perr;
  if (ParseJsonLimited(text, out, &perr)) return true;
  TextPosition p = PositionOfOffset(text, perr.offset);
  *err = file + ":" + std::to_string(p.line + line_offset) + ":" + std::to_string(p.column) + ": " + perr.message;
  return false;
}

bool ReadAxes(const OJson& axes, const Where& at, FiDefinition* def, std::string* err) {
  if (!axes.is_object() || axes.empty()) return at.Fail("axes", "an object of named axes is required", err);
  for (const auto& item : axes.items()) {
    const std::string path = JsonPathKey("axes", item.key());
    const OJson& a = item.value();
    FiAxis axis;
    axis.name = item.key();
    const std::string type = a.is_object() && a.contains("type") && a["type"].is_string() ? a["type"].get<std::string>() : "";
    if (type == "const") {
      axis.is_const = true;
      if (!a.contains("value") || !a["value"].is_number_integer() || a["value"].get<int64_t>() < 1)
        return at.Fail(JsonPathKey(path, "value"), "a const axis needs a positive integer value", err);
      axis.value = a["value"].get<int64_t>();
    } else if (type != "var") {
      return at.Fail(JsonPathKey(path, "type"), "an axis is {\"type\": \"const\", \"value\": N} or {\"type\": \"var\"}", err);
    }
    def->axes.push_back(axis);
  }
  return true;
}

bool HasAxis(const FiDefinition& def, const std::string& name) {
  for (const FiAxis& a : def.axes)
    if (a.name == name) return true;
  return false;
}

std::string AxisNames(const FiDefinition& def) {
  std::string out;
  for (const FiAxis& a : def.axes) out += (out.empty() ? "" : ", ") + a.name;
  return out;
}

bool ReadTensor(const std::string& path, const std::string& name, const OJson& spec, bool output, const Where& at,
                const FiDefinition& def, FiTensor* t, std::string* err) {
  t->name = name;
  if (!spec.is_object()) return at.Fail(path, "a tensor is {\"shape\": [...], \"dtype\": ...}", err);
  if (!spec.contains("dtype") || !spec["dtype"].is_string()) return at.Fail(JsonPathKey(path, "dtype"), "a dtype is required", err);
  if (!spec.contains("shape")) return at.Fail(JsonPathKey(path, "shape"), "a shape is required (null for a scalar)", err);
  const std::string dtype = spec["dtype"].get<std::string>();
  const std::string dpath = JsonPathKey(path, "dtype"), spath = JsonPathKey(path, "shape");
  const DtypeRule* rule = FindDtype(dtype);
  if (!rule) return at.Fail(dpath, "'" + dtype + "' is not a FlashInfer-Bench dtype (" + DtypeList() + ")", err);
  const OJson& shape = spec["shape"];
  if (shape.is_null()) {
    if (output) return at.Fail(spath, "a scalar output; forgek's outputs are tensors", err);
    t->scalar = true;
    t->dtype = ScalarDtype(dtype);
    if (t->dtype.empty())
      return at.Fail(dpath, "a " + dtype + " scalar, which forgek's scalars (f32, i32, i64) cannot hold", err);
    return true;
  }
  if (!*rule->forgek) return at.Fail(dpath, dtype + ": " + rule->why_not, err);
  t->dtype = rule->forgek;
  if (!shape.is_array()) return at.Fail(spath, "a list of axis names, or null for a scalar", err);
  if (shape.empty()) return at.Fail(spath, "a 0-dimensional tensor; forgek's tensors have at least one dimension", err);
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::string ipath = JsonPathIndex(spath, i);
    if (!shape[i].is_string()) return at.Fail(ipath, "an axis name (a string)", err);
    const std::string axis = shape[i].get<std::string>();
    if (!HasAxis(def, axis))
      return at.Fail(ipath, "'" + axis + "' is not an axis of the definition (its axes: " + AxisNames(def) + ")", err);
    t->shape.push_back(axis);
  }
  return true;
}

bool ReadTensors(const OJson& root, const std::string& group, const Where& at, FiDefinition* def, std::string* err) {
  const bool output = group == "outputs";
  if (!root.contains(group) || !root[group].is_object() || root[group].empty())
    return at.Fail(group, "an object of named tensors is required", err);
  for (const auto& item : root[group].items()) {
    FiTensor t;
    if (!ReadTensor(JsonPathKey(group, item.key()), item.key(), item.value(), output, at, *def, &t, err)) return false;
    (output ? def->outputs : def->inputs).push_back(t);
  }
  return true;
}

// An output's size must follow from the inputs' sizes: an axis no input has would be set by the
// data (a count of selected elements), which forgek's shapes cannot say.
bool CheckOutputAxes(const FiDefinition& def, const Where& at, std::string* err) {
  std::set<std::string> input_axes;
  for (const FiTensor& t : def.inputs) input_axes.insert(t.shape.begin(), t.shape.end());
  for (const FiTensor& t : def.outputs)
    for (size_t i = 0; i < t.shape.size(); ++i)
      if (!input_axes.count(t.shape[i]))
        return at.Fail(JsonPathIndex(JsonPathKey(JsonPathKey("outputs", t.name), "shape"), i),
                       "axis " + t.shape[i] + " is in no input's shape, so the output's size depends on the data, "
                       "which forgek cannot express",
                       err);
  return true;
}

bool StringField(const OJson& root, const std::string& key, bool required, const Where& at, std::string* out,
                 std::string* err) {
  if (!root.contains(key)) return required ? at.Fail(key, "required", err) : true;
  if (!root[key].is_string()) return at.Fail(key, "a string is required", err);
  *out = root[key].get<std::string>();
  return true;
}

bool IsVar(const FiDefinition& def, const std::string& name, const FiAxis** axis) {
  for (const FiAxis& a : def.axes)
    if (a.name == name) return *axis = &a, !a.is_const;
  return *axis = nullptr, false;
}

const FiTensor* FindInput(const FiDefinition& def, const std::string& name) {
  for (const FiTensor& t : def.inputs)
    if (t.name == name) return &t;
  return nullptr;
}

// One workload's axes: every var axis a positive integer; a const axis, if given, its own value.
bool ReadWorkloadAxes(const OJson& w, const std::string& base, const FiDefinition& def, const Where& at,
                      std::map<std::string, int64_t>* values, std::string* err) {
  const std::string path = JsonPathKey(base, "axes");
  if (!w.contains("axes") || !w["axes"].is_object()) return at.Fail(path, "an object of var-axis values is required", err);
  for (const auto& item : w["axes"].items()) {
    const std::string apath = JsonPathKey(path, item.key());
    const FiAxis* axis = nullptr;
    const bool var = IsVar(def, item.key(), &axis);
    if (!axis) return at.Fail(apath, "not an axis of the definition (its axes: " + AxisNames(def) + ")", err, true);
    if (!item.value().is_number_integer() || item.value().get<int64_t>() < 1)
      return at.Fail(apath, "a positive integer is required", err);
    const int64_t v = item.value().get<int64_t>();
    if (!var && v != axis->value)
      return at.Fail(apath, "a const axis of the definition (" + std::to_string(axis->value) + ")", err);
    if (var) (*values)[item.key()] = v;
  }
  for (const FiAxis& a : def.axes)
    if (!a.is_const && !values->count(a.name)) return at.Fail(path, "no value for the var axis " + a.name, err);
  return true;
}

// One workload's inputs: tensors drawn at random (forgek draws them from its own inits); scalar
// inputs with a value, the same on every line since forgek's scalars are fixed per operator.
bool ReadWorkloadInputs(const OJson& w, const std::string& base, const FiDefinition& def, const Where& at, int line,
                        FiWorkloads* out, std::map<std::string, int>* scalar_lines, std::string* err) {
  const std::string path = JsonPathKey(base, "inputs");
  const OJson empty = OJson::object();
  const OJson& inputs = w.contains("inputs") ? w["inputs"] : empty;
  if (!inputs.is_object()) return at.Fail(path, "an object of input descriptors is required", err);
  for (const auto& item : inputs.items()) {
    const std::string ipath = JsonPathKey(path, item.key());
    const FiTensor* t = FindInput(def, item.key());
    if (!t) return at.Fail(ipath, "not an input of the definition", err, true);
    const OJson& d = item.value();
    const std::string type = d.is_object() && d.contains("type") && d["type"].is_string() ? d["type"].get<std::string>() : "";
    const std::string tpath = JsonPathKey(ipath, "type");
    if (type == "safetensors")
      return at.Fail(tpath, "recorded data (safetensors), which forgek cannot express: its inputs are drawn from "
                            "distributions (give random inputs)", err);
    if (type == "random") {
      if (t->scalar) return at.Fail(tpath, "a random scalar; forgek's scalars have one fixed value", err);
      continue;
    }
    if (type != "scalar") return at.Fail(tpath, "'" + type + "' is not an input type (random, scalar, safetensors)", err);
    if (!t->scalar) return at.Fail(tpath, "a scalar value for a tensor input", err);
    const std::string vpath = JsonPathKey(ipath, "value");
    if (!d.contains("value") || !d["value"].is_number()) return at.Fail(vpath, "a number is required", err);
    const nlohmann::json value = ParseJsonLenient(d["value"].dump());  // a number: its own text parses
    auto seen = out->scalars.find(t->name);
    if (seen == out->scalars.end()) {
      out->scalars[t->name] = value;
      (*scalar_lines)[t->name] = line;
    } else if (seen->second != value) {
      return at.Fail(vpath, value.dump() + " differs from " + seen->second.dump() + " on line " +
                                std::to_string((*scalar_lines)[t->name]) + "; forgek's scalars are fixed per operator",
                     err);
    }
  }
  for (const FiTensor& t : def.inputs)
    if (t.scalar && !(inputs.contains(t.name)))
      return at.Fail(path, "no value for the scalar input " + t.name, err);
  return true;
}

bool ReadWorkloadLine(const std::string& file, const std::string& text, int line, const FiDefinition& def,
                      FiWorkloads* out, std::map<std::string, int>* scalar_lines,
                      std::map<std::map<std::string, int64_t>, int>* seen, std::string* err) {
  OJson root;
  if (!ParseLocated(file, text, line - 1, &root, err)) return false;
  const Where at(file, text, line - 1);
  if (!root.is_object()) return at.Fail("", "a workload is a JSON object", err);
  if (root.contains("definition") && root["definition"].is_string() && root["definition"].get<std::string>() != def.name)
    return at.Fail("definition", "a workload of '" + root["definition"].get<std::string>() + "', not of '" + def.name + "'", err);
  const bool wrapped = root.contains("workload");
  const std::string base = wrapped ? "workload" : "";
  const OJson& w = wrapped ? root["workload"] : root;
  if (!w.is_object()) return at.Fail(base, "a workload is a JSON object", err);
  std::map<std::string, int64_t> values;
  if (!ReadWorkloadAxes(w, base, def, at, &values, err)) return false;
  if (!ReadWorkloadInputs(w, base, def, at, line, out, scalar_lines, err)) return false;
  ++out->workloads;
  if (!seen->emplace(values, line).second) {
    ++out->duplicates;
    return true;
  }
  out->configs.push_back({FiConfigName(def, values), values});
  return true;
}

}  // namespace

std::string FiConfigName(const FiDefinition& def, const std::map<std::string, int64_t>& values) {
  std::string name;
  for (const FiAxis& a : def.axes) {
    auto it = values.find(a.name);
    if (a.is_const || it == values.end()) continue;
    name += (name.empty() ? "" : "_") + a.name + std::to_string(it->second);
  }
  return name.empty() ? "definition" : name;
}

bool ReadFiDefinition(const std::string& file, FiDefinition* def, std::string* err) {
  std::string text, why;
  if (!ReadFileLimited(file, kMaxDefinitionBytes, "a FlashInfer-Bench definition", &text, &why))
    return *err = file + ": " + why, false;
  OJson root;
  if (!ParseLocated(file, text, 0, &root, err)) return false;
  const Where at(file, text, 0);
  if (!root.is_object()) return at.Fail("", "a FlashInfer-Bench definition is a JSON object", err);
  def->file = file;
  std::string reference;
  if (!StringField(root, "name", true, at, &def->name, err) || !StringField(root, "op_type", false, at, &def->op_type, err) ||
      !StringField(root, "description", false, at, &def->description, err) ||
      !StringField(root, "reference", true, at, &reference, err))
    return false;
  if (reference.find("def run(") == std::string::npos)
    return at.Fail("reference", "the reference defines no run(...) (its entry point)", err);
  if (!root.contains("axes")) return at.Fail("axes", "required", err);
  if (!ReadAxes(root["axes"], at, def, err) || !ReadTensors(root, "inputs", at, def, err) ||
      !ReadTensors(root, "outputs", at, def, err) || !CheckOutputAxes(*def, at, err))
    return false;
  def->json = root;
  return true;
}

bool ReadFiWorkloads(const std::string& file, const FiDefinition& def, FiWorkloads* out, std::string* err) {
  std::string text, why;
  if (!ReadFileLimited(file, kMaxWorkloadsBytes, "a workloads file", &text, &why)) return *err = file + ": " + why, false;
  std::map<std::string, int> scalar_lines;
  std::map<std::map<std::string, int64_t>, int> seen;
  size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string one = text.substr(start, end - start);
    start = end + 1;
    if (one.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!ReadWorkloadLine(file, one, line, def, out, &scalar_lines, &seen, err)) return false;
  }
  if (out->workloads == 0) return *err = file + ": no workloads (one JSON object a line)", false;
  // Smallest first: the first config is the one `ops validate` runs the golden at, on the CPU.
  std::vector<std::string> order;
  for (const FiAxis& a : def.axes)
    if (!a.is_const) order.push_back(a.name);
  std::stable_sort(out->configs.begin(), out->configs.end(), [&order](const FiConfig& x, const FiConfig& y) {
    for (const std::string& a : order) {
      if (x.values.at(a) != y.values.at(a)) return x.values.at(a) < y.values.at(a);
    }
    return false;
  });
  return true;
}

}  // namespace forgek::cli
