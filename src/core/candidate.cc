// Parsing a candidate's manifest: the JSON in the first /* forgek ... */ comment of a .cu file.
#include "forgek/core/candidate.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "forgek/core/file_read.h"
#include "forgek/core/operator_spec.h"
#include "json_fields.h"
#include "forgek/core/json_parse.h"
#include "manifest_span.h"
#include "forgek/core/paths.h"
#include "forgek/core/spec_limits.h"

namespace forgek {

namespace {

const std::vector<std::string> kManifestFields = {"name",     "archs",       "mechanisms", "controls",    "params",
                                                  "let",      "constraints", "workspaces", "tensor_maps", "launches"};
// The archs forgek targets (the values of --arch).
const std::vector<std::string> kArchs = {"sm90", "sm100"};
const std::vector<std::string> kSwizzles = {"none", "32B", "64B", "128B"};
const std::vector<std::string> kL2Promotions = {"none", "64B", "128B", "256B"};
const std::vector<std::string> kOobFills = {"none", "nan"};

class ManifestReader {
 public:
  ManifestReader(const std::string& file, const JsonLocator* locator, Diagnostics* diags)
      : r_(file, locator, diags), locator_(locator) {}

  bool Read(const Json& root, CandidateManifest* m) {
    if (!root.is_object()) {
      r_.Error("", "the manifest must be a JSON object, got " + JsonTypeName(root));
      return false;
    }
    r_.DuplicateKeys();
    r_.UnknownMembers(root, "", kManifestFields);
    r_.String(root, "", "name", false, &m->name);
    ReadArchs(root, m);
    ReadMechanisms(root, m);
    ReadParams(root, m);
    ReadControls(root, m);
    ReadLets(root, m);
    if (const Json* c = r_.Member(root, "", "constraints", false)) {
      if (!c->is_array()) r_.Error("constraints", "expected an array of expressions, got " + JsonTypeName(*c));
      else
        for (size_t i = 0; i < c->size(); ++i) {
          std::string text;
          if (r_.Expression((*c)[i], JsonPathIndex("constraints", i), &text)) m->constraints.push_back(text);
        }
    }
    ReadWorkspaces(root, m);
    ReadTensorMaps(root, m);
    ReadLaunches(root, m);
    return r_.error_count() == 0;
  }

 private:
  // Params, lets, workspaces and tensor maps share one namespace. Params and lets are named by
  // their key (errors point at it), workspaces and tensor maps by a "name" value.
  void Claim(const std::string& name, const std::string& path, const char* what) {
    bool by_key = path.size() < 5 || path.compare(path.size() - 5, 5, ".name") != 0;
    auto report = [&](const std::string& message) { by_key ? r_.KeyError(path, message) : r_.Error(path, message); };
    if (!IsIdentifier(name)) {
      report("'" + name + "' is not an identifier");
      return;
    }
    auto [it, fresh] = names_.emplace(name, what);
    if (!fresh) report("'" + name + "' is already the name of a " + it->second);
  }

  const Json* ArrayMember(const Json& root, const char* key) {
    const Json* v = r_.Member(root, "", key, false);
    if (v && !v->is_array()) {
      r_.Error(key, std::string("expected an array, got ") + JsonTypeName(*v));
      return nullptr;
    }
    return v;
  }

  void ReadArchs(const Json& root, CandidateManifest* m) {
    if (!r_.StringList(root, "", "archs", false, &m->archs)) return;
    if (m->archs.empty()) r_.Error("archs", "name at least one arch (" + JoinNames(kArchs) + "), or leave \"archs\" out");
    for (size_t i = 0; i < m->archs.size(); ++i) {
      const std::string& a = m->archs[i];
      if (std::find(kArchs.begin(), kArchs.end(), a) == kArchs.end())
        r_.Error(JsonPathIndex("archs", i), "unknown arch '" + a + "'; one of " + JoinNames(kArchs));
      else if (std::find(m->archs.begin(), m->archs.begin() + static_cast<std::ptrdiff_t>(i), a) !=
               m->archs.begin() + static_cast<std::ptrdiff_t>(i))
        r_.Error(JsonPathIndex("archs", i), "arch '" + a + "' appears twice");
    }
  }

