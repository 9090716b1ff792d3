// Loading and validating operator.json: every field, every expression under every config, every file.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "forgek/core/candidate.h"
#include "forgek/core/file_read.h"
#include "json_fields.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/suggest.h"
#include "forgek/core/operator_spec.h"
#include "forgek/core/partition.h"
#include "forgek/core/paths.h"

namespace forgek {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTopLevelFields = {
    "name",   "aliases", "category", "description", "params", "configs",   "tensors", "scalars",
    "flops",  "bytes",   "tolerance", "golden",     "reference", "seed",    "families", "ranges", "yardstick"};

const std::vector<std::string> kCategories = {
    "gemm",      "gemv",        "attention", "norm",   "softmax",   "reduction", "scan",      "sort", "histogram",
    "elementwise", "conv",      "sampling",  "moe",    "quantize",  "transpose", "gather", "optimizer", "loss"};

bool IsOperatorName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

class OperatorLoader {
 public:
  OperatorLoader(const std::string& dir, const std::string& file, const JsonLocator* locator, Diagnostics* diags)
      : dir_(dir), r_(file, locator, diags) {}

  bool Load(const Json& root, OperatorSpec* out) {
    if (!root.is_object()) {
      r_.Error("", "expected a JSON object, got " + JsonTypeName(root));
      return false;
    }
    r_.DuplicateKeys();
    r_.UnknownMembers(root, "", kTopLevelFields);
    ReadIdentity(root);
    ReadParamsAndConfigs(root);
    ReadRanges(root);
    ReadTensors(root);
    ReadScalars(root);
    CheckNamesDistinct();
    ReadFormula(root, "flops", &s_.flops);
    ReadFormula(root, "bytes", &s_.bytes);
    ReadTolerance(root);
    ReadFiles(root);
    if (r_.error_count() > 0) return false;
    *out = std::move(s_);
    return true;
  }

 private:
  void ReadIdentity(const Json& root) {
    if (r_.String(root, "", "name", true, &s_.name)) {
      std::string folder = fs::path(dir_).lexically_normal().filename().string();
      if (folder.empty()) folder = fs::absolute(dir_).lexically_normal().parent_path().filename().string();
      if (!IsOperatorName(s_.name))
        r_.Error("name", "'" + s_.name + "' is not a valid operator name (lower-case letters, digits and '_')");
      else if (s_.name != folder)
        r_.Error("name", "'" + s_.name + "' differs from its folder name '" + folder + "'");
    }
    if (r_.StringList(root, "", "aliases", false, &s_.aliases)) {
      std::set<std::string> seen;
      for (size_t i = 0; i < s_.aliases.size(); ++i) {
        const std::string& a = s_.aliases[i];
        std::string path = JsonPathIndex("aliases", i);
        if (!IsOperatorName(a)) r_.Error(path, "'" + a + "' is not a valid alias (lower-case letters, digits and '_')");
        else if (a == s_.name) r_.Error(path, "alias '" + a + "' repeats the operator's name");
        else if (!seen.insert(a).second) r_.Error(path, "alias '" + a + "' appears twice");
      }
    }
    if (r_.String(root, "", "category", true, &s_.category) &&
        std::find(kCategories.begin(), kCategories.end(), s_.category) == kCategories.end())
      r_.Error("category", "unknown category '" + s_.category + "'" + DidYouMean(s_.category, kCategories) +
                               "; one of " + JoinNames(kCategories));
    if (r_.String(root, "", "description", true, &s_.description) && s_.description.empty())
      r_.Error("description", "must describe the semantics, not be empty");
  }

