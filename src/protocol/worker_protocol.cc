// JSON encoding of the worker protocol (include/forgek/worker_protocol.h) as nlohmann_json to_json/from_json.
#include "forgek/protocol/worker_protocol.h"

#include <initializer_list>

#include "forgek/core/json_parse.h"

namespace forgek {

using nlohmann::json;

namespace {

// Why a message does not decode: the offending member's path from the message's root
// ("golden.launch.launches[0].grid") and what is wrong with it. Thrown by the from_json functions
// below, caught by FromJson, which returns it as its error string.
struct WireError {
  std::string path, message;
};

// The path `inner` one level up, under `outer` (a member name or "[i]").
std::string Under(const std::string& outer, const std::string& inner) {
  if (inner.empty()) return outer;
  return outer + (inner[0] == '[' ? "" : ".") + inner;
}

// grid, block and cluster: exactly three integers. (nlohmann reads a C array of any length.)
void Read(const json& j, int64_t (*out)[3]) {
  if (!j.is_array() || j.size() != 3) throw WireError{"", "expected three integers (x, y, z)"};
  for (size_t i = 0; i < 3; ++i) {
    if (!j[i].is_number_integer()) throw WireError{"", "expected three integers (x, y, z)"};
    (*out)[i] = j[i].get<int64_t>();
  }
}

// Reads `j` into *out through nlohmann. Its own conversion error names no member unless the whole
// build defines JSON_DIAGNOSTICS (an ABI switch), so it becomes a WireError here, where the callers
// (ReadMember, the array overload) know the member.
template <typename T>
void Read(const json& j, T* out) {
  try {
    j.get_to(*out);
  } catch (const json::exception& e) {
    const std::string what = e.what();  // "[json.exception.type_error.302] type must be number, but is string"
    const size_t at = what.find("] ");
    throw WireError{"", at == std::string::npos ? what : what.substr(at + 2)};
  }
}

// Arrays element by element, so that a path names the index ("tensors[1].dtype").
template <typename T>
void Read(const json& j, std::vector<T>* out) {
  if (!j.is_array()) throw WireError{"", std::string("expected an array, not ") + j.type_name()};
  std::vector<T> v(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    try {
      Read(j[i], &v[i]);
    } catch (WireError& e) {
      e.path = Under("[" + std::to_string(i) + "]", e.path);
      throw;
    }
  }
  *out = std::move(v);
}

// Member `key` of object `j` into *out; absent or null, *out keeps its default.
template <typename T>
void ReadMember(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    Read(*it, out);
  } catch (WireError& e) {
    e.path = Under(key, e.path);
    throw;
  }
}

// `j` is an object with each of `keys` (not null). Every from_json starts with it.
void Require(const json& j, std::initializer_list<const char*> keys) {
  if (!j.is_object()) throw WireError{"", std::string("expected an object, not ") + j.type_name()};
  for (const char* key : keys)
    if (!j.contains(key) || j[key].is_null()) throw WireError{key, "missing"};
}

// Checks beyond the members' types, run after a struct's members are read; most structs have none.
template <typename T>
void Validate(const json&, const T&) {}

void Validate(const json&, const WireTensor& t) {
  for (int64_t d : t.shape)
    if (d < 0) throw WireError{"shape", "negative dimension"};
}

// A library kernel or a PyTorch golden needs no launches; a cubin cannot run without them.
void Validate(const json& j, const WireKernel& k) {
  int given = 0;
  for (const std::string* s : {&k.library, &k.cubin_b64, &k.torch_file}) given += s->empty() ? 0 : 1;
  if (given != 1) throw WireError{"", "a kernel needs exactly one of library, cubin_b64, torch_file"};
  if (!k.cubin_b64.empty()) Require(j, {"launch"});
}

void Validate(const json&, const EvaluateCommand& c) {
  if (c.seeds.empty()) throw WireError{"seeds", "at least one seed is needed"};
}

void Validate(const json&, const ProfileCommand& c) {
  if (c.samples < 1) throw WireError{"samples", "at least one timed call is needed"};
  if (c.warmup < 0) throw WireError{"warmup", "must not be negative"};
}

// An enum from the spelling `name` gives it; `what` names the kind in the message.
template <typename E>
E ByName(const json& j, std::initializer_list<E> all, const char* (*name)(E), const char* what) {
  const std::string s = j.get<std::string>();
  for (E e : all)
    if (s == name(e)) return e;
  throw WireError{"", std::string("unknown ") + what + " '" + s + "'"};
}

// Strings that travel only when set: a reply carrying "error" says something went wrong.
void PutIfSet(json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

}  // namespace

// FORGEK_WIRE_FROM(Type, (required keys), members...): from_json reading each member under its own
// name: a required key must be present, an absent optional member keeps its default (as with
// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT), and an error names the member's path, which
// nlohmann's own macros cannot do. FORGEK_WIRE_TYPE adds to_json as NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE
// writes it. Internal linkage: other modules may encode these structs their own way.
#define FORGEK_UNPAREN(...) __VA_ARGS__
#define FORGEK_WIRE_READ(member) ReadMember(nlohmann_json_j, #member, &nlohmann_json_t.member);
#define FORGEK_WIRE_FROM(Type, required, ...)                                  \
  static void from_json(const json& nlohmann_json_j, Type& nlohmann_json_t) {  \
    Require(nlohmann_json_j, {FORGEK_UNPAREN required});                       \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(FORGEK_WIRE_READ, __VA_ARGS__))   \
    Validate(nlohmann_json_j, nlohmann_json_t);                                \
  }