  void ReadMechanisms(const Json& root, CandidateManifest* m) {
    if (!r_.StringList(root, "", "mechanisms", false, &m->mechanisms)) return;
    for (size_t i = 0; i < m->mechanisms.size(); ++i)
      if (!IsIdentifier(m->mechanisms[i]))
        r_.Error(JsonPathIndex("mechanisms", i), "'" + m->mechanisms[i] + "' is not a mechanism id");
  }

  // "controls": {"mechanism": ["PARAM", ...]}: which params set which mechanism. Read after the
  // params, which it names; a param sets at most one mechanism, so that two instances differing in
  // one param compare settings of exactly one mechanism.
  void ReadControls(const Json& root, CandidateManifest* m) {
    const Json* controls = r_.Member(root, "", "controls", false);
    if (!controls) return;
    if (!controls->is_object()) {
      r_.Error("controls", "expected an object {\"mechanism\": [\"PARAM\", ...]}, got " + JsonTypeName(*controls));
      return;
    }
    std::map<std::string, std::string> owner;  // param -> mechanism
    for (auto it = controls->begin(); it != controls->end(); ++it) {
      std::string path = JsonPathKey("controls", it.key());
      if (!IsIdentifier(it.key())) {
        r_.KeyError(path, "'" + it.key() + "' is not a mechanism id");
        continue;
      }
      const Json& v = it.value();
      if (!v.is_array() || v.empty()) {
        r_.Error(path, "expected a non-empty array of param names, got " + (v.is_array() ? std::string("[]") : JsonTypeName(v)));
        continue;
      }
      ControlSpec c{it.key(), {}};
      for (size_t i = 0; i < v.size(); ++i) {
        std::string ppath = JsonPathIndex(path, i);
        if (!v[i].is_string()) {
          r_.Error(ppath, "expected a param name, got " + JsonTypeName(v[i]));
          continue;
        }
        std::string name = v[i].get<std::string>();
        bool declared = std::any_of(m->params.begin(), m->params.end(), [&](const ParamSpec& p) { return p.name == name; });
        if (!declared) {
          r_.Error(ppath, "'" + name + "' is not a param of this manifest (params)");
          continue;
        }
        auto [at, fresh] = owner.emplace(name, c.mechanism);
        if (!fresh) {
          r_.Error(ppath, "param '" + name + "' already controls '" + at->second + "'; a param controls one mechanism");
          continue;
        }
        c.params.push_back(name);
      }
      // Manifest order, so that a setting's name does not depend on how the list was written.
      std::vector<std::string> ordered;
      for (const ParamSpec& p : m->params)
        if (std::find(c.params.begin(), c.params.end(), p.name) != c.params.end()) ordered.push_back(p.name);
      c.params = std::move(ordered);
      if (!c.params.empty()) m->controls.push_back(std::move(c));
    }
  }