  void ReadParamsAndConfigs(const Json& root) {
    params_ok_ = r_.StringList(root, "", "params", true, &s_.params);
    if (params_ok_) {
      std::set<std::string> seen;
      for (size_t i = 0; i < s_.params.size(); ++i) {
        const std::string& p = s_.params[i];
        std::string path = JsonPathIndex("params", i);
        if (!IsIdentifier(p)) r_.Error(path, "'" + p + "' is not an identifier"), params_ok_ = false;
        else if (p == kNumSmsName) r_.Error(path, ReservedNameMessage(p)), params_ok_ = false;
        else if (!seen.insert(p).second) r_.Error(path, "param '" + p + "' appears twice"), params_ok_ = false;
      }
    }
    const Json* configs = r_.Member(root, "", "configs", true);
    if (!configs) return;
    if (!configs->is_array() || configs->empty()) {
      r_.Error("configs", configs->is_array() ? "needs at least one config"
                                              : "expected an array of configs, got " + JsonTypeName(*configs));
      return;
    }
    std::set<std::string> names;
    for (size_t i = 0; i < configs->size(); ++i) {
      const Json& c = (*configs)[i];
      std::string path = JsonPathIndex("configs", i);
      if (!c.is_object()) {
        r_.Error(path, "expected an object {\"name\": ..., \"values\": {...}}, got " + JsonTypeName(c));
        continue;
      }
      r_.UnknownMembers(c, path, {"name", "values"});
      ConfigSpec config;
      bool ok = r_.String(c, path, "name", true, &config.name);
      if (ok && config.name.empty()) r_.Error(JsonPathKey(path, "name"), "must not be empty"), ok = false;
      if (ok && config.name.find_first_of("\t\n") != std::string::npos)
        r_.Error(JsonPathKey(path, "name"), "must be one line without tabs"), ok = false;
      if (ok && !names.insert(config.name).second)
        r_.Error(JsonPathKey(path, "name"), "config '" + config.name + "' appears twice"), ok = false;
      const Json* values = r_.Member(c, path, "values", true);
      std::string vpath = JsonPathKey(path, "values");
      if (values && !values->is_object()) {
        r_.Error(vpath, "expected an object of param values, got " + JsonTypeName(*values));
        values = nullptr;
      }
      if (!values) {
        s_.configs.push_back(std::move(config));
        continue;
      }
      for (auto it = values->begin(); it != values->end(); ++it) {
        std::string ppath = JsonPathKey(vpath, it.key());
        if (params_ok_ && std::find(s_.params.begin(), s_.params.end(), it.key()) == s_.params.end()) {
          r_.KeyError(ppath, "'" + it.key() + "' is not a declared param" + DidYouMean(it.key(), s_.params) +
                                 "; params are " + JoinNames(s_.params));
          ok = false;
          continue;
        }
        int64_t v;
        if (r_.Integer(it.value(), ppath, &v)) config.values[it.key()] = v;
        else ok = false;
      }
      if (params_ok_) {
        for (const std::string& p : s_.params) {
          if (!values->contains(p)) r_.Error(vpath, "no value for param '" + p + "'"), ok = false;
        }
      }
      if (ok && params_ok_) valid_configs_.push_back(s_.configs.size());
      s_.configs.push_back(std::move(config));
    }
  }

  // "ranges": {"M": {"min": 1, "max": 8192, "multiple_of": 8}, ...}: which sizes a kernel of this
  // operator must accept, per param (docs/operator-format.md). Shapes outside the suite come from them.
  void ReadRanges(const Json& root) {
    const Json* ranges = r_.Member(root, "", "ranges", false);
    if (!ranges) return;
    if (!ranges->is_object()) {
      r_.Error("ranges", "expected an object of param ranges {\"M\": {\"min\": 1, \"max\": 8192}}, got " +
                             JsonTypeName(*ranges));
      return;
    }
    for (auto it = ranges->begin(); it != ranges->end(); ++it) {
      const std::string path = JsonPathKey("ranges", it.key());
      if (params_ok_ && std::find(s_.params.begin(), s_.params.end(), it.key()) == s_.params.end()) {
        r_.KeyError(path, "'" + it.key() + "' is not a declared param" + DidYouMean(it.key(), s_.params) +
                              "; params are " + JoinNames(s_.params));
        continue;
      }
      const Json& r = it.value();
      if (!r.is_object()) {
        r_.Error(path, "expected {\"min\": ..., \"max\": ..., \"multiple_of\": ...}, got " + JsonTypeName(r));
        continue;
      }
      r_.UnknownMembers(r, path, {"min", "max", "multiple_of"});
      ParamRange range;
      bool ok = true;
      for (auto [key, field] : {std::pair{"min", &range.min}, {"max", &range.max}, {"multiple_of", &range.multiple_of}}) {
        const Json* v = r_.Member(r, path, key, std::string(key) != "multiple_of");
        if (!v) {
          ok = ok && std::string(key) == "multiple_of";
          continue;
        }
        if (!r_.Integer(*v, JsonPathKey(path, key), field)) ok = false;
      }
      if (!ok) continue;
      if (range.min < 1) r_.Error(JsonPathKey(path, "min"), "must be at least 1, got " + std::to_string(range.min));
      else if (range.max < range.min)
        r_.Error(JsonPathKey(path, "max"), "is below min (" + std::to_string(range.max) + " < " +
                                               std::to_string(range.min) + ")");
      else if (range.multiple_of < 1)
        r_.Error(JsonPathKey(path, "multiple_of"), "must be at least 1, got " + std::to_string(range.multiple_of));
      else if (range.max / range.multiple_of * range.multiple_of < range.min)
        r_.Error(path, "holds no multiple of " + std::to_string(range.multiple_of) + " between " +
                           std::to_string(range.min) + " and " + std::to_string(range.max));
      else
        s_.ranges[it.key()] = range;
    }
    // The suite's own shapes are shapes a kernel must accept: a range that excludes one is a typo.
    for (size_t ci : valid_configs_)
      for (const auto& [param, range] : s_.ranges) {
        const int64_t v = s_.configs[ci].values.at(param);
        if (v < range.min || v > range.max || v % range.multiple_of != 0)
          r_.Error(JsonPathKey("ranges", param), "excludes " + param + "=" + std::to_string(v) + " of config '" +
                                                     s_.configs[ci].name + "'");
      }
  }

