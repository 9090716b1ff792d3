// scripts/forgek_torch_helper.py from C++: finding it, `describe`, and the framed protocol of `serve`.
#include "forgek/core/torch_helper.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "forgek/core/json_parse.h"
#include "forgek/core/paths.h"
#include "forgek/core/subprocess.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool IsExecutable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path); }

std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && IsExecutable(dir + "/" + name)) return dir + "/" + name;
    start = end + 1;
  }
  return "";
}

std::string SizesArg(const std::map<std::string, int64_t>& sizes) {
  std::string out;
  for (const auto& [name, value] : sizes) out += (out.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return out;
}

bool WriteAll(int fd, const std::string& data, std::string* err) {
  size_t done = 0;
  while (done < data.size()) {
    // MSG_NOSIGNAL: a helper that ended is an EPIPE here, not a SIGPIPE that kills this process.
    ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return *err = std::string("writing to the torch helper: ") + std::strerror(errno), false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads exactly n bytes, or a line when n is npos, from fd through the buffer `pending`.
bool ReadFrom(int fd, std::string* pending, size_t n, std::string* out, std::string* err) {
  for (;;) {
    size_t have = n == std::string::npos ? pending->find('\n') : (pending->size() >= n ? n : std::string::npos);
    if (have != std::string::npos) {
      size_t take = n == std::string::npos ? have + 1 : n;
      *out = pending->substr(0, take);
      pending->erase(0, take);
      return true;
    }
    char buf[1 << 16];
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return *err = "the torch helper ended before its reply was complete", false;
    pending->append(buf, static_cast<size_t>(got));
  }
}

// Whether `python` has a torch package, looked for without importing it (an import takes seconds;
// `check` does the real one where it matters).
bool HasTorch(const std::string& python) {
  ProcessOutput run = RunProcess(
      {python, "-c", "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('torch') else 1)"}, 60);
  return run.started && !run.timed_out && run.exit_code == 0;
}

// The interpreter when FORGEK_PYTHON is not set: of python3 in PATH and /usr/bin/python3, the first
// with torch, else the first that exists ("" when none). Once per PATH and process.
std::string PickPython() {
  static std::mutex mu;
  static std::map<std::string, std::string> picked;  // PATH -> interpreter
  const char* path_env = std::getenv("PATH");
  const std::string key = path_env ? path_env : "";
  std::lock_guard<std::mutex> lock(mu);
  auto it = picked.find(key);
  if (it != picked.end()) return it->second;
  std::vector<std::string> candidates;
  std::vector<std::string> seen;
  for (const std::string& c : {FindInPath("python3"), std::string("/usr/bin/python3")}) {
    if (!IsExecutable(c)) continue;
    std::error_code ec;
    std::string real = fs::canonical(c, ec).string();
    if (std::find(seen.begin(), seen.end(), real) != seen.end()) continue;
    seen.push_back(real);
    candidates.push_back(c);
  }
  std::string choice;
  for (const std::string& c : candidates) {
    if (HasTorch(c)) {
      choice = c;
      spdlog::info("PyTorch helper: {} (it has torch)", c);
      break;
    }
  }
  if (choice.empty() && !candidates.empty()) {
    choice = candidates.front();
    spdlog::info("PyTorch helper: {} (no python3 found has torch)", choice);
  }
  picked[key] = choice;
  return choice;
}

// The tensors a reply lists; `sized`: each one's bytes sized for the blob that follows the header.
bool ParseTensorList(const json& list, std::vector<TorchTensor>* out, std::string* err, bool sized = true) {
  if (!list.is_array()) return *err = "tensors is not a list", false;
  for (const json& m : list) {
    if (!m.is_object() || !m.contains("name") || !m.contains("dtype") || !m.contains("shape") || !m.contains("nbytes"))
      return *err = "a tensor of the reply lacks name, dtype, shape or nbytes", false;
    TorchTensor t;
    t.name = m["name"].get<std::string>();
    t.dtype = m["dtype"].get<std::string>();
    t.shape = m["shape"].get<std::vector<int64_t>>();
    if (sized) t.bytes.resize(m["nbytes"].get<size_t>());
    out->push_back(std::move(t));
  }
  return true;
}

// Whether `nbytes` is what `shape` holds of `dtype`, a dtype the protocol carries; false naming why.
bool CheckWireLayout(const std::string& name, const std::string& dtype, const std::vector<int64_t>& shape,
                     uint64_t nbytes, std::string* err) {
  int size = TorchWireDtypeSize(dtype);
  if (size == 0) return *err = "tensor " + name + ": dtype " + dtype + " does not cross to PyTorch", false;
  uint64_t elements = 1;
  for (int64_t d : shape) elements *= static_cast<uint64_t>(d < 0 ? 0 : d);
  if (elements * size != nbytes)
    return *err = "tensor " + name + ": " + std::to_string(nbytes) + " bytes for its shape and " + dtype, false;
  return true;
}

// Where a `run` computed and its own time, from its reply's header.
TorchRunInfo RunInfoOf(const json& reply_header) {
  TorchRunInfo info;
  auto device = reply_header.find("device");
  auto seconds = reply_header.find("compute_s");
  if (device != reply_header.end() && device->is_string()) info.device = device->get<std::string>();
  if (seconds != reply_header.end() && seconds->is_number()) info.compute_s = seconds->get<double>();
  return info;
}

}  // namespace

bool IsTorchGolden(const std::string& golden) {
  auto ends = [&golden](const std::string& ext) {
    return golden.size() > ext.size() && golden.compare(golden.size() - ext.size(), ext.size(), ext) == 0;
  };
  return ends(".py") || ends(".json");
}

std::string YardstickOf(const OperatorSpec& op) {
  if (!op.yardstick_torch_ops.empty()) return kTorchOpsYardstick + op.yardstick_torch_ops;
  if (IsTorchGolden(op.golden)) {
    std::error_code ec;
    const std::filesystem::path file = std::filesystem::path(op.dir) / op.golden;
    const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
    return (ec ? file : absolute).string();
  }
  return "";
}

bool CheckTorchGoldenRuns(const std::string& op_name, const std::string& golden, TorchHelperPaths* paths,
                          std::string* err) {
  std::string why;
  TorchCheck check;
  if (!FindTorchHelper(paths, &why) || !CheckTorch(*paths, &check, &why)) {
    *err = "the golden of " + op_name + " is a PyTorch problem (" + golden +
           "), which needs python3 with torch: " + why + " (docs/importing.md)";
    return false;
  }
  return true;
}

bool CheckTorch(const TorchHelperPaths& paths, TorchCheck* out, std::string* err) {
  struct Answer {
    bool ok = false;
    TorchCheck check;
    std::string err;
  };
  static std::mutex mu;
  static std::map<std::string, Answer> answers;  // "python script" -> its answer
  const std::string key = paths.python + " " + paths.script;
  std::lock_guard<std::mutex> lock(mu);
  auto it = answers.find(key);
  if (it == answers.end()) {
    Answer a;
    // Importing a CUDA build of torch can take a while on a cold file cache.
    ProcessOutput run = RunProcess({paths.python, paths.script, "check"}, 300);
    json j = ParseJsonLenient(run.out);
    if (!run.started) {
      a.err = "could not start " + paths.python + ": " + run.err;
    } else if (run.timed_out) {
      a.err = paths.python + " did not import torch within 300 s";
    } else if (j.is_object() && j.contains("error") && j["error"].is_string()) {
      a.err = j["error"].get<std::string>();
    } else if (!j.is_object() || run.exit_code != 0 || !j.contains("torch")) {
      std::string tail = run.err.size() > 2000 ? run.err.substr(run.err.size() - 2000) : run.err;
      a.err = paths.python + " " + paths.script + " check exited " + std::to_string(run.exit_code) + ": " + tail;
    } else {
      a.ok = true;
      a.check.python = j.value("python", paths.python);
      a.check.torch_version = j.value("torch", "");
      a.check.cuda = j.value("cuda", false);
    }
    it = answers.emplace(key, a).first;
  }
  if (!it->second.ok) return *err = it->second.err, false;
  *out = it->second.check;
  return true;
}

std::string ProblemError::str() const {
  return file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + message;
}

bool FindTorchHelper(TorchHelperPaths* paths, std::string* err) {
  const char* py = std::getenv("FORGEK_PYTHON");
  if (py && *py) {
    paths->python = py;
    if (!IsExecutable(paths->python))
      return *err = "FORGEK_PYTHON=" + paths->python + " is not an executable file", false;
  } else {
    paths->python = PickPython();
    if (paths->python.empty())
      return *err = "no python3 found (neither one in PATH nor /usr/bin/python3): install python3 and python3-torch "
                    "(scripts/install-deps.sh) or set FORGEK_PYTHON",
             false;
  }
  const char* script = std::getenv("FORGEK_TORCH_HELPER");
  if (script && *script) {
    paths->script = script;
  } else {
    std::string dir = FindDataDir("scripts", nullptr);
    paths->script = dir.empty() ? "" : dir + "/forgek_torch_helper.py";
  }
  if (paths->script.empty() || !fs::is_regular_file(paths->script))
    return *err = "forgek_torch_helper.py not found (" + (paths->script.empty() ? std::string("no scripts folder") : paths->script) +
                  "): set FORGEK_TORCH_HELPER to its path",
           false;
  return true;
}

namespace {

// Runs the helper's `command FILE [--sizes ...]` in a fresh process and reads its one JSON answer;
// false with the refusal it answered (located in FILE where it says) or what went wrong running it.
// `doing` names the work for a timeout ("describing it").
bool AskHelper(const TorchHelperPaths& paths, const std::string& command, const std::string& file,
               const std::map<std::string, int64_t>& sizes, double timeout_s, const std::string& doing, json* answer,
               ProblemError* error) {
  error->file = file;
  std::vector<std::string> argv = {paths.python, paths.script, command, file};
  if (!sizes.empty()) argv.insert(argv.end(), {"--sizes", SizesArg(sizes)});
  ProcessOutput run = RunProcess(argv, timeout_s);
  if (!run.started) return error->message = "could not start " + paths.python + ": " + run.err, false;
  if (run.timed_out) return error->message = doing + " took longer than " + std::to_string(int(timeout_s)) + " s", false;
  json j = ParseJsonLenient(run.out);
  if (j.is_discarded() || !j.is_object()) {
    std::string tail = run.err.size() > 2000 ? run.err.substr(run.err.size() - 2000) : run.err;
    return error->message = "the torch helper (" + paths.python + " " + paths.script + ") exited " +
                            std::to_string(run.exit_code) + " without an answer: " + tail,
           false;
  }
  if (auto e = j.find("error"); e != j.end()) {
    error->message = e->is_string() ? e->get<std::string>() : e->dump();
    auto line = j.find("line");
    error->line = line != j.end() && line->is_number_integer() ? line->get<int>() : 0;
    return false;
  }
  *answer = std::move(j);
  return true;
}

}  // namespace

bool WriteElementwiseSeed(const TorchHelperPaths& paths, const std::string& file,
                          const std::map<std::string, int64_t>& sizes, double timeout_s, std::string* source,
                          ProblemError* error) {
  json j;
  if (!AskHelper(paths, "seed", file, sizes, timeout_s, "writing its seed", &j, error)) return false;
  auto seed = j.find("seed");
  if (seed == j.end() || !seed->is_string() || seed->get<std::string>().empty())
    return error->message = "the torch helper's answer has no seed", false;
  *source = seed->get<std::string>();
  return true;
}

bool DescribeKernelBench(const TorchHelperPaths& paths, const std::string& file,
                         const std::map<std::string, int64_t>& sizes, double timeout_s,
                         KernelBenchProblem* problem, ProblemError* error) {
  json j;
  if (!AskHelper(paths, "describe", file, sizes, timeout_s, "describing it", &j, error)) return false;
  try {
    problem->file = j.at("file").get<std::string>();
    problem->params = j.at("params").get<std::vector<std::string>>();
    problem->config = j.at("config").get<std::map<std::string, int64_t>>();
    problem->fixed = j.value("fixed", json::object());
    problem->kind = j.value("kind", "kernelbench");
    problem->scalars = j.value("scalars", json::array());
    problem->max_abs = j.value("max_abs", std::map<std::string, double>());
    problem->magnitude_at = j.value("magnitude_at", "");
    problem->torch_version = j.value("torch", "");
    for (const json& t : j.at("tensors")) {
      ProblemTensor p;
      p.name = t.at("name").get<std::string>();
      p.role = t.at("role").get<std::string>();
      p.dtype = t.at("dtype").get<std::string>();
      for (const json& d : t.at("shape")) p.shape.push_back(d.is_string() ? d.get<std::string>() : d.dump());
      p.init = t.value("init", json());
      p.state_key = t.value("state_key", "");
      problem->tensors.push_back(std::move(p));
    }
  } catch (const json::exception& e) {
    return error->message = std::string("the torch helper's answer is malformed: ") + e.what(), false;
  }
  return true;
}

int TorchWireDtypeSize(const std::string& dtype) {
  static const std::map<std::string, int> sizes = {{"f64", 8}, {"f32", 4}, {"f16", 2}, {"bf16", 2}, {"i8", 1},
                                                   {"u8", 1},  {"i32", 4}, {"i64", 8}, {"bool", 1}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

bool EncodeTorchMessage(const std::string& op, const std::vector<TorchTensor>& tensors, std::string* out,
                        std::string* err) {
  return EncodeTorchRequest(json{{"op", op}}, tensors, out, err);
}

bool EncodeTorchRequest(const json& header, const std::vector<TorchTensor>& tensors, std::string* out,
                        std::string* err) {
  json metas = json::array();
  for (const TorchTensor& t : tensors) {
    if (!CheckWireLayout(t.name, t.dtype, t.shape, t.bytes.size(), err)) return false;
    metas.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"nbytes", t.bytes.size()}});
  }
  json h = header;
  h["tensors"] = metas;
  *out = h.dump() + "\n";
  for (const TorchTensor& t : tensors) *out += t.bytes;
  return true;
}

bool DeviceTensorsJson(const std::vector<TorchDeviceTensor>& tensors, json* out, std::string* err) {
  *out = json::array();
  for (const TorchDeviceTensor& t : tensors) {
    if (t.nbytes < 0) return *err = "tensor " + t.name + ": a negative byte count", false;
    if (!CheckWireLayout(t.name, t.dtype, t.shape, static_cast<uint64_t>(t.nbytes), err)) return false;
    if (t.handle.size() != 64)
      return *err = "tensor " + t.name + ": an IPC handle is 64 bytes, not " + std::to_string(t.handle.size()), false;
    if (t.offset < 0) return *err = "tensor " + t.name + ": a negative offset", false;
    std::string hex;
    for (unsigned char c : t.handle) hex += fmt::format("{:02x}", c);
    out->push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"handle", hex}, {"offset", t.offset},
                    {"nbytes", t.nbytes}});
  }
  return true;
}