  void ReadParams(const Json& root, CandidateManifest* m) {
    const Json* params = r_.Member(root, "", "params", false);
    if (!params) return;
    if (!params->is_object()) {
      r_.Error("params", "expected an object {\"NAME\": value or [values]}, got " + JsonTypeName(*params));
      return;
    }
    if (params->size() > kMaxParamsPerCandidate) {
      r_.Error("params", std::to_string(params->size()) + " params; a candidate may declare at most " +
                             std::to_string(kMaxParamsPerCandidate));
      return;
    }
    uint64_t instances = 1;
    for (auto it = params->begin(); it != params->end(); ++it) {
      std::string path = JsonPathKey("params", it.key());
      Claim(it.key(), path, "param");
      ParamSpec p{it.key(), {}};
      const Json& v = it.value();
      if (v.is_array()) {
        if (v.empty()) {
          r_.Error(path, "a param domain needs at least one value");
          continue;
        }
        if (v.size() > kMaxParamDomainValues) {
          r_.Error(path, "a domain of " + std::to_string(v.size()) + " values; at most " +
                             std::to_string(kMaxParamDomainValues) + " are allowed");
          continue;
        }
        bool ok = true;
        for (size_t i = 0; i < v.size(); ++i) {
          int64_t x;
          std::string vpath = JsonPathIndex(path, i);
          if (!r_.Integer(v[i], vpath, &x)) {
            ok = false;
          } else if (std::find(p.values.begin(), p.values.end(), x) != p.values.end()) {
            r_.Error(vpath, "value " + std::to_string(x) + " appears twice in the domain");
            ok = false;
          } else {
            p.values.push_back(x);
          }
        }
        if (!ok) continue;
      } else {
        int64_t x;
        if (!r_.Integer(v, path, &x)) continue;
        p.values.push_back(x);
      }
      instances = instances > kMaxFamilyInstances ? instances : instances * p.values.size();
      m->params.push_back(std::move(p));
    }
    if (instances > kMaxFamilyInstances)
      r_.Error("params", "the domains describe more than " + std::to_string(kMaxFamilyInstances) +
                             " instances (the product of their sizes); split the family or narrow its domains");
  }

  void ReadLets(const Json& root, CandidateManifest* m) {
    const Json* lets = r_.Member(root, "", "let", false);
    if (!lets) return;
    if (!lets->is_object()) {
      r_.Error("let", "expected an object {\"NAME\": \"expression\"}, got " + JsonTypeName(*lets));
      return;
    }
    if (lets->size() > kMaxLetsPerCandidate) {
      r_.Error("let", std::to_string(lets->size()) + " lets; a candidate may declare at most " +
                          std::to_string(kMaxLetsPerCandidate));
      return;
    }
    for (auto it = lets->begin(); it != lets->end(); ++it) {
      std::string path = JsonPathKey("let", it.key());
      Claim(it.key(), path, "let");
      std::string text;
      if (r_.Expression(it.value(), path, &text)) m->lets.emplace_back(it.key(), text);
    }
  }

  void ReadWorkspaces(const Json& root, CandidateManifest* m) {
    const Json* ws = ArrayMember(root, "workspaces");
    if (!ws) return;
    for (size_t i = 0; i < ws->size(); ++i) {
      const Json& w = (*ws)[i];
      std::string path = JsonPathIndex("workspaces", i);
      if (!w.is_object()) {
        r_.Error(path, "expected an object {\"name\", \"bytes\", \"zero\"}, got " + JsonTypeName(w));
        continue;
      }
      r_.UnknownMembers(w, path, {"name", "bytes", "zero"});
      WorkspaceSpec spec;
      if (r_.String(w, path, "name", true, &spec.name)) Claim(spec.name, JsonPathKey(path, "name"), "workspace");
      if (const Json* bytes = r_.Member(w, path, "bytes", true))
        r_.Expression(*bytes, JsonPathKey(path, "bytes"), &spec.bytes);
      r_.Bool(w, path, "zero", &spec.zero);
      m->workspaces.push_back(std::move(spec));
    }
  }

  void Enum(const Json& obj, const std::string& path, const char* key, const std::vector<std::string>& allowed,
            std::string* out) {
    if (!r_.String(obj, path, key, false, out)) return;
    if (std::find(allowed.begin(), allowed.end(), *out) != allowed.end()) return;
    std::string list;
    for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
    r_.Error(JsonPathKey(path, key), "unknown value '" + *out + "'; one of " + list);
  }

