// Reading scripts/compare_torch.py's JSON for `report --torch`: every field checked against what the
// script writes, every refusal naming the file and the field's path, and nothing thrown.
#include "forgek/report/torch_compare.h"

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/core/file_read.h"
#include "forgek/core/json_location.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/paths.h"

namespace forgek {
namespace {

using nlohmann::json;

enum class Need { required, optional };

// The checks of one file's fields; every message is "<file>: <path>: <what is wrong>".
class Reader {
 public:
  Reader(const std::string& file, std::string* err) : file_(file), err_(err) {}

  bool Fail(const std::string& path, const std::string& why) const {
    *err_ = file_ + ": " + (path.empty() ? "" : path + ": ") + why;
    return false;
  }

  // The member `key` of `obj` (an object) at `path`, or nullptr when absent: an error when required.
  bool Member(const json& obj, const std::string& path, const char* key, Need need, const json** out) const {
    auto it = obj.find(key);
    *out = it == obj.end() ? nullptr : &*it;
    return *out || need == Need::optional || Fail(JsonPathKey(path, key), "missing");
  }

  bool String(const json& obj, const std::string& path, const char* key, Need need, bool nullable,
              std::string* out) const {
    const json* v = nullptr;
    if (!Member(obj, path, key, need, &v)) return false;
    if (!v || (nullable && v->is_null())) return true;
    if (!v->is_string())
      return Fail(JsonPathKey(path, key), std::string(nullable ? "a string or null" : "a string") + ", not " +
                                              v->type_name());
    *out = v->get<std::string>();
    return true;
  }

  // A time or a speedup: a positive finite number, or null when it was not measured (0).
  bool Positive(const json& obj, const std::string& path, const char* key, double* out) const {
    const json* v = nullptr;
    if (!Member(obj, path, key, Need::required, &v)) return false;
    if (v->is_null()) return true;
    const std::string at = JsonPathKey(path, key);
    if (!v->is_number()) return Fail(at, std::string("a number or null (not measured), not ") + v->type_name());
    const double d = v->get<double>();
    if (!(d > 0) || !std::isfinite(d)) return Fail(at, "a positive number or null, not " + v->dump());
    *out = d;
    return true;
  }

  // A spread ({"p10", "p90", "rel_noise", "samples"} or null): only its relative noise is shown.
  bool Noise(const json& obj, const std::string& path, const char* key, double* out) const {
    const json* v = nullptr;
    if (!Member(obj, path, key, Need::optional, &v)) return false;
    if (!v || v->is_null()) return true;
    const std::string at = JsonPathKey(path, key);
    if (!v->is_object()) return Fail(at, std::string("an object or null, not ") + v->type_name());
    const json* n = nullptr;
    if (!Member(*v, at, "rel_noise", Need::required, &n)) return false;
    const std::string noise_at = JsonPathKey(at, "rel_noise");
    if (!n->is_number()) return Fail(noise_at, std::string("a number, not ") + n->type_name());
    const double d = n->get<double>();
    if (!(d >= 0) || !std::isfinite(d)) return Fail(noise_at, "a number >= 0, not " + n->dump());
    *out = d;
    return true;
  }

  bool Correct(const json& obj, const std::string& path, std::optional<bool>* out) const {
    const json* v = nullptr;
    if (!Member(obj, path, "correct", Need::required, &v)) return false;
    if (v->is_null()) return true;
    if (!v->is_boolean())
      return Fail(JsonPathKey(path, "correct"),
                  std::string("true, false or null (not checked), not ") + v->type_name());
    *out = v->get<bool>();
    return true;
  }

  bool Object(const json& v, const std::string& path) const {
    return v.is_object() || Fail(path, std::string("an object, not ") + v.type_name());
  }

  bool Array(const json& obj, const std::string& path, const char* key, const json** out) const {
    if (!Member(obj, path, key, Need::required, out)) return false;
    return (*out)->is_array() || Fail(JsonPathKey(path, key), std::string("an array, not ") + (*out)->type_name());
  }

  // A name that rows are matched by: a string that is not empty.
  bool Name(const json& obj, const std::string& path, const char* key, std::string* out) const {
    if (!String(obj, path, key, Need::required, false, out)) return false;
    return !out->empty() || Fail(JsonPathKey(path, key), "empty");
  }