  // Checks an expression over the operator's params: it parses, names only params, and evaluates to
  // at least `min_value` under every config. Returns false when it does not parse or names others.
  bool CheckExpression(const Json& v, const std::string& path, int64_t min_value, std::string* out,
                       std::vector<int64_t>* values = nullptr) {
    std::unique_ptr<Expr> e;
    if (!r_.Expression(v, path, out, &e)) return false;
    if (!params_ok_) return true;
    if (!r_.CheckNames(path, *out, s_.params, "params are " + JoinNames(s_.params))) return false;
    for (size_t ci : valid_configs_) {
      const ConfigSpec& c = s_.configs[ci];
      int64_t value;
      Diagnostic d;
      if (!e->Eval(c.values, &value, &d)) {
        d.message = "under config '" + c.name + "': " + d.message;
        r_.ExprError(path, d);
        continue;
      }
      if (value < min_value) {
        r_.Error(path, "'" + *out + "' is " + std::to_string(value) + " under config '" + c.name + "'; must be " +
                           (min_value == 1 ? "positive" : "at least " + std::to_string(min_value)));
        continue;
      }
      if (values) values->push_back(value);
    }
    return true;
  }

  void ReadTensors(const Json& root) {
    const Json* tensors = r_.Member(root, "", "tensors", true);
    if (!tensors) return;
    if (!tensors->is_array() || tensors->empty()) {
      r_.Error("tensors", tensors->is_array() ? "needs at least one tensor"
                                              : "expected an array of tensors, got " + JsonTypeName(*tensors));
      return;
    }
    bool has_output = false;
    for (size_t i = 0; i < tensors->size(); ++i) {
      const Json& t = (*tensors)[i];
      std::string path = JsonPathIndex("tensors", i);
      if (!t.is_object()) {
        r_.Error(path, "expected an object, got " + JsonTypeName(t));
        continue;
      }
      r_.UnknownMembers(t, path, {"name", "role", "dtype", "shape", "init"});
      TensorSpec spec;
      if (r_.String(t, path, "name", true, &spec.name) && !IsIdentifier(spec.name))
        r_.Error(JsonPathKey(path, "name"), "'" + spec.name + "' is not an identifier");
      std::string role;
      if (r_.String(t, path, "role", true, &role)) {
        if (role == "input") spec.role = TensorRole::input;
        else if (role == "output") spec.role = TensorRole::output;
        else if (role == "inout") spec.role = TensorRole::inout;
        else r_.Error(JsonPathKey(path, "role"), "unknown role '" + role + "'; one of input, output, inout");
      }
      has_output = has_output || spec.role != TensorRole::input;
      std::string dtype;
      bool dtype_ok = r_.String(t, path, "dtype", true, &dtype);
      if (dtype_ok && !ParseDType(dtype, &spec.dtype)) {
        r_.Error(JsonPathKey(path, "dtype"), "unknown dtype '" + dtype + "'; one of f64 f32 f16 bf16 e4m3 e5m2 i8 u8 i32 u32 i64");
        dtype_ok = false;
      }
      ReadShape(t, path, spec);
      ReadInit(t, path, dtype_ok, &spec);
      s_.tensors.push_back(std::move(spec));
    }
    if (!has_output) r_.Error("tensors", "no tensor has role output or inout: nothing to check");
  }