#define FORGEK_WIRE_TYPE(Type, required, ...)                                      \
  static void to_json(json& nlohmann_json_j, const Type& nlohmann_json_t) {        \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))       \
  }                                                                                \
  FORGEK_WIRE_FROM(Type, required, __VA_ARGS__)

const char* ReplyStatusName(ReplyStatus s) {
  switch (s) {
    case ReplyStatus::ok: return "ok";
    case ReplyStatus::launch_error: return "launch_error";
    case ReplyStatus::crash: return "crash";
    case ReplyStatus::unsupported: return "unsupported";
    case ReplyStatus::error: return "error";
  }
  return "error";
}

// Enums travel as the spellings operator.json and manifests use.
static void to_json(json& j, DType t) { j = DTypeName(t); }
static void to_json(json& j, TensorRole r) { j = TensorRoleName(r); }
static void to_json(json& j, ResolvedArg::Kind k) { j = ResolvedArgKindName(k); }
static void to_json(json& j, ReplyStatus s) { j = ReplyStatusName(s); }
static void from_json(const json& j, DType& t) {
  if (!ParseDType(j.get<std::string>(), &t)) throw WireError{"", "unknown dtype '" + j.get<std::string>() + "'"};
}
static void from_json(const json& j, TensorRole& r) {
  r = ByName(j, {TensorRole::input, TensorRole::output, TensorRole::inout}, TensorRoleName, "role");
}
static void from_json(const json& j, ResolvedArg::Kind& k) {
  using K = ResolvedArg::Kind;
  k = ByName(j, {K::tensor, K::workspace, K::tensor_map, K::i32, K::i64, K::f32}, ResolvedArgKindName, "kind");
}
static void from_json(const json& j, ReplyStatus& s) {
  using S = ReplyStatus;
  s = ByName(j, {S::ok, S::launch_error, S::crash, S::unsupported, S::error}, ReplyStatusName, "status");
}

// The members of a distribution that travel: hi_expr and total_expr arrive evaluated (hi, total).
static void to_json(json& j, const InitSpec& s) {
  j = {{"dist", s.dist}, {"mean", s.mean}, {"std", s.stddev}, {"lo", s.lo}, {"hi", s.hi}};
  if (s.dist == "partition") j.update({{"total", s.total}, {"multiple", s.multiple}, {"min", s.part_min}});
}
static void from_json(const json& j, InitSpec& s) {
  Require(j, {"dist"});
  ReadMember(j, "dist", &s.dist);
  ReadMember(j, "mean", &s.mean);
  ReadMember(j, "std", &s.stddev);
  ReadMember(j, "lo", &s.lo);
  ReadMember(j, "hi", &s.hi);
  ReadMember(j, "total", &s.total);
  ReadMember(j, "multiple", &s.multiple);
  ReadMember(j, "min", &s.part_min);
}

FORGEK_WIRE_TYPE(DeviceInfo, ("index", "name", "cc", "sms", "l2_bytes", "memory_bytes"), index, name, cc, sms,
                 l2_bytes, memory_bytes, max_sm_clock_mhz, memory_clock_mhz, memory_bus_bits)
FORGEK_WIRE_TYPE(WireTensor, ("name", "role", "dtype", "shape"), name, role, dtype, shape, init)
FORGEK_WIRE_TYPE(ScalarSpec, ("name", "dtype", "value"), name, dtype, value)
FORGEK_WIRE_TYPE(Tolerance, (), rel_l2, max_abs, exact, check, max_mismatch_fraction)
FORGEK_WIRE_TYPE(WireConfig, ("name"), op, name, values, tensors, scalars, tolerance)
FORGEK_WIRE_TYPE(ResolvedTensorMap, ("name", "tensor", "shape", "box"), name, tensor, shape, box, swizzle,
                 l2_promotion, oob_fill)
