// JSON encoding of the worker protocol (include/forgek/worker_protocol.h).
#include "core/json_parse.h"
#include "forgek/worker_protocol.h"

#include <array>

namespace forgek {
namespace {

using nlohmann::json;

bool FromJson(const json& j, InitSpec* out, std::string* err);
bool FromJson(const json& j, ResolvedCandidate* out, std::string* err);

// Reads fields of one JSON object, remembering the first problem with its field path.
class Reader {
 public:
  Reader(const json& j, std::string path, std::string* err) : j_(j), path_(std::move(path)), err_(err) {
    if (!j_.is_object()) Fail("", "expected an object");
  }
  bool ok() const { return ok_; }

  template <typename T>
  void Get(const char* key, T* out, bool required = true) {
    if (!ok_) return;
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      if (required) Fail(key, "missing");
      return;
    }
    try {
      *out = it->get<T>();
    } catch (const json::exception&) {
      Fail(key, std::string("wrong type (") + it->type_name() + ")");
    }
  }
  template <typename T>
  void Object(const char* key, T* out, bool required = true) {
    if (!ok_) return;
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      if (required) Fail(key, "missing");
      return;
    }
    std::string inner;
    if (!FromJson(*it, out, &inner)) Fail(key, inner);
  }
  void Fail(const std::string& key, const std::string& msg) {
    if (!ok_) return;
    ok_ = false;
    if (err_) *err_ = (path_.empty() ? "" : path_ + ".") + key + (key.empty() ? "" : ": ") + msg;
  }
  const json& j() const { return j_; }

 private:
  const json& j_;
  std::string path_;
  std::string* err_;
  bool ok_ = true;
};

bool ParseRole(const std::string& s, TensorRole* out) {
  if (s == "input") *out = TensorRole::input;
  else if (s == "output") *out = TensorRole::output;
  else if (s == "inout") *out = TensorRole::inout;
  else return false;
  return true;
}

bool ParseArgKind(const std::string& s, ResolvedArg::Kind* out) {
  static const std::array<std::pair<const char*, ResolvedArg::Kind>, 6> kinds = {{
      {"tensor", ResolvedArg::Kind::tensor}, {"workspace", ResolvedArg::Kind::workspace},
      {"tensor_map", ResolvedArg::Kind::tensor_map}, {"i32", ResolvedArg::Kind::i32},
      {"i64", ResolvedArg::Kind::i64}, {"f32", ResolvedArg::Kind::f32}}};
  for (const auto& [name, kind] : kinds)
    if (s == name) return *out = kind, true;
  return false;
}

json Dim3(const int64_t d[3]) { return json::array({d[0], d[1], d[2]}); }
bool ReadDim3(const json& j, int64_t d[3]) {
  if (!j.is_array() || j.size() != 3) return false;
  for (int i = 0; i < 3; ++i) {
    if (!j[i].is_number_integer()) return false;
    d[i] = j[i].get<int64_t>();
  }
  return true;
}

json ToJson(const ResolvedCandidate& r) {
  json ws = json::array();
  for (size_t i = 0; i < r.workspaces.size(); ++i)
    ws.push_back({{"name", r.workspaces[i].first}, {"bytes", r.workspaces[i].second},
                  {"zero", i < r.workspace_zero.size() && r.workspace_zero[i]}});
  json maps = json::array();
  for (const ResolvedTensorMap& m : r.tensor_maps)
    maps.push_back({{"name", m.name}, {"tensor", m.tensor}, {"shape", m.shape}, {"box", m.box},
                    {"swizzle", m.swizzle}, {"l2_promotion", m.l2_promotion}, {"oob_fill", m.oob_fill}});
  json launches = json::array();
  for (const ResolvedLaunch& l : r.launches) {
    json args = json::array();
    for (const ResolvedArg& a : l.args) {
      json ja = {{"kind", ResolvedArgKindName(a.kind)}, {"name", a.name}};
      if (a.kind == ResolvedArg::Kind::i32 || a.kind == ResolvedArg::Kind::i64) ja["i"] = a.i;
      if (a.kind == ResolvedArg::Kind::f32) ja["f"] = a.f;
      args.push_back(ja);
    }
    launches.push_back({{"kernel", l.kernel}, {"grid", Dim3(l.grid)}, {"block", Dim3(l.block)},
                        {"cluster", Dim3(l.cluster)}, {"smem", l.smem}, {"args", args}});
  }
  return {{"workspaces", ws}, {"tensor_maps", maps}, {"launches", launches}};
}