  void ReadShape(const Json& t, const std::string& path, TensorSpec& spec) {
    const Json* shape = r_.Member(t, path, "shape", true);
    if (!shape) return;
    std::string spath = JsonPathKey(path, "shape");
    if (!shape->is_array() || shape->empty()) {
      r_.Error(spath, shape->is_array() ? "needs at least one dimension (use [\"1\"] for a single value)"
                                        : "expected an array of expressions, got " + JsonTypeName(*shape));
      return;
    }
    std::vector<std::vector<int64_t>> dims(shape->size());
    bool all_ok = true;
    for (size_t d = 0; d < shape->size(); ++d) {
      std::string text;
      all_ok = CheckExpression((*shape)[d], JsonPathIndex(spath, d), 1, &text, &dims[d]) && all_ok;
      spec.shape.push_back(text);
    }
    // Element count times element size must fit in 64 bits under every config.
    if (!all_ok) return;
    for (size_t ci = 0; ci < valid_configs_.size(); ++ci) {
      int64_t bytes = DTypeBytes(spec.dtype);
      bool overflow = false;
      for (const auto& dim : dims) {
        if (ci >= dim.size()) return;  // a dimension failed under some config: reported already
        overflow = overflow || __builtin_mul_overflow(bytes, dim[ci], &bytes);
      }
      if (overflow)
        r_.Error(spath, "tensor size overflows 64 bits under config '" + s_.configs[valid_configs_[ci]].name + "'");
    }
  }

  void ReadInit(const Json& t, const std::string& path, bool dtype_ok, TensorSpec* spec) {
    const Json* init = r_.Member(t, path, "init", false);
    std::string ipath = JsonPathKey(path, "init");
    if (!init) return;
    if (spec->role == TensorRole::output) {
      r_.KeyError(ipath, "an output tensor is not initialised (outputs are poisoned before every run)");
      return;
    }
    if (!init->is_object()) {
      r_.Error(ipath, "expected an object such as {\"dist\": \"normal\", \"mean\": 0, \"std\": 1}, got " +
                          JsonTypeName(*init));
      return;
    }
    InitSpec& s = spec->init;
    if (!r_.String(*init, ipath, "dist", true, &s.dist)) return;
    auto finite = [&](const char* key, bool required, double* out) {
      if (!r_.Number(*init, ipath, key, required, out)) return false;
      if (std::isfinite(*out)) return true;
      r_.Error(JsonPathKey(ipath, key), "must be finite");
      return false;
    };
    bool float_dtype = !dtype_ok || DTypeIsFloat(spec->dtype);
    if (s.dist == "normal") {
      r_.UnknownMembers(*init, ipath, {"dist", "mean", "std"});
      finite("mean", false, &s.mean);
      if (finite("std", false, &s.stddev) && s.stddev <= 0) r_.Error(JsonPathKey(ipath, "std"), "must be positive");
      if (!float_dtype) r_.Error(JsonPathKey(ipath, "dist"), "normal needs a floating-point dtype; use int_range");
    } else if (s.dist == "uniform") {
      r_.UnknownMembers(*init, ipath, {"dist", "lo", "hi"});
      bool lo_ok = finite("lo", true, &s.lo);
      bool hi_ok = finite("hi", true, &s.hi);
      if (lo_ok && hi_ok && !(s.lo < s.hi))
        r_.Error(JsonPathKey(ipath, "hi"), "must be greater than lo (inputs are never constant)");
      if (!float_dtype) r_.Error(JsonPathKey(ipath, "dist"), "uniform needs a floating-point dtype; use int_range");
    } else if (s.dist == "int_range") {
      r_.UnknownMembers(*init, ipath, {"dist", "lo", "hi"});
      ReadIntRange(*init, ipath, &s);
    } else if (s.dist == "probs") {
      r_.UnknownMembers(*init, ipath, {"dist", "axis"});
      if (const Json* axis = r_.Member(*init, ipath, "axis", false)) {
        int64_t a;
        if (r_.Integer(*axis, JsonPathKey(ipath, "axis"), &a) && a != -1)
          r_.Error(JsonPathKey(ipath, "axis"), "only the last axis (-1) is supported");
      }
      if (!float_dtype) r_.Error(JsonPathKey(ipath, "dist"), "probs needs a floating-point dtype");
    } else if (s.dist == "partition") {
      r_.UnknownMembers(*init, ipath, {"dist", "total", "multiple", "min"});
      ReadPartition(*init, ipath, dtype_ok, *spec);
    } else {
      r_.Error(JsonPathKey(ipath, "dist"),
               "unknown distribution '" + s.dist + "'; one of normal, uniform, int_range, probs, partition");
    }
  }