  void ReadTensorMaps(const Json& root, CandidateManifest* m) {
    const Json* maps = ArrayMember(root, "tensor_maps");
    if (!maps) return;
    for (size_t i = 0; i < maps->size(); ++i) {
      const Json& t = (*maps)[i];
      std::string path = JsonPathIndex("tensor_maps", i);
      if (!t.is_object()) {
        r_.Error(path, "expected an object {\"name\", \"tensor\", \"box\", ...}, got " + JsonTypeName(t));
        continue;
      }
      r_.UnknownMembers(t, path, {"name", "tensor", "box", "shape", "swizzle", "interleave", "l2_promotion", "oob_fill"});
      TensorMapSpec spec;
      if (r_.String(t, path, "name", true, &spec.name)) Claim(spec.name, JsonPathKey(path, "name"), "tensor map");
      r_.String(t, path, "tensor", true, &spec.tensor);
      r_.ExpressionList(t, path, "box", true, 5, &spec.box);
      r_.ExpressionList(t, path, "shape", false, 5, &spec.shape);
      if (!spec.shape.empty() && !spec.box.empty() && spec.shape.size() != spec.box.size())
        r_.Error(JsonPathKey(path, "box"), "box has " + std::to_string(spec.box.size()) + " dimensions but shape has " +
                                               std::to_string(spec.shape.size()));
      Enum(t, path, "swizzle", kSwizzles, &spec.swizzle);
      std::string interleave = "none";
      Enum(t, path, "interleave", {"none"}, &interleave);
      Enum(t, path, "l2_promotion", kL2Promotions, &spec.l2_promotion);
      Enum(t, path, "oob_fill", kOobFills, &spec.oob_fill);
      m->tensor_maps.push_back(std::move(spec));
    }
  }

  void ReadLaunches(const Json& root, CandidateManifest* m) {
    const Json* launches = r_.Member(root, "", "launches", true);
    if (!launches) return;
    if (!launches->is_array() || launches->empty()) {
      r_.Error("launches", launches->is_array() ? "needs at least one launch"
                                                : "expected an array of launches, got " + JsonTypeName(*launches));
      return;
    }
    if (launches->size() > kMaxLaunchesPerCandidate) {
      r_.Error("launches", std::to_string(launches->size()) + " launches; a candidate may make at most " +
                               std::to_string(kMaxLaunchesPerCandidate));
      return;
    }
    for (size_t i = 0; i < launches->size(); ++i) {
      const Json& l = (*launches)[i];
      std::string path = JsonPathIndex("launches", i);
      if (!l.is_object()) {
        r_.Error(path, "expected an object {\"kernel\", \"grid\", \"block\", \"args\"}, got " + JsonTypeName(l));
        continue;
      }
      r_.UnknownMembers(l, path, {"kernel", "grid", "block", "cluster", "smem", "args", "when"});
      LaunchSpec spec;
      spec.line = locator_->ValueAt(path).line;
      if (r_.String(l, path, "kernel", true, &spec.kernel) && !IsIdentifier(spec.kernel))
        r_.Error(JsonPathKey(path, "kernel"), "'" + spec.kernel + "' is not a C identifier");
      r_.ExpressionList(l, path, "grid", true, 3, &spec.grid);
      r_.ExpressionList(l, path, "block", true, 3, &spec.block);
      r_.ExpressionList(l, path, "cluster", false, 3, &spec.cluster);
      if (const Json* smem = r_.Member(l, path, "smem", false)) r_.Expression(*smem, JsonPathKey(path, "smem"), &spec.smem);
      if (const Json* when = r_.Member(l, path, "when", false)) r_.Expression(*when, JsonPathKey(path, "when"), &spec.when);
      r_.StringList(l, path, "args", true, &spec.args);
      for (size_t a = 0; a < spec.args.size(); ++a)
        if (spec.args[a].empty()) r_.Error(JsonPathIndex(JsonPathKey(path, "args"), a), "empty argument");
      m->launches.push_back(std::move(spec));
    }
  }