TorchServer::~TorchServer() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    Stop();
  }
}

bool TorchServer::Start(const TorchHelperPaths& paths, const std::string& file,
                        const std::map<std::string, int64_t>& sizes, std::string* err) {
  // The helper's stdin is a socket so that writing to it can refuse SIGPIPE (WriteAll).
  int in[2], out[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
    return *err = std::string("socketpair: ") + std::strerror(errno), false;
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return *err = std::string("pipe: ") + std::strerror(errno), false;
  }
  std::vector<std::string> argv = {paths.python, paths.script, "serve"};
  if (!file.empty()) argv.push_back(file);
  if (!sizes.empty()) argv.insert(argv.end(), {"--sizes", SizesArg(sizes)});
  SpawnOptions opts;
  opts.stdin_fd = in[0];
  opts.stdout_fd = out[1];
  bool ok = SpawnProcess(argv, opts, &pid_, err);
  close(in[0]);
  close(out[1]);
  if (!ok) {
    close(in[1]), close(out[0]);
    pid_ = -1;
    return false;
  }
  to_ = in[1];
  from_ = out[0];
  return true;
}

bool TorchServer::Exchange(const std::string& op, const std::vector<TorchTensor>& tensors,
                           std::vector<TorchTensor>* reply, std::string* err) {
  json reply_header;
  return Send(json{{"op", op}}, tensors, reply, &reply_header, err);
}