  // partition: total is an expression; the parts (the tensor's elements) must admit a partition
  // of it under every config, and the total must fit the dtype (one part may take all of it).
  void ReadPartition(const Json& init, const std::string& ipath, bool dtype_ok, TensorSpec& spec) {
    InitSpec& s = spec.init;
    if (dtype_ok && DTypeIsFloat(spec.dtype))
      r_.Error(JsonPathKey(ipath, "dist"), "partition needs an integer dtype (i8 u8 i32 u32 i64), got " +
                                               std::string(DTypeName(spec.dtype)));
    auto optional_int = [&](const char* key, int64_t least, int64_t* out) {
      const Json* v = r_.Member(init, ipath, key, false);
      if (!v) return true;
      std::string kpath = JsonPathKey(ipath, key);
      if (!r_.Integer(*v, kpath, out)) return false;
      if (*out >= least) return true;
      r_.Error(kpath, "must be at least " + std::to_string(least));
      return false;
    };
    bool ok = optional_int("multiple", 1, &s.multiple);
    ok = optional_int("min", 0, &s.part_min) && ok;
    const Json* total = r_.Member(init, ipath, "total", true);
    if (!total) return;
    std::string tpath = JsonPathKey(ipath, "total");
    std::vector<int64_t> totals;
    if (!CheckExpression(*total, tpath, 0, &s.total_expr, &totals) || !ok) return;
    if (totals.size() != valid_configs_.size()) return;  // reported already
    const bool is_unsigned = spec.dtype == DType::u8 || spec.dtype == DType::u32;
    const int bits = DTypeBytes(spec.dtype) * 8 - (is_unsigned ? 0 : 1);
    for (size_t k = 0; k < valid_configs_.size(); ++k) {
      const ConfigSpec& c = s_.configs[valid_configs_[k]];
      std::vector<int64_t> shape;
      Diagnostic d;
      if (!s_.TensorShape(spec, c.values, &shape, &d)) return;  // the shape's own error is reported
      int64_t parts = 1;
      for (int64_t dim : shape) parts *= dim;
      std::string why = PartitionProblem(totals[k], parts, s.multiple, s.part_min);
      if (why.empty() && dtype_ok && !DTypeIsFloat(spec.dtype) && bits < 63 && totals[k] > (int64_t{1} << bits) - 1)
        why = "total " + std::to_string(totals[k]) + " does not fit " + DTypeName(spec.dtype);
      if (!why.empty()) {
        r_.Error(tpath, "under config '" + c.name + "': " + why);
        return;
      }
    }
  }

  void ReadIntRange(const Json& init, const std::string& ipath, InitSpec* s) {
    int64_t lo = 0;
    const Json* lo_json = r_.Member(init, ipath, "lo", true);
    bool lo_ok = lo_json && r_.Integer(*lo_json, JsonPathKey(ipath, "lo"), &lo);
    if (lo_ok) s->lo = static_cast<double>(lo);
    const Json* hi = r_.Member(init, ipath, "hi", true);
    if (!hi) return;
    std::string hpath = JsonPathKey(ipath, "hi");
    if (hi->is_string()) {
      std::vector<int64_t> values;
      if (CheckExpression(*hi, hpath, std::numeric_limits<int64_t>::min(), &s->hi_expr, &values) && lo_ok) {
        for (int64_t v : values)
          if (v <= lo) {
            r_.Error(hpath, "'" + s->hi_expr + "' is " + std::to_string(v) + " under some config; must exceed lo");
            break;
          }
      }
      return;
    }
    int64_t h;
    if (!r_.Integer(*hi, hpath, &h)) return;
    s->hi = static_cast<double>(h);
    if (lo_ok && h <= lo) r_.Error(hpath, "must be greater than lo ([lo, hi) must not be empty or constant)");
  }