bool FromJson(const json& j, ResolvedCandidate* out, std::string* err) {
  Reader r(j, "", err);
  if (!r.ok()) return false;
  ResolvedCandidate v;
  const json& ws = j.value("workspaces", json::array());
  for (size_t i = 0; i < ws.size(); ++i) {
    Reader w(ws[i], "workspaces[" + std::to_string(i) + "]", err);
    std::string name;
    int64_t bytes = 0;
    bool zero = false;
    w.Get("name", &name);
    w.Get("bytes", &bytes);
    w.Get("zero", &zero, false);
    if (!w.ok()) return false;
    v.workspaces.emplace_back(name, bytes);
    v.workspace_zero.push_back(zero);
  }
  const json& maps = j.value("tensor_maps", json::array());
  for (size_t i = 0; i < maps.size(); ++i) {
    Reader m(maps[i], "tensor_maps[" + std::to_string(i) + "]", err);
    ResolvedTensorMap tm;
    m.Get("name", &tm.name);
    m.Get("tensor", &tm.tensor);
    m.Get("shape", &tm.shape);
    m.Get("box", &tm.box);
    m.Get("swizzle", &tm.swizzle, false);
    m.Get("l2_promotion", &tm.l2_promotion, false);
    m.Get("oob_fill", &tm.oob_fill, false);
    if (!m.ok()) return false;
    v.tensor_maps.push_back(tm);
  }
  const json& launches = j.value("launches", json::array());
  for (size_t i = 0; i < launches.size(); ++i) {
    std::string path = "launches[" + std::to_string(i) + "]";
    Reader l(launches[i], path, err);
    ResolvedLaunch rl;
    l.Get("kernel", &rl.kernel);
    l.Get("smem", &rl.smem, false);
    if (!l.ok()) return false;
    for (const char* dim : {"grid", "block", "cluster"}) {
      int64_t* d = dim[0] == 'g' ? rl.grid : dim[0] == 'b' ? rl.block : rl.cluster;
      if (launches[i].contains(dim) && !ReadDim3(launches[i][dim], d)) {
        l.Fail(dim, "expected three integers");
        return false;
      }
    }
    const json& args = launches[i].value("args", json::array());
    for (size_t k = 0; k < args.size(); ++k) {
      Reader a(args[k], path + ".args[" + std::to_string(k) + "]", err);
      ResolvedArg ra{};
      std::string kind;
      a.Get("kind", &kind);
      a.Get("name", &ra.name);
      a.Get("i", &ra.i, false);
      a.Get("f", &ra.f, false);
      if (a.ok() && !ParseArgKind(kind, &ra.kind)) a.Fail("kind", "unknown kind '" + kind + "'");
      if (!a.ok()) return false;
      rl.args.push_back(ra);
    }
    v.launches.push_back(rl);
  }
  *out = std::move(v);
  return true;
}

json ToJson(const InitSpec& s) {
  json j = {{"dist", s.dist}, {"mean", s.mean}, {"std", s.stddev}, {"lo", s.lo}, {"hi", s.hi}};
  if (s.dist == "partition") j.update({{"total", s.total}, {"multiple", s.multiple}, {"min", s.part_min}});
  return j;
}

