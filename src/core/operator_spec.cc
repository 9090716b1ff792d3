// Operator lookups: configs and tensors of a loaded spec, operator folders, names and aliases.
#include "forgek/core/operator_spec.h"
#include "forgek/core/paths.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "forgek/core/file_read.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/suggest.h"

namespace forgek {

namespace fs = std::filesystem;

std::string InstanceText(const std::string& file, const std::map<std::string, int64_t>& params) {
  std::string values;
  for (const auto& [param, value] : params) values += (values.empty() ? "" : ", ") + param + "=" + std::to_string(value);
  return values.empty() ? file : file + " at " + values;
}

std::string OperatorSpec::SeedText() const { return InstanceText(seed, seed_params); }

std::string ReferenceText(const ReferenceSpec& r) {
  return r.library.empty() ? "kernel " + InstanceText(r.kernel, r.params) : "library " + r.library;
}

const ConfigSpec* OperatorSpec::FindConfig(const std::string& config_name) const {
  for (const ConfigSpec& c : configs)
    if (c.name == config_name) return &c;
  return nullptr;
}

const TensorSpec* OperatorSpec::FindTensor(const std::string& tensor_name) const {
  for (const TensorSpec& t : tensors)
    if (t.name == tensor_name) return &t;
  return nullptr;
}

bool OperatorSpec::TensorShape(const TensorSpec& t, const Bindings& config, std::vector<int64_t>* shape,
                               Diagnostic* diag) const {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    int64_t d;
    if (!EvalExpression(t.shape[i], config, &d, diag)) {
      size_t index = static_cast<size_t>(&t - tensors.data());
      diag->file = path;
      diag->field = index < tensors.size() ? "tensors[" + std::to_string(index) + "].shape[" + std::to_string(i) + "]"
                                           : t.name + ".shape[" + std::to_string(i) + "]";
      return false;
    }
    dims.push_back(d);
  }
  *shape = std::move(dims);
  return true;
}

std::vector<std::string> ListOperatorDirs(const std::string& root) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    // Any operator.json counts, even one that is not a file: loading it then says what it is.
    if (it->is_directory(ec2) && fs::exists(fs::symlink_status(it->path() / "operator.json", ec2)))
      dirs.push_back(it->path().string());
  }
  std::sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) {
    return fs::path(a).filename() < fs::path(b).filename();
  });
  return dirs;
}

namespace {

// The aliases an operator.json declares, read leniently: a broken file has none.
std::vector<std::string> ReadAliases(const std::string& dir) {
  std::string text, why;
  // Not a regular file (a FIFO would block), or larger than any JSON forgek parses: no aliases.
  if (!ReadFileLimited((fs::path(dir) / "operator.json").string(), kJsonMaxBytes, "a JSON file", &text, &why))
    return {};
  nlohmann::json j;
  JsonParseError ignored;
  std::vector<std::string> out;
  if (!ParseJsonLimited(text, &j, &ignored)) return out;
  if (!j.is_object() || !j.contains("aliases") || !j["aliases"].is_array()) return out;
  for (const auto& a : j["aliases"])
    if (a.is_string()) out.push_back(a.get<std::string>());
  return out;
}

}  // namespace

bool ResolveOperator(const std::string& root, const std::string& name_or_alias, std::string* dir,
                     std::string* err) {
  std::vector<std::string> dirs = ListOperatorDirs(root);
  for (const std::string& d : dirs) {
    if (fs::path(d).filename() == name_or_alias) {
      *dir = d;
      return true;
    }
  }
  std::vector<std::string> known;
  for (const std::string& d : dirs) {
    std::string name = fs::path(d).filename().string();
    known.push_back(name);
    for (const std::string& alias : ReadAliases(d)) {
      if (alias == name_or_alias) {
        *dir = d;
        return true;
      }
      known.push_back(alias);
    }
  }
  std::string message = "unknown operator '" + name_or_alias + "' in " + root;
  std::vector<std::string> close = CloseMatches(name_or_alias, known, 3);
  // A prefix such as "gemm" for "gemm_bf16" is also worth suggesting.
  for (const std::string& k : known)
    if (close.size() < 3 && k.rfind(name_or_alias, 0) == 0 && !name_or_alias.empty() &&
        std::find(close.begin(), close.end(), k) == close.end())
      close.push_back(k);
  if (!close.empty()) {
    message += "; did you mean ";
    for (size_t i = 0; i < close.size(); ++i) message += (i ? ", " : "") + close[i];
    message += "?";
  } else if (!dirs.empty()) {
    // The first names and a count, as every list in a message: 10 000 operators are not 100 KB of error.
    std::vector<std::string> names;
    for (const std::string& d : dirs) names.push_back(fs::path(d).filename().string());
    message += "; known operators: " + JoinShown(names);
  } else {
    message += " (it holds no operator folders)";
  }
  *err = message;
  return false;
}

DType OperatorSpec::ComputeDType() const {
  for (const TensorSpec& t : tensors)
    if (t.role != TensorRole::output && DTypeIsFloat(t.dtype)) return t.dtype;
  return DType::f32;
}

}  // namespace forgek