  void ReadScalars(const Json& root) {
    const Json* scalars = r_.Member(root, "", "scalars", false);
    if (!scalars) return;
    if (!scalars->is_array()) {
      r_.Error("scalars", "expected an array of scalars, got " + JsonTypeName(*scalars));
      return;
    }
    for (size_t i = 0; i < scalars->size(); ++i) {
      const Json& sc = (*scalars)[i];
      std::string path = JsonPathIndex("scalars", i);
      if (!sc.is_object()) {
        r_.Error(path, "expected an object {\"name\", \"dtype\", \"value\"}, got " + JsonTypeName(sc));
        continue;
      }
      r_.UnknownMembers(sc, path, {"name", "dtype", "value"});
      ScalarSpec spec;
      if (r_.String(sc, path, "name", true, &spec.name) && !IsIdentifier(spec.name))
        r_.Error(JsonPathKey(path, "name"), "'" + spec.name + "' is not an identifier");
      std::string dtype;
      bool dtype_ok = r_.String(sc, path, "dtype", true, &dtype);
      if (dtype_ok && dtype != "f32" && dtype != "i32" && dtype != "i64") {
        r_.Error(JsonPathKey(path, "dtype"), "scalar dtype must be f32, i32 or i64, got '" + dtype + "'");
        dtype_ok = false;
      }
      if (dtype_ok) ParseDType(dtype, &spec.dtype);
      if (r_.Number(sc, path, "value", true, &spec.value) && dtype_ok) {
        std::string vpath = JsonPathKey(path, "value");
        if (!std::isfinite(spec.value)) r_.Error(vpath, "must be finite");
        else if (spec.dtype == DType::i32 && (spec.value != std::trunc(spec.value) || spec.value < INT32_MIN ||
                                              spec.value > INT32_MAX))
          r_.Error(vpath, "an i32 scalar needs an integer in the 32-bit range");
        else if (spec.dtype == DType::i64 && (spec.value != std::trunc(spec.value) || std::fabs(spec.value) > 9.0e18))
          r_.Error(vpath, "an i64 scalar needs an integer");
      }
      s_.scalars.push_back(std::move(spec));
    }
  }

  // Tensors, scalars and params share one namespace: a launch argument names any of them.
  void CheckNamesDistinct() {
    std::map<std::string, std::string> owner;
    if (params_ok_)
      for (const std::string& p : s_.params) owner[p] = "param";
    auto claim = [&](const std::string& name, const std::string& path, const char* what) {
      if (name.empty()) return;
      auto [it, fresh] = owner.emplace(name, what);
      if (!fresh) r_.Error(JsonPathKey(path, "name"), "'" + name + "' is already the name of a " + it->second);
    };
    for (size_t i = 0; i < s_.tensors.size(); ++i) claim(s_.tensors[i].name, JsonPathIndex("tensors", i), "tensor");
    for (size_t i = 0; i < s_.scalars.size(); ++i) claim(s_.scalars[i].name, JsonPathIndex("scalars", i), "scalar");
  }

  void ReadFormula(const Json& root, const char* key, std::string* out) {
    const Json* v = r_.Member(root, "", key, true);
    if (v) CheckExpression(*v, key, 0, out);
  }