bool FromJson(const json& j, InitSpec* out, std::string* err) {
  Reader r(j, "", err);
  InitSpec s;
  r.Get("dist", &s.dist);
  r.Get("mean", &s.mean, false);
  r.Get("std", &s.stddev, false);
  r.Get("lo", &s.lo, false);
  r.Get("hi", &s.hi, false);
  r.Get("total", &s.total, false);
  r.Get("multiple", &s.multiple, false);
  r.Get("min", &s.part_min, false);
  if (r.ok()) *out = s;
  return r.ok();
}

bool FromJson(const json& j, DeviceInfo* out, std::string* err) {
  Reader r(j, "", err);
  DeviceInfo d;
  r.Get("index", &d.index);
  r.Get("name", &d.name);
  r.Get("cc", &d.cc);
  r.Get("sms", &d.sms);
  r.Get("l2_bytes", &d.l2_bytes);
  r.Get("memory_bytes", &d.memory_bytes);
  r.Get("max_sm_clock_mhz", &d.max_sm_clock_mhz, false);
  r.Get("memory_clock_mhz", &d.memory_clock_mhz, false);
  r.Get("memory_bus_bits", &d.memory_bus_bits, false);
  if (r.ok()) *out = d;
  return r.ok();
}

}  // namespace

int64_t WireTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}
int64_t WireTensor::bytes() const { return elements() * DTypeBytes(dtype); }

std::string EncodeLine(const json& message) { return message.dump() + "\n"; }