bool TorchServer::Run(const std::map<std::string, int64_t>& sizes, const std::vector<TorchTensor>& inputs,
                      std::vector<TorchTensor>* reply, TorchRunInfo* info, std::string* err) {
  json header = {{"op", "run"}};
  if (!sizes.empty()) header["sizes"] = sizes;
  json reply_header;
  if (!Send(header, inputs, reply, &reply_header, err)) return false;
  *info = RunInfoOf(reply_header);
  return true;
}

bool TorchServer::RunOnDevice(const std::map<std::string, int64_t>& sizes, const std::vector<TorchDeviceTensor>& inputs,
                              const std::vector<TorchDeviceTensor>& outputs, std::vector<TorchTensor>* written,
                              TorchRunInfo* info, std::string* err) {
  json on_device = json::object();
  if (!DeviceTensorsJson(inputs, &on_device["inputs"], err) || !DeviceTensorsJson(outputs, &on_device["outputs"], err))
    return false;
  json header = {{"op", "run"}, {"on_device", on_device}};
  if (!sizes.empty()) header["sizes"] = sizes;
  json reply_header;
  std::vector<TorchTensor> none;
  if (!Send(header, {}, &none, &reply_header, err)) return false;
  written->clear();
  auto list = reply_header.find("written");
  if (list == reply_header.end()) return *err = "the torch helper's on-device `run` reply lists nothing written", false;
  if (!ParseTensorList(*list, written, err, /*sized=*/false)) return false;  // the bytes stay on the GPU
  *info = RunInfoOf(reply_header);
  return true;
}