  void ReadTolerance(const Json& root) {
    const Json* tol = r_.Member(root, "", "tolerance", true);
    if (!tol) return;
    if (!tol->is_object()) {
      r_.Error("tolerance", "expected an object {\"rel_l2\", \"max_abs\", \"why\"}, got " + JsonTypeName(*tol));
      return;
    }
    Tolerance& t = s_.tolerance;
    r_.UnknownMembers(*tol, "tolerance", {"rel_l2", "max_abs", "exact", "check", "max_mismatch_fraction", "why"});
    r_.Bool(*tol, "tolerance", "exact", &t.exact);
    if (r_.String(*tol, "tolerance", "check", false, &t.check) && t.check != "elementwise" &&
        t.check != "distribution")
      r_.Error("tolerance.check", "unknown check '" + t.check + "'; one of elementwise, distribution");
    if (r_.String(*tol, "tolerance", "why", true, &t.why) && t.why.empty())
      r_.Error("tolerance.why", "must explain where the error comes from");
    // Exact (integer) outputs need no bounds; everything else needs both.
    if (r_.Number(*tol, "tolerance", "rel_l2", !t.exact, &t.rel_l2)) {
      if (!std::isfinite(t.rel_l2) || t.rel_l2 < 0) r_.Error("tolerance.rel_l2", "must be a finite number >= 0");
      else if (t.rel_l2 >= 1 && t.check != "distribution")
        r_.Error("tolerance.rel_l2", "must be below 1: a relative L2 error of 1 accepts any output of the right scale");
    }
    if (r_.Number(*tol, "tolerance", "max_abs", !t.exact, &t.max_abs) && (!std::isfinite(t.max_abs) || t.max_abs < 0))
      r_.Error("tolerance.max_abs", "must be a finite number >= 0");
    if (r_.Number(*tol, "tolerance", "max_mismatch_fraction", false, &t.max_mismatch_fraction) &&
        !(t.max_mismatch_fraction >= 0 && t.max_mismatch_fraction < 0.5))
      r_.Error("tolerance.max_mismatch_fraction", "must be a number in [0, 0.5)");
  }

  // A file of the operator: a relative path that stays inside the operator folder (a shipped or
  // shared operator reads nothing else), naming a regular file.
  void RequireFile(const std::string& path, const std::string& rel) {
    if (rel.empty()) {
      r_.Error(path, "must name a file");
      return;
    }
    fs::path p(rel);
    fs::path normal = p.lexically_normal();
    if (p.is_absolute() || normal.empty() || *normal.begin() == "..") {
      r_.Error(path, "'" + rel + "' is not inside the operator folder; name a file relative to " + dir_ +
                         " (no absolute path, no '..' out of it)");
      return;
    }
    std::string why;
    if (!IsReadableFile((fs::path(dir_) / rel).string(), &why)) r_.Error(path, "file '" + rel + "' in " + dir_ + " " + why);
  }

  // "seed": "FILE", or {"kernel": "FILE", "params": {"NAME": value, ...}} for one instance of a
  // family (or of any kernel file) as the seed: LoadSeed checks the values against its domains.
  void ReadSeed(const Json& root) {
    const Json* seed = r_.Member(root, "", "seed", true);
    if (!seed) return;
    if (seed->is_string()) {
      if (r_.String(root, "", "seed", true, &s_.seed)) RequireFile("seed", s_.seed);
      return;
    }
    if (!seed->is_object()) {
      r_.Error("seed", "expected \"file.cu\" or {\"kernel\": \"file.cu\", \"params\": {...}}, got " +
                           JsonTypeName(*seed));
      return;
    }
    r_.UnknownMembers(*seed, "seed", {"kernel", "params"});
    if (r_.String(*seed, "seed", "kernel", true, &s_.seed)) RequireFile("seed.kernel", s_.seed);
    ReadInstanceParams(*seed, "seed", true, &s_.seed_params);
  }

  // The "params" of {"kernel": FILE, "params": {"NAME": value, ...}}: one instance of FILE.
  void ReadInstanceParams(const Json& obj, const std::string& path, bool required, std::map<std::string, int64_t>* out) {
    const Json* params = r_.Member(obj, path, "params", required);
    if (!params) return;
    const std::string ppath = JsonPathKey(path, "params");
    if (!params->is_object() || params->empty()) {
      r_.Error(ppath, "expected an object of param values such as {\"BM\": 128}, got " +
                          (params->is_object() ? std::string("an empty object") : JsonTypeName(*params)));
      return;
    }
    for (auto it = params->begin(); it != params->end(); ++it) {
      int64_t v;
      if (r_.Integer(it.value(), JsonPathKey(ppath, it.key()), &v)) (*out)[it.key()] = v;
    }
  }