bool BoolField(const json& message, const char* key, bool fallback) {
  auto it = message.is_object() ? message.find(key) : message.end();
  return message.is_object() && it != message.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

double NumberField(const json& message, const char* key, double fallback) {
  auto it = message.is_object() ? message.find(key) : message.end();
  return message.is_object() && it != message.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string StringField(const json& message, const char* key, const std::string& fallback) {
  auto it = message.is_object() ? message.find(key) : message.end();
  return message.is_object() && it != message.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool DecodeMessageLine(const std::string& line, json* out, std::string* err) {
  json j;
  JsonParseError parse_error;
  if (!ParseJsonLimited(line, &j, &parse_error)) {
    *err = "not JSON (" + parse_error.message + " at byte " + std::to_string(parse_error.offset) +
           "): " + line.substr(0, 120);
    return false;
  }
  if (!j.is_object()) {
    *err = "not a JSON object: " + line.substr(0, 120);
    return false;
  }
  if (!j.contains("id") || !j["id"].is_number_integer()) {
    *err = "message has no integer \"id\": " + line.substr(0, 120);
    return false;
  }
  if (!j.contains("type") || !j["type"].is_string()) {
    *err = "message has no string \"type\": " + line.substr(0, 120);
    return false;
  }
  *out = std::move(j);
  return true;
}

json ToJson(const DeviceInfo& d) {
  return {{"index", d.index}, {"name", d.name}, {"cc", d.cc}, {"sms", d.sms}, {"l2_bytes", d.l2_bytes},
          {"memory_bytes", d.memory_bytes}, {"max_sm_clock_mhz", d.max_sm_clock_mhz},
          {"memory_clock_mhz", d.memory_clock_mhz}, {"memory_bus_bits", d.memory_bus_bits}};
}

json ToJson(const ProbeResult& p) {
  if (!p.ok) return {{"ok", false}, {"error", p.error}};
  json devices = json::array();
  for (const DeviceInfo& d : p.devices) devices.push_back(ToJson(d));
  return {{"ok", true}, {"driver_version", p.driver_version}, {"devices", devices}};
}

bool FromJson(const json& j, ProbeResult* out, std::string* err) {
  Reader r(j, "", err);
  ProbeResult p;
  r.Get("ok", &p.ok);
  r.Get("error", &p.error, !p.ok);
  if (p.ok) r.Get("driver_version", &p.driver_version);
  if (!r.ok()) return false;
  if (p.ok) {
    const json& devices = j.value("devices", json::array());
    for (size_t i = 0; i < devices.size(); ++i) {
      DeviceInfo d;
      std::string inner;
      if (!FromJson(devices[i], &d, &inner)) return *err = "devices[" + std::to_string(i) + "]." + inner, false;
      p.devices.push_back(d);
    }
  }
  *out = p;
  return true;
}

json ToJson(const WireConfig& c) {
  json tensors = json::array();
  for (const WireTensor& t : c.tensors)
    tensors.push_back({{"name", t.name}, {"role", TensorRoleName(t.role)}, {"dtype", DTypeName(t.dtype)},
                       {"shape", t.shape}, {"init", ToJson(t.init)}});
  json scalars = json::array();
  for (const ScalarSpec& s : c.scalars)
    scalars.push_back({{"name", s.name}, {"dtype", DTypeName(s.dtype)}, {"value", s.value}});
  const Tolerance& t = c.tolerance;
  return {{"op", c.op}, {"name", c.name}, {"values", c.values}, {"tensors", tensors}, {"scalars", scalars},
          {"tolerance",
           {{"rel_l2", t.rel_l2},
            {"max_abs", t.max_abs},
            {"exact", t.exact},
            {"check", t.check},
            {"max_mismatch_fraction", t.max_mismatch_fraction}}}};
}

bool FromJson(const json& j, WireConfig* out, std::string* err) {
  Reader r(j, "", err);
  WireConfig c;
  r.Get("op", &c.op, false);
  r.Get("name", &c.name);
  r.Get("values", &c.values, false);
  if (!r.ok()) return false;
  const json& tensors = j.value("tensors", json::array());
  for (size_t i = 0; i < tensors.size(); ++i) {
    Reader t(tensors[i], "tensors[" + std::to_string(i) + "]", err);
    WireTensor w;
    std::string role, dtype;
    t.Get("name", &w.name);
    t.Get("role", &role);
    t.Get("dtype", &dtype);
    t.Get("shape", &w.shape);
    t.Object("init", &w.init, false);
    if (t.ok() && !ParseRole(role, &w.role)) t.Fail("role", "unknown role '" + role + "'");
    if (t.ok() && !ParseDType(dtype, &w.dtype)) t.Fail("dtype", "unknown dtype '" + dtype + "'");
    for (int64_t d : w.shape)
      if (t.ok() && d < 0) t.Fail("shape", "negative dimension");
    if (!t.ok()) return false;
    c.tensors.push_back(w);
  }
  const json& scalars = j.value("scalars", json::array());
  for (size_t i = 0; i < scalars.size(); ++i) {
    Reader s(scalars[i], "scalars[" + std::to_string(i) + "]", err);
    ScalarSpec sc;
    std::string dtype;
    s.Get("name", &sc.name);
    s.Get("dtype", &dtype);
    s.Get("value", &sc.value);
    if (s.ok() && !ParseDType(dtype, &sc.dtype)) s.Fail("dtype", "unknown dtype '" + dtype + "'");
    if (!s.ok()) return false;
    c.scalars.push_back(sc);
  }
  if (j.contains("tolerance")) {
    Reader t(j["tolerance"], "tolerance", err);
    t.Get("rel_l2", &c.tolerance.rel_l2, false);
    t.Get("max_abs", &c.tolerance.max_abs, false);
    t.Get("exact", &c.tolerance.exact, false);
    t.Get("check", &c.tolerance.check, false);
    t.Get("max_mismatch_fraction", &c.tolerance.max_mismatch_fraction, false);
    if (!t.ok()) return false;
  }
  *out = std::move(c);
  return true;
}

json ToJson(const WireKernel& k) {
  json j = {{"label", k.label}};
  if (!k.library.empty()) j["library"] = k.library;
  if (!k.cubin_path.empty()) j["cubin_path"] = k.cubin_path;
  if (!k.cubin_b64.empty()) j["cubin_b64"] = k.cubin_b64;
  if (k.library.empty()) j["launch"] = ToJson(k.launch);
  return j;
}

bool FromJson(const json& j, WireKernel* out, std::string* err) {
  Reader r(j, "", err);
  WireKernel k;
  r.Get("label", &k.label, false);
  r.Get("library", &k.library, false);
  r.Get("cubin_path", &k.cubin_path, false);
  r.Get("cubin_b64", &k.cubin_b64, false);
  if (!r.ok()) return false;
  if (k.library.empty() && !k.cubin_path.empty() + !k.cubin_b64.empty() != 1) {
    r.Fail("", "a kernel needs exactly one of library, cubin_path, cubin_b64");
    return false;
  }
  if (k.library.empty()) r.Object("launch", &k.launch);
  if (r.ok()) *out = std::move(k);
  return r.ok();
}

json ToJson(const TimingPolicy& p) {
  const StopRule& s = p.stop;
  return {{"warmup", s.warmup}, {"min_samples", s.min_samples}, {"max_samples", s.max_samples},
          {"min_time_s", s.min_time_s}, {"max_time_s", s.max_time_s}, {"max_noise", s.max_noise},
          {"graph_below_us", p.graph_below_us}, {"graph_target_us", p.graph_target_us},
          {"max_input_copies", p.max_input_copies}, {"audit", p.audit}};
}

bool FromJson(const json& j, TimingPolicy* out, std::string* err) {
  Reader r(j, "", err);
  TimingPolicy p;
  r.Get("warmup", &p.stop.warmup, false);
  r.Get("min_samples", &p.stop.min_samples, false);
  r.Get("max_samples", &p.stop.max_samples, false);
  r.Get("min_time_s", &p.stop.min_time_s, false);
  r.Get("max_time_s", &p.stop.max_time_s, false);
  r.Get("max_noise", &p.stop.max_noise, false);
  r.Get("graph_below_us", &p.graph_below_us, false);
  r.Get("graph_target_us", &p.graph_target_us, false);
  r.Get("max_input_copies", &p.max_input_copies, false);
  r.Get("audit", &p.audit, false);
  if (r.ok()) *out = p;
  return r.ok();
}

json ToJson(const EvaluateCommand& c) {
  json j = {{"config", ToJson(c.config)}, {"golden", ToJson(c.golden)}, {"candidate", ToJson(c.candidate)},
            {"seeds", c.seeds}, {"time", c.time}, {"policy", ToJson(c.policy)}};
  if (!c.incumbent.empty()) j["incumbent"] = ToJson(c.incumbent);
  return j;
}

bool FromJson(const json& j, EvaluateCommand* out, std::string* err) {
  Reader r(j, "", err);
  EvaluateCommand c;
  r.Object("config", &c.config);
  r.Object("golden", &c.golden);
  r.Object("candidate", &c.candidate);
  r.Object("incumbent", &c.incumbent, false);
  r.Get("seeds", &c.seeds);
  r.Get("time", &c.time, false);
  r.Object("policy", &c.policy, false);
  if (r.ok() && c.seeds.empty()) r.Fail("seeds", "at least one seed is needed");
  if (r.ok()) *out = std::move(c);
  return r.ok();
}

json ToJson(const TimingStats& t) {
  return {{"median_us", t.median_us}, {"mean_us", t.mean_us}, {"min_us", t.min_us}, {"p10_us", t.p10_us},
          {"p90_us", t.p90_us}, {"rel_noise", t.rel_noise}, {"samples", t.samples}, {"sm_clock_mhz", t.sm_clock_mhz}};
}

bool FromJson(const json& j, TimingStats* out, std::string* err) {
  Reader r(j, "", err);
  TimingStats t;
  r.Get("median_us", &t.median_us);
  r.Get("mean_us", &t.mean_us, false);
  r.Get("min_us", &t.min_us, false);
  r.Get("p10_us", &t.p10_us, false);
  r.Get("p90_us", &t.p90_us, false);
  r.Get("rel_noise", &t.rel_noise, false);
  r.Get("samples", &t.samples, false);
  r.Get("sm_clock_mhz", &t.sm_clock_mhz, false);
  if (r.ok()) *out = t;
  return r.ok();
}

json ToJson(const CorrectnessReport& c) {
  return {{"ok", c.ok}, {"rel_l2", c.rel_l2}, {"max_abs", c.max_abs}, {"bad_elements", c.bad_elements},
          {"detail", c.detail}};
}

bool FromJson(const json& j, CorrectnessReport* out, std::string* err) {
  Reader r(j, "", err);
  CorrectnessReport c;
  r.Get("ok", &c.ok);
  r.Get("rel_l2", &c.rel_l2, false);
  r.Get("max_abs", &c.max_abs, false);
  r.Get("bad_elements", &c.bad_elements, false);
  r.Get("detail", &c.detail, false);
  if (r.ok()) *out = c;
  return r.ok();
}

json ToJson(const EvaluateReply& v) {
  json j = {{"status", v.status}, {"correctness", ToJson(v.correctness)}, {"timed", v.timed},
            {"audit_ok", v.audit_ok}, {"input_copies", v.input_copies},
            {"launches_per_sample", v.launches_per_sample}};
  if (!v.error.empty()) j["error"] = v.error;
  if (!v.cuda_error.empty()) j["cuda_error"] = v.cuda_error;
  if (!v.failed_kernel.empty()) j["failed_kernel"] = v.failed_kernel;
  if (!v.audit_detail.empty()) j["audit_detail"] = v.audit_detail;
  if (v.timed) {
    j["candidate_timing"] = ToJson(v.candidate);
    if (v.incumbent.samples > 0) j["incumbent_timing"] = ToJson(v.incumbent);
  }
  return j;
}

bool FromJson(const json& j, EvaluateReply* out, std::string* err) {
  Reader r(j, "", err);
  EvaluateReply v;
  r.Get("status", &v.status);
  r.Get("error", &v.error, false);
  r.Get("cuda_error", &v.cuda_error, false);
  r.Get("failed_kernel", &v.failed_kernel, false);
  r.Object("correctness", &v.correctness, false);
  r.Get("timed", &v.timed, false);
  r.Object("candidate_timing", &v.candidate, false);
  r.Object("incumbent_timing", &v.incumbent, false);
  r.Get("audit_ok", &v.audit_ok, false);
  r.Get("audit_detail", &v.audit_detail, false);
  r.Get("input_copies", &v.input_copies, false);
  r.Get("launches_per_sample", &v.launches_per_sample, false);
  if (r.ok()) *out = std::move(v);
  return r.ok();
}

std::string Base64Encode(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool Base64Decode(const std::string& text, std::string* bytes) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return false;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad > 0 || (v[k] = value(c)) < 0) {
        return false;
      }
    }
    uint32_t w = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += char((w >> 16) & 0xFF);
    if (pad < 2) out += char((w >> 8) & 0xFF);
    if (pad < 1) out += char(w & 0xFF);
  }
  *bytes = std::move(out);
  return true;
}