bool TorchServer::Time(const std::map<std::string, int64_t>& sizes, const std::vector<TorchTensor>& inputs,
                       int reps, double budget_s, TorchTimeReply* out, std::string* err) {
  json header = {{"op", "time"}, {"reps", reps}, {"budget_s", budget_s}};
  if (!sizes.empty()) header["sizes"] = sizes;
  return TimeRequest(header, inputs, out, err);
}

bool TorchServer::TimeTorchOps(const std::string& name, const json& config, int reps, double budget_s,
                               TorchTimeReply* out, std::string* err) {
  const json header = {{"op", "time"}, {"torch_ops", name}, {"config", config}, {"reps", reps}, {"budget_s", budget_s}};
  return TimeRequest(header, {}, out, err);
}

bool TorchServer::TimeRequest(const json& header, const std::vector<TorchTensor>& inputs, TorchTimeReply* out,
                              std::string* err) {
  json h;
  std::vector<TorchTensor> none;
  if (!Send(header, inputs, &none, &h, err)) return false;
  TorchTimeReply r;
  auto text = [&h](const char* key) {
    auto it = h.find(key);
    return it != h.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  r.device = text("device");
  r.torch_version = text("torch");
  auto timing = h.find("timing");
  if (timing == h.end() || !timing->is_object()) return *err = "the torch helper's `time` reply has no timing", false;
  for (const auto& [mode, v] : timing->items()) {
    if (!v.is_object()) return *err = "timing." + mode + " is not an object", false;
    if (auto e = v.find("error"); e != v.end() && e->is_string()) {
      r.errors[mode] = e->get<std::string>();
      continue;
    }
    auto us = v.find("us");
    if (us == v.end() || !us->is_array()) return *err = "timing." + mode + " has neither us nor error", false;
    std::vector<double>& samples = r.us[mode];
    for (const json& x : *us) {
      if (!x.is_number() || !(x.get<double>() >= 0))
        return *err = "timing." + mode + ".us holds " + x.dump() + ", not a time", false;
      samples.push_back(x.get<double>());
    }
  }
  *out = std::move(r);
  return true;
}

bool TorchServer::Send(const json& header, const std::vector<TorchTensor>& tensors, std::vector<TorchTensor>* reply,
                       json* reply_header, std::string* err) {
  if (pid_ <= 0) return *err = "the torch helper is not running", false;
  std::string msg;
  if (!EncodeTorchRequest(header, tensors, &msg, err) || !WriteAll(to_, msg, err)) return false;
  std::string pending, line;
  if (!ReadFrom(from_, &pending, std::string::npos, &line, err)) return false;
  *reply_header = ParseJsonLenient(line);
  const json& h = *reply_header;
  if (h.is_discarded() || !h.is_object()) return *err = "the torch helper's reply is not JSON: " + line, false;
  // A helper that could not start (no torch) answers its refusal {"error": ...} and exits.
  if (!h.value("ok", false)) {
    auto e = h.find("error");
    return *err = e != h.end() && e->is_string() ? e->get<std::string>() : std::string("no error given"), false;
  }
  reply->clear();
  if (!ParseTensorList(h.value("tensors", json::array()), reply, err)) return false;
  for (TorchTensor& t : *reply)
    if (!ReadFrom(from_, &pending, t.bytes.size(), &t.bytes, err)) return false;
  return true;
}

int TorchServer::Stop() {
  if (pid_ <= 0) return -1;
  if (to_ >= 0) close(to_), to_ = -1;
  pid_t ended = 0;
  int status = 0;
  std::string err;
  int code = WaitForChild(pid_, -1, &ended, &status, &err) ? ExitCodeOf(status) : -1;
  if (from_ >= 0) close(from_), from_ = -1;
  pid_ = -1;
  return code;
}

}  // namespace forgek