  FieldReader r_;
  const JsonLocator* locator_;
  std::map<std::string, std::string> names_;  // name -> what it names
};

}  // namespace

bool FindManifest(const std::string& file, const std::string& source, ManifestSpan* span, Diagnostics* diags) {
  for (size_t at = source.find("/*"); at != std::string::npos; at = source.find("/*", at + 2)) {
    size_t p = at + 2;
    while (p < source.size() && std::isspace(static_cast<unsigned char>(source[p]))) ++p;
    if (source.compare(p, 6, "forgek") != 0) continue;
    p += 6;
    if (p < source.size() && !std::isspace(static_cast<unsigned char>(source[p])) && source[p] != '{') continue;
    size_t close = source.find("*/", p);
    if (close == std::string::npos) {
      TextPosition pos = PositionOfOffset(source, at);
      diags->push_back({file, "", pos.line, pos.column, "the manifest comment '/* forgek' is never closed with '*/'"});
      return false;
    }
    *span = {at, p, close};
    return true;
  }
  diags->push_back({file, "", 1, 1,
                    "no manifest: a candidate starts with a /* forgek { \"launches\": [...] } */ comment "
                    "(see docs/candidate-format.md)"});
  return false;
}

const ControlSpec* CandidateManifest::ControlOf(const std::string& param) const {
  for (const ControlSpec& c : controls)
    if (std::find(c.params.begin(), c.params.end(), param) != c.params.end()) return &c;
  return nullptr;
}

bool CandidateManifest::IsFamily() const {
  return std::any_of(params.begin(), params.end(), [](const ParamSpec& p) { return p.values.size() > 1; });
}

bool CandidateManifest::ForArch(const std::string& arch) const {
  return archs.empty() || std::find(archs.begin(), archs.end(), arch) != archs.end();
}

std::string CandidateManifest::ArchsText() const {
  return archs.empty() ? "every arch" : JoinNames(archs);
}

bool ParseCandidate(const std::string& path, const std::string& source, Candidate* out, Diagnostics* diags) {
  // A UTF-8 byte order mark (some editors write one) is not C++: NVRTC stops at it. It is dropped
  // here, so the source kept, hashed and compiled starts with the text.
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (std::string_view(source).substr(0, kBom.size()) == kBom)
    return ParseCandidate(path, source.substr(kBom.size()), out, diags);
  // Every later step (the manifest scan, hashing, the store, NVRTC, prompts) holds the whole text.
  if (source.size() > kMaxCandidateSourceBytes) {
    diags->push_back({path, "", 0, 0,
                      "the candidate's source is " + std::to_string(source.size()) + " bytes (" +
                          BytesText(source.size()) + "); a candidate's source may be at most " +
                          std::to_string(kMaxCandidateSourceBytes) + " bytes (" +
                          BytesText(kMaxCandidateSourceBytes) + ")"});
    return false;
  }
  ManifestSpan span;
  if (!FindManifest(path, source, &span, diags)) return false;
  Json root;
  JsonParseError parse_error;
  if (!ParseJsonLimited(std::string_view(source).substr(span.begin, span.end - span.begin), &root, &parse_error)) {
    TextPosition p = PositionOfOffset(source, std::min(span.begin + parse_error.offset, span.end));
    diags->push_back({path, "", p.line, p.column, "manifest: " + parse_error.message});
    return false;
  }
  JsonLocator locator(source, span.begin, span.end);
  CandidateManifest manifest;
  ManifestReader reader(path, &locator, diags);
  if (!reader.Read(root, &manifest)) return false;
  if (manifest.name.empty())
    manifest.name = path.empty() ? "candidate" : std::filesystem::path(path).stem().string();
  // Positions need the text up to the manifest's end only (the code after it can be long).
  manifest.origin = std::make_shared<const ManifestOrigin>(path, source.substr(0, span.end), span.begin, span.end);
  out->path = path;
  out->source = source;
  out->manifest = std::move(manifest);
  return true;
}

struct ManifestOrigin::Index {
  explicit Index(const ManifestOrigin& o) : locator(o.text_, o.begin_, o.end_) {}
  JsonLocator locator;
};

ManifestOrigin::ManifestOrigin(std::string file, std::string text, size_t begin, size_t end)
    : file_(std::move(file)), text_(std::move(text)), begin_(begin), end_(end) {}

ManifestOrigin::~ManifestOrigin() = default;

void ManifestOrigin::Locate(const std::string& field, long index, Diagnostic* d) const {
  std::call_once(once_, [this] { index_ = std::make_unique<Index>(*this); });
  const JsonLocator& locator = index_->locator;
  TextPosition p = index >= 0 ? locator.InString(field, static_cast<size_t>(index)) : locator.ValueAt(field);
  d->file = file_;
  d->line = p.line;
  d->column = p.column;
}

bool LoadCandidateFile(const std::string& path, Candidate* out, Diagnostics* diags) {
  std::string not_a_file;
  if (!IsReadableFile(path, &not_a_file)) {
    diags->push_back({path, "", 0, 0, "cannot read the candidate file: it " + not_a_file});
    return false;
  }
  std::string source;
  if (!ReadFileLimited(path, kMaxCandidateSourceBytes, "a candidate's source", &source, &not_a_file)) {
    diags->push_back({path, "", 0, 0, "cannot read the candidate file: " + not_a_file});
    return false;
  }
  return ParseCandidate(path, source, out, diags);
}

namespace {
// `file` (relative to the operator's folder) with each param of `params` narrowed to its value, which
// must lie in the file's domain; errors on operator.json's `field`.NAME.
bool LoadInstance(const OperatorSpec& op, const std::string& file, const std::map<std::string, int64_t>& params,
                  const std::string& field, Candidate* out, Diagnostics* diags) {
  if (!LoadCandidateFile((std::filesystem::path(op.dir) / file).string(), out, diags)) return false;
  bool ok = true;
  for (const auto& param : params) {
    const std::string& name = param.first;  // a structured binding cannot be captured below (C++20)
    const int64_t value = param.second;
    const std::string where = field + "." + name;
    auto it = std::find_if(out->manifest.params.begin(), out->manifest.params.end(),
                           [&](const ParamSpec& p) { return p.name == name; });
    if (it == out->manifest.params.end()) {
      std::vector<std::string> names;
      for (const ParamSpec& p : out->manifest.params) names.push_back(p.name);
      diags->push_back({op.path, where, 0, 0,
                        file + " has no param '" + name + "'; its params are " + JoinNames(names)});
      ok = false;
    } else if (std::find(it->values.begin(), it->values.end(), value) == it->values.end()) {
      std::string domain;
      for (int64_t v : it->values) domain += (domain.empty() ? "" : ", ") + std::to_string(v);
      diags->push_back({op.path, where, 0, 0,
                        std::to_string(value) + " is not in " + file + "'s domain of " + name + " [" + domain +
                            "]: an instance is one its file declares"});
      ok = false;
    } else {
      it->values = {value};
    }
  }
  return ok;
}
}  // namespace

bool LoadSeed(const OperatorSpec& op, Candidate* out, Diagnostics* diags) {
  return LoadInstance(op, op.seed, op.seed_params, "seed.params", out, diags);
}

bool LoadReferenceKernel(const OperatorSpec& op, Candidate* out, Diagnostics* diags) {
  if (op.reference.kernel.empty()) {
    diags->push_back({op.path, "reference", 0, 0, "the reference of " + op.name + " is a library call, not a kernel"});
    return false;
  }
  return LoadInstance(op, op.reference.kernel, op.reference.params, "reference.params", out, diags);
}

std::vector<std::string> ParamDefines(const ParamAssignment& params) {
  std::vector<std::string> out;
  for (const auto& [name, value] : params) out.push_back("-D" + name + "=" + std::to_string(value));
  return out;
}

}  // namespace forgek