FORGEK_WIRE_TYPE(ResolvedArg, ("kind", "name"), kind, name, i, f)
FORGEK_WIRE_TYPE(ResolvedLaunch, ("kernel"), kernel, grid, block, cluster, smem, args)
FORGEK_WIRE_TYPE(StopRule, (), warmup, min_samples, max_samples, min_time_s, max_time_s, max_noise)
FORGEK_WIRE_TYPE(TimingStats, ("median_us"), median_us, mean_us, min_us, p10_us, p90_us, rel_noise, samples,
                 sm_clock_mhz)
FORGEK_WIRE_TYPE(PairedRatio, ("pairs"), median, rel_noise, pairs)
FORGEK_WIRE_TYPE(GoldenTiming, ("seeds"), seeds, total_ms, copy_ms, compute_ms, device, transport)
FORGEK_WIRE_TYPE(TorchYardstick, (), eager, compiled, eager_error, compile_error, device, torch_version)
FORGEK_WIRE_TYPE(CorrectnessReport, ("ok"), ok, rel_l2, max_abs, bad_elements, detail)
FORGEK_WIRE_TYPE(KernelLaunchRecord, ("name", "grid", "block"), name, grid, block, cluster, registers_per_thread,
                 static_smem_bytes, dynamic_smem_bytes, local_memory_per_thread, duration_us)

namespace {
// A workspace as it travels; ResolvedCandidate keeps the zero flags in a vector of their own.
struct WireWorkspace {
  std::string name;
  int64_t bytes = 0;
  bool zero = false;
};
FORGEK_WIRE_TYPE(WireWorkspace, ("name", "bytes"), name, bytes, zero)
}  // namespace

static void to_json(json& j, const ResolvedCandidate& r) {
  std::vector<WireWorkspace> workspaces;
  for (size_t i = 0; i < r.workspaces.size(); ++i)
    workspaces.push_back({r.workspaces[i].first, r.workspaces[i].second,
                          i < r.workspace_zero.size() && r.workspace_zero[i]});
  j = {{"workspaces", workspaces}, {"tensor_maps", r.tensor_maps}, {"launches", r.launches}};
}
static void from_json(const json& j, ResolvedCandidate& r) {
  Require(j, {});
  std::vector<WireWorkspace> workspaces;
  ReadMember(j, "workspaces", &workspaces);
  ReadMember(j, "tensor_maps", &r.tensor_maps);
  ReadMember(j, "launches", &r.launches);
  for (const WireWorkspace& w : workspaces) {
    r.workspaces.emplace_back(w.name, w.bytes);
    r.workspace_zero.push_back(w.zero);
  }
}

// A library kernel travels without launches; a cubin with the launches resolved for the config.
static void to_json(json& j, const WireKernel& k) {
  j = {{"label", k.label}};
  PutIfSet(j, "library", k.library);
  PutIfSet(j, "cubin_b64", k.cubin_b64);
  PutIfSet(j, "torch_file", k.torch_file);
  if (k.library.empty() && k.torch_file.empty()) j["launch"] = k.launch;
}
FORGEK_WIRE_FROM(WireKernel, (), label, library, cubin_b64, launch, torch_file)

// One flat object: the stop rule's members beside the policy's own.
static void to_json(json& j, const TimingPolicy& p) {
  j = p.stop;
  j.update({{"graph_below_us", p.graph_below_us}, {"graph_target_us", p.graph_target_us},
            {"max_input_copies", p.max_input_copies}, {"audit", p.audit}});
}
static void from_json(const json& j, TimingPolicy& p) {
  Read(j, &p.stop);
  ReadMember(j, "graph_below_us", &p.graph_below_us);
  ReadMember(j, "graph_target_us", &p.graph_target_us);
  ReadMember(j, "max_input_copies", &p.max_input_copies);
  ReadMember(j, "audit", &p.audit);
}

static void to_json(json& j, const EvaluateCommand& c) {
  j = {{"config", c.config}, {"golden", c.golden}, {"candidate", c.candidate},
       {"seeds", c.seeds},   {"time", c.time},     {"policy", c.policy}};
  if (!c.incumbent.empty()) j["incumbent"] = c.incumbent;  // none: correctness only
  if (!c.torch_yardstick.empty()) j["torch_yardstick"] = c.torch_yardstick;
}
FORGEK_WIRE_FROM(EvaluateCommand, ("config", "golden", "candidate", "seeds"), config, golden, candidate, incumbent,
                 seeds, time, policy, torch_yardstick)