  void ReadYardstick(const Json& root) {
    const Json* y = r_.Member(root, "", "yardstick", false);
    if (!y) return;
    if (!y->is_object()) {
      r_.Error("yardstick", "expected {\"torch_ops\": \"<entry of scripts/torch_ops.py>\"}, got " + JsonTypeName(*y));
      return;
    }
    r_.UnknownMembers(*y, "yardstick", {"torch_ops"});
    if (!r_.String(*y, "yardstick", "torch_ops", true, &s_.yardstick_torch_ops)) return;
    // A Python identifier: it is looked up in the module, never evaluated.
    bool ok = !s_.yardstick_torch_ops.empty() && !std::isdigit(static_cast<unsigned char>(s_.yardstick_torch_ops[0]));
    for (char c : s_.yardstick_torch_ops) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok) r_.Error("yardstick.torch_ops", "'" + s_.yardstick_torch_ops + "' is not a function name of scripts/torch_ops.py");
  }

  void ReadFiles(const Json& root) {
    ReadYardstick(root);
    if (r_.String(root, "", "golden", true, &s_.golden)) RequireFile("golden", s_.golden);
    ReadSeed(root);
    if (const Json* ref = r_.Member(root, "", "reference", true)) {
      if (!ref->is_object()) {
        r_.Error("reference", "expected {\"library\": \"<id>\"} or {\"kernel\": \"file.cu\"[, \"params\": {...}]}, got " +
                                JsonTypeName(*ref));
      } else {
        r_.UnknownMembers(*ref, "reference", {"library", "kernel", "params"});
        bool has_library = r_.String(*ref, "reference", "library", false, &s_.reference.library);
        bool has_kernel = r_.String(*ref, "reference", "kernel", false, &s_.reference.kernel);
        if (ref->contains("library") == ref->contains("kernel"))
          r_.Error("reference", "needs exactly one of \"library\" and \"kernel\"");
        else if (has_library && s_.reference.library.empty())
          r_.Error("reference.library", "must name a library reference id");
        else if (has_kernel)
          RequireFile("reference.kernel", s_.reference.kernel);
        if (ref->contains("params")) {
          if (ref->contains("library"))
            r_.Error("reference.params", "params name an instance of a reference kernel; a library reference takes none");
          else
            ReadInstanceParams(*ref, "reference", false, &s_.reference.params);
        }
      }
    }
    if (r_.StringList(root, "", "families", false, &s_.families)) {
      std::set<std::string> seen;
      for (size_t i = 0; i < s_.families.size(); ++i) {
        std::string path = JsonPathIndex("families", i);
        if (!seen.insert(s_.families[i]).second) r_.Error(path, "family '" + s_.families[i] + "' appears twice");
        else RequireFile(path, s_.families[i]);
      }
    }
  }

  std::string dir_;
  FieldReader r_;
  OperatorSpec s_;
  bool params_ok_ = false;
  std::vector<size_t> valid_configs_;  // indices of configs giving every param an integer
};

}  // namespace

bool LoadOperator(const std::string& dir, OperatorSpec* out, Diagnostics* diags) {
  std::string file = (fs::path(dir) / "operator.json").string();
  std::string not_a_file;
  if (!IsReadableFile(file, &not_a_file)) {
    diags->push_back({file, "", 0, 0, "cannot read the operator definition: it " + not_a_file});
    return false;
  }
  std::string text;
  if (!ReadFileLimited(file, kJsonMaxBytes, "a JSON file", &text, &not_a_file)) {
    diags->push_back({file, "", 0, 0, "cannot read the operator definition: " + not_a_file});
    return false;
  }
  Json root;
  JsonParseError parse_error;
  if (!ParseJsonLimited(text, &root, &parse_error)) {
    TextPosition p = PositionOfOffset(text, parse_error.offset);
    diags->push_back({file, "", p.line, p.column, parse_error.message});
    return false;
  }
  JsonLocator locator(text, 0, text.size());
  OperatorSpec spec;
  OperatorLoader loader(dir, file, &locator, diags);
  if (!loader.Load(root, &spec)) return false;
  std::error_code ec;
  spec.dir = fs::absolute(dir, ec).lexically_normal().string();
  if (spec.dir.size() > 1 && spec.dir.back() == '/') spec.dir.pop_back();
  spec.path = (fs::path(spec.dir) / "operator.json").string();
  *out = std::move(spec);
  return true;
}

}  // namespace forgek