 private:
  const std::string& file_;
  std::string* err_;
};

bool ConfigOf(const Reader& rd, const json& j, const std::string& path, TorchConfig* c) {
  return rd.Object(j, path) && rd.Name(j, path, "config", &c->config) &&
         rd.Positive(j, path, "seal_us", &c->seal_us) && rd.Positive(j, path, "eager_us", &c->eager_us) &&
         rd.Positive(j, path, "compile_us", &c->compile_us) &&
         rd.Positive(j, path, "speedup_vs_eager", &c->speedup_vs_eager) &&
         rd.Positive(j, path, "speedup_vs_compile", &c->speedup_vs_compile) && rd.Correct(j, path, &c->correct) &&
         rd.Noise(j, path, "seal_spread", &c->seal_noise) && rd.Noise(j, path, "eager_spread", &c->eager_noise) &&
         rd.Noise(j, path, "compile_spread", &c->compile_noise) &&
         rd.String(j, path, "status", Need::optional, false, &c->status) &&
         rd.String(j, path, "note", Need::optional, false, &c->note);
}

bool OperatorOf(const Reader& rd, const json& j, const std::string& path, TorchOperator* op) {
  const json* configs = nullptr;
  if (!rd.Object(j, path) || !rd.Name(j, path, "op", &op->op) ||
      !rd.String(j, path, "seal", Need::required, true, &op->seal) ||
      !rd.String(j, path, "status", Need::optional, false, &op->status) ||
      !rd.String(j, path, "note", Need::optional, false, &op->note) || !rd.Array(j, path, "configs", &configs))
    return false;
  std::set<std::string> seen;
  for (size_t i = 0; i < configs->size(); ++i) {
    const std::string at = JsonPathIndex(JsonPathKey(path, "configs"), i);
    TorchConfig c;
    if (!ConfigOf(rd, (*configs)[i], at, &c)) return false;
    // Two rows of one config: which one the report shows would be a guess.
    if (!seen.insert(c.config).second) return rd.Fail(JsonPathKey(at, "config"), json(c.config).dump() + " twice");
    op->configs.push_back(std::move(c));
  }
  return true;
}

bool ComparisonOf(const Reader& rd, const json& j, TorchComparison* out) {
  std::string format;
  const json* operators = nullptr;
  if (!rd.Object(j, "") || !rd.String(j, "", "format", Need::required, false, &format)) return false;
  if (format != kTorchCompareFormat)
    return rd.Fail("format", json(format).dump() + ", not \"" + kTorchCompareFormat +
                                 "\" (scripts/compare_torch.py --out writes it)");
  TorchSource& s = out->source;
  if (!rd.String(j, "", "device", Need::required, false, &s.device) ||
      !rd.String(j, "", "torch", Need::required, false, &s.torch_version) ||
      !rd.String(j, "", "date", Need::required, false, &s.date) ||
      !rd.String(j, "", "method", Need::optional, false, &s.method) || !rd.Array(j, "", "operators", &operators))
    return false;
  std::set<std::string> seen;
  for (size_t i = 0; i < operators->size(); ++i) {
    const std::string at = JsonPathIndex("operators", i);
    TorchOperator op;
    if (!OperatorOf(rd, (*operators)[i], at, &op)) return false;
    if (!seen.insert(op.op).second) return rd.Fail(JsonPathKey(at, "op"), json(op.op).dump() + " twice");
    out->operators.push_back(std::move(op));
  }
  return true;
}

}  // namespace

bool ParseTorchComparison(std::string_view text, const std::string& file, TorchComparison* out, std::string* err) {
  nlohmann::json j;
  if (!ParseJsonLimited(text, file, &j, err)) return false;
  TorchComparison c;
  c.source.file = file;
  try {
    if (!ComparisonOf(Reader(file, err), j, &c)) return false;
  } catch (const std::exception& e) {  // every access is type-checked first; this is only a fence
    *err = file + ": " + e.what();
    return false;
  }
  *out = std::move(c);
  return true;
}

bool ReadTorchComparison(const std::string& path, TorchComparison* out, std::string* err) {
  std::string why, text;
  // Checked before it is opened for reading: a FIFO in its place would hang the read.
  if (!IsReadableFile(path, &why)) return *err = path + ": it " + why, false;
  if (!ReadFileLimited(path, kJsonMaxBytes, "a compare-torch JSON file", &text, &why))
    return *err = path + ": " + why, false;
  return ParseTorchComparison(text, path, out, err);
}

}  // namespace forgek