// Timings travel only when there are some; error strings only when set.
static void to_json(json& j, const EvaluateReply& v) {
  j = {{"status", v.status},     {"correctness", v.correctness},   {"timed", v.timed},
       {"audit_ok", v.audit_ok}, {"input_copies", v.input_copies}, {"launches_per_sample", v.launches_per_sample}};
  PutIfSet(j, "error", v.error);
  PutIfSet(j, "cuda_error", v.cuda_error);
  PutIfSet(j, "failed_kernel", v.failed_kernel);
  PutIfSet(j, "audit_detail", v.audit_detail);
  if (v.timed) j["candidate_timing"] = v.candidate;
  if (v.timed && v.incumbent.samples > 0) j["incumbent_timing"] = v.incumbent;
  if (v.timed && v.paired.pairs > 0) j["paired"] = v.paired;
  if (v.golden.seeds > 0) j["golden_timing"] = v.golden;
  if (v.torch.asked()) j["torch_yardstick"] = v.torch;
}
static void from_json(const json& j, EvaluateReply& v) {
  Require(j, {"status"});
  ReadMember(j, "status", &v.status);
  ReadMember(j, "error", &v.error);
  ReadMember(j, "cuda_error", &v.cuda_error);
  ReadMember(j, "failed_kernel", &v.failed_kernel);
  ReadMember(j, "audit_detail", &v.audit_detail);
  ReadMember(j, "correctness", &v.correctness);
  ReadMember(j, "timed", &v.timed);
  ReadMember(j, "candidate_timing", &v.candidate);
  ReadMember(j, "incumbent_timing", &v.incumbent);
  ReadMember(j, "paired", &v.paired);
  ReadMember(j, "audit_ok", &v.audit_ok);
  ReadMember(j, "input_copies", &v.input_copies);
  ReadMember(j, "launches_per_sample", &v.launches_per_sample);
  ReadMember(j, "golden_timing", &v.golden);
  ReadMember(j, "torch_yardstick", &v.torch);
}

FORGEK_WIRE_TYPE(ProfileCommand, ("config", "kernel"), config, kernel, metrics, seed, warmup, samples)

static void to_json(json& j, const ProfileReply& p) {
  j = {{"status", p.status},   {"launches", p.launches}, {"metrics", p.metrics},
       {"kernel_metrics", p.kernel_metrics}, {"time_us", p.time_us}, {"timing", p.timing}};
  PutIfSet(j, "error", p.error);
  PutIfSet(j, "cuda_error", p.cuda_error);
  PutIfSet(j, "metrics_error", p.metrics_error);
}
FORGEK_WIRE_FROM(ProfileReply, ("status"), status, error, cuda_error, launches, metrics, kernel_metrics,
                 metrics_error, time_us, timing)

// A failed probe is its error and nothing else.
static void to_json(json& j, const ProbeResult& p) {
  if (!p.ok) j = {{"ok", false}, {"error", p.error}};
  else j = {{"ok", true}, {"driver_version", p.driver_version}, {"devices", p.devices}};
}
static void from_json(const json& j, ProbeResult& p) {
  Require(j, {"ok"});
  ReadMember(j, "ok", &p.ok);
  Require(j, {p.ok ? "driver_version" : "error"});
  ReadMember(j, "error", &p.error);
  ReadMember(j, "driver_version", &p.driver_version);
  if (p.ok) ReadMember(j, "devices", &p.devices);
}

namespace {

// The boundary between the throwing from_json functions and the status-returning API.
template <typename T>
bool Decode(const json& j, T* out, std::string* err) {
  try {
    T v;
    Read(j, &v);
    *out = std::move(v);
    return true;
  } catch (const WireError& e) {
    if (err) *err = e.path.empty() ? e.message : e.path + ": " + e.message;
    return false;
  }
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

json ToJson(const DeviceInfo& v) { return v; }
json ToJson(const ProbeResult& v) { return v; }
json ToJson(const WireConfig& v) { return v; }
json ToJson(const WireKernel& v) { return v; }
json ToJson(const TimingPolicy& v) { return v; }
json ToJson(const EvaluateCommand& v) { return v; }
json ToJson(const EvaluateReply& v) { return v; }
json ToJson(const GoldenTiming& v) { return v; }
json ToJson(const TorchYardstick& v) { return v; }
json ToJson(const TimingStats& v) { return v; }
json ToJson(const CorrectnessReport& v) { return v; }
json ToJson(const KernelLaunchRecord& v) { return v; }
json ToJson(const ProfileCommand& v) { return v; }
json ToJson(const ProfileReply& v) { return v; }
bool FromJson(const json& j, ProbeResult* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, WireConfig* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, WireKernel* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, TimingPolicy* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, EvaluateCommand* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, EvaluateReply* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, GoldenTiming* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, TimingStats* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, CorrectnessReport* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, KernelLaunchRecord* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, ProfileCommand* out, std::string* err) { return Decode(j, out, err); }
bool FromJson(const json& j, ProfileReply* out, std::string* err) { return Decode(j, out, err); }

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

}  // namespace forgek