json ToJson(const KernelLaunchRecord& k) {
  return {{"name", k.name},
          {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
          {"block", {k.block[0], k.block[1], k.block[2]}},
          {"cluster", {k.cluster[0], k.cluster[1], k.cluster[2]}},
          {"registers_per_thread", k.registers_per_thread},
          {"static_smem_bytes", k.static_smem_bytes},
          {"dynamic_smem_bytes", k.dynamic_smem_bytes},
          {"local_memory_per_thread", k.local_memory_per_thread},
          {"duration_us", k.duration_us}};
}

bool FromJson(const json& j, KernelLaunchRecord* out, std::string* err) {
  Reader r(j, "", err);
  KernelLaunchRecord k;
  std::vector<int64_t> grid, block, cluster;
  r.Get("name", &k.name);
  r.Get("grid", &grid);
  r.Get("block", &block);
  r.Get("cluster", &cluster, false);
  r.Get("registers_per_thread", &k.registers_per_thread, false);
  r.Get("static_smem_bytes", &k.static_smem_bytes, false);
  r.Get("dynamic_smem_bytes", &k.dynamic_smem_bytes, false);
  r.Get("local_memory_per_thread", &k.local_memory_per_thread, false);
  r.Get("duration_us", &k.duration_us, false);
  auto dims = [&r](const char* key, const std::vector<int64_t>& v, int64_t* out3, bool required) {
    if (!r.ok() || (v.empty() && !required)) return;
    if (v.size() != 3) return r.Fail(key, "expected 3 numbers (x, y, z)");
    for (int i = 0; i < 3; ++i) out3[i] = v[static_cast<size_t>(i)];
  };
  dims("grid", grid, k.grid, true);
  dims("block", block, k.block, true);
  dims("cluster", cluster, k.cluster, false);
  if (r.ok()) *out = std::move(k);
  return r.ok();
}

json ToJson(const ProfileCommand& c) {
  return {{"config", ToJson(c.config)}, {"kernel", ToJson(c.kernel)}, {"metrics", c.metrics},
          {"seed", c.seed},             {"warmup", c.warmup},         {"samples", c.samples}};
}

bool FromJson(const json& j, ProfileCommand* out, std::string* err) {
  Reader r(j, "", err);
  ProfileCommand c;
  r.Object("config", &c.config);
  r.Object("kernel", &c.kernel);
  r.Get("metrics", &c.metrics, false);
  r.Get("seed", &c.seed, false);
  r.Get("warmup", &c.warmup, false);
  r.Get("samples", &c.samples, false);
  if (r.ok() && c.samples < 1) r.Fail("samples", "at least one timed call is needed");
  if (r.ok() && c.warmup < 0) r.Fail("warmup", "must not be negative");
  if (r.ok()) *out = std::move(c);
  return r.ok();
}

json ToJson(const ProfileReply& p) {
  json launches = json::array();
  for (const KernelLaunchRecord& k : p.launches) launches.push_back(ToJson(k));
  json j = {{"status", p.status},   {"launches", launches}, {"metrics", p.metrics},
            {"kernel_metrics", p.kernel_metrics}, {"time_us", p.time_us}, {"timing", ToJson(p.timing)}};
  if (!p.error.empty()) j["error"] = p.error;
  if (!p.cuda_error.empty()) j["cuda_error"] = p.cuda_error;
  if (!p.metrics_error.empty()) j["metrics_error"] = p.metrics_error;
  return j;
}

bool FromJson(const json& j, ProfileReply* out, std::string* err) {
  Reader r(j, "", err);
  ProfileReply p;
  r.Get("status", &p.status);
  r.Get("error", &p.error, false);
  r.Get("cuda_error", &p.cuda_error, false);
  r.Get("metrics", &p.metrics, false);
  r.Get("kernel_metrics", &p.kernel_metrics, false);
  r.Get("metrics_error", &p.metrics_error, false);
  r.Get("time_us", &p.time_us, false);
  r.Object("timing", &p.timing, false);
  const json& launches = j.is_object() ? j.value("launches", json::array()) : json::array();
  if (r.ok() && !launches.is_array()) r.Fail("launches", "expected an array");
  for (size_t i = 0; r.ok() && i < launches.size(); ++i) {
    KernelLaunchRecord k;
    std::string inner;
    if (!FromJson(launches[i], &k, &inner)) r.Fail("launches[" + std::to_string(i) + "]", inner);
    else p.launches.push_back(std::move(k));
  }
  if (r.ok()) *out = std::move(p);
  return r.ok();
}

}  // namespace forgek
