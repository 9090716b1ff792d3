// `forgek doctor`: checks the toolkit, libraries, folders, LLM settings and GPU a run depends on.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "forgek/core/json_parse.h"
#include "forgek/core/url_text.h"
#include "commands.h"
#include "forgek/run/driver_version.h"
#include "gpu_session.h"
#include "forgek/run/calibration.h"
#include "forgek/cuda/library_reference.h"
#include "forgek/knowledge/store.h"
#include "forgek/compile/compile.h"
#include "forgek/core/paths.h"
#include "forgek/core/subprocess.h"
#include "forgek/protocol/worker_protocol.h"

namespace forgek::cli {
namespace {
namespace fs = std::filesystem;

struct Check {
  std::string what;
  bool ok = false;
  std::string detail;  // for a failure: what is wrong and what to do
};

// ---- running `forgek worker ...` without opening a CUDA context here ----

// The last line of `text` that parses as a JSON object (logs may precede it).
bool LastJsonLine(const std::string& text, nlohmann::json* out) {
  std::istringstream in(text);
  std::string line;
  bool found = false;
  while (std::getline(in, line)) {
    nlohmann::json j = ParseJsonLenient(line);
    if (!j.is_discarded() && j.is_object()) {
      *out = std::move(j);
      found = true;
    }
  }
  return found;
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "(no output)" : line;
}

// Why a worker run gave no usable answer, in words a user can act on.
std::string ChildFailure(const std::string& what, const ProcessOutput& c, double timeout_s) {
  if (!c.started) return "could not start `" + what + "`";
  if (c.timed_out) return "`" + what + "` did not answer within " + std::to_string(static_cast<int>(timeout_s)) +
                          " s (a hung driver or GPU?)";
  return "`" + what + "` failed (exit " + std::to_string(c.exit_code) + "): " + FirstLine(c.err.empty() ? c.out : c.err);
}

// ---- formatting ----

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Gib(int64_t bytes) { return Fixed(static_cast<double>(bytes) / (1 << 30), 0) + " GiB"; }
std::string Mib(int64_t bytes) { return Fixed(static_cast<double>(bytes) / (1 << 20), 0) + " MiB"; }

// "130100" style (major*10000 + minor*100 + patch) as "13.1.0".
std::string DottedVersion(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

// ---- the checks ----

Check CheckToolkit() {
  Check c{"cuda toolkit"};
  std::string root = FORGEK_CUDA_ROOT;
  std::vector<std::string> missing;
  for (const char* header : {"include/cuda.h", "include/cuda_bf16.h", "include/nvrtc.h", "include/cccl/cuda/barrier"})
    if (!fs::exists(fs::path(root) / header)) missing.push_back(header);
  if (!missing.empty()) {
    c.detail = root + " lacks " + missing.front() +
               ": install the CUDA 13 toolkit there or rebuild forgek with -DFORGEK_CUDA_ROOT=<toolkit>";
    return c;
  }
  std::ifstream cuda_h(fs::path(root) / "include/cuda.h");
  std::string line;
  int version = 0;
  static const std::regex kVersion(R"(^#define CUDA_VERSION (\d+))");
  while (std::getline(cuda_h, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kVersion)) {
      version = std::stoi(m[1]);
      break;
    }
  }
  if (version == 0) {
    c.detail = root + "/include/cuda.h has no CUDA_VERSION: the toolkit looks damaged; reinstall it";
    return c;
  }
  c.ok = true;
  c.detail = root + " (CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10) +
             ", headers and CCCL present)";
  return c;
}

Check CheckNvrtc(const std::string& arch) {
  Check c{"nvrtc"};
  CompilerOptions opts;
  opts.threads = 1;
  Compiler compiler(opts);
  CompileRequest req;
  req.name = "doctor.cu";
  req.arch = arch;
  req.timeout_s = 60;
  req.source =
      "#include <cuda_bf16.h>\n"
      "extern \"C\" __global__ void doctor_axpy(float a, const __nv_bfloat16* x, float* y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] += a * __bfloat162float(x[i]);\n"
      "}\n";
  CompileResult r = compiler.CompileNow(req);
  std::string target;
  ArchToNvrtcTarget(arch, &target);
  if (!r.ok) {
    c.detail = "NVRTC " + Compiler::NvrtcVersion() + " cannot compile a test kernel for " + target + ": " +
               FirstLine(r.Summary()) + " (is " FORGEK_CUDA_ROOT "/lib64 the toolkit forgek was built with?)";
    return c;
  }
  c.ok = true;
  int abi = CompileConfinementAbi();
  c.detail = Compiler::NvrtcVersion() + ", compiled a test kernel for " + target + " in " + Fixed(r.seconds, 2) + " s" +
             (abi > 0 ? " in a child confined by Landlock (ABI " + std::to_string(abi) + ")"
                      : " in an UNCONFINED child (no Landlock here; FORGEK_UNCONFINED_COMPILE=1)");
  return c;
}

Check CheckCupti() {
  Check c{"cupti"};
  void* handle = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    c.detail = std::string("libcupti.so.13 not loadable (") + (why ? why : "unknown") +
               "): profiling needs it; add " FORGEK_CUDA_ROOT "/lib64 (or extras/CUPTI/lib64) to the loader path";
    return c;
  }
  dlclose(handle);
  c.ok = true;
  c.detail = "libcupti.so.13 loadable";
  return c;
}

// A vendor library must be the major version forgek was built against.
Check CheckLibrary(const LoadedLibrary& lib) {
  Check c{lib.check};
  if (static_cast<int>(lib.loaded_version / 10000) != lib.built_major) {
    c.detail = lib.name + " " + DottedVersion(lib.loaded_version) + " is loaded but forgek was built against " +
               std::to_string(lib.built_major) + ".x: put the matching " + lib.file + " first on the loader path";
    return c;
  }
  c.ok = true;
  c.detail = lib.name + " " + DottedVersion(lib.loaded_version);
  return c;
}

// The deepest existing folder on the way to `path` (what creating `path` would need to write).
fs::path ExistingAncestor(fs::path path) {
  std::error_code ec;
  while (!path.empty() && !fs::exists(path, ec)) {
    fs::path parent = path.parent_path();
    if (parent == path) break;
    path = parent;
  }
  return path.empty() ? fs::path(".") : path;
}

// access() says yes to root everywhere (/proc included): create and remove a file to be sure.
bool CanCreateFileIn(const fs::path& dir) {
  std::string probe = (dir / ".forgek-doctor-XXXXXX").string();
  int fd = mkstemp(probe.data());
  if (fd < 0) return false;
  close(fd);
  std::remove(probe.c_str());
  return true;
}

Check CheckStore(const std::string& store) {
  Check c{"store"};
  std::error_code ec;
  fs::path path = fs::absolute(store, ec);
  if (fs::exists(path, ec)) {
    if (!fs::is_directory(path, ec) && !fs::is_regular_file(path, ec)) {
      Store special;
      std::string err;
      special.Open(path.string(), &err, StoreMode::existing);  // names what the file is
      c.detail = err;
    } else if (fs::is_directory(path, ec)) {
      c.detail = path.string() + " is a folder: --store / FORGEK_STORE must name a file";
    } else if (access(path.c_str(), R_OK | W_OK) != 0) {
      c.detail = path.string() + " is not readable and writable by this user: fix its permissions or use --store";
    } else {
      // Opened as the commands open it: for writing (run, import) and read-only (list, show).
      Store writable, readable;
      std::string err;
      if (!writable.Open(path.string(), &err, StoreMode::existing) ||
          !readable.Open(path.string(), &err, StoreMode::read_only)) {
        c.detail = err;
        return c;
      }
      c.ok = true;
      c.detail = path.string() + " (exists, " + Fixed(static_cast<double>(fs::file_size(path, ec)) / 1e6, 1) + " MB)";
    }
    return c;
  }
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    // exists() is false for a dangling link or a loop: opening it would fail or create elsewhere.
    Store linked;
    std::string err;
    if (!linked.Open(path.string(), &err, StoreMode::existing) && err.rfind("no knowledge store", 0) != 0) {
      c.detail = err;  // a loop
      return c;
    }
  }
  fs::path ancestor = ExistingAncestor(path.parent_path());
  if (!fs::is_directory(ancestor, ec) || access(ancestor.c_str(), W_OK | X_OK) != 0 || !CanCreateFileIn(ancestor)) {
    c.detail = path.string() + " cannot be created: " + ancestor.string() +
               " is not a writable folder; use --store or FORGEK_STORE to pick another place";
    return c;
  }
  c.ok = true;
  c.detail = path.string() + " (not created yet; " + ancestor.string() + " is writable)";
  return c;
}

Check CheckCacheDir() {
  Check c{"compile cache"};
  std::string dir;
  try {
    dir = CacheDir("nvrtc");  // created private to this user, or refused as the commands refuse it
  } catch (const Failure& f) {
    c.detail = f.what();
    return c;
  }
  std::error_code ec;
  std::string probe = dir + "/.doctor-" + std::to_string(getpid());
  {
    std::ofstream f(probe);
    f << "x";
    if (!f) {
      c.detail = dir + " is not writable: set XDG_CACHE_HOME to a writable folder";
      return c;
    }
  }
  fs::remove(probe, ec);
  c.ok = true;
  c.detail = dir + " writable";
  return c;
}

// Reports which keys are present, never anything about their values.
Check CheckLlm() {
  Check c{"llm"};
  c.ok = true;
  auto is_set = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
  };
  for (const char* key : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}) {
    if (!c.detail.empty()) c.detail += ", ";
    c.detail += std::string(key) + (is_set(key) ? " set" : " not set");
  }
  for (const char* url : {"FORGEK_LLM_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"})
    if (is_set(url)) c.detail += std::string(", ") + url + "=" + RedactUrl(std::getenv(url));
  if (!is_set("OPENAI_API_KEY") && !is_set("ANTHROPIC_API_KEY"))
    c.detail += " (the llm agent needs one; the builtin agent works without)";
  return c;
}

// The compute capability an --arch targets ("9." for sm90).
std::string CcPrefix(const std::string& arch) { return arch == "sm100" ? "10." : "9."; }

Check CheckGpu(const std::string& arch, nlohmann::json* probe_json) {
  Check c{"gpu"};
  constexpr double kTimeoutS = 30;
  std::string self = SelfExecutablePath();
  ProcessOutput out = RunProcess({self, "worker", "--probe"}, kTimeoutS);
  nlohmann::json j;
  if (out.timed_out || !LastJsonLine(out.out, &j)) {
    c.detail = ChildFailure("forgek worker --probe", out, kTimeoutS);
    return c;
  }
  *probe_json = j;
  ProbeResult probe;
  std::string err;
  if (!FromJson(j, &probe, &err)) {
    c.detail = "`forgek worker --probe` answered something unexpected (" + err + "): " + FirstLine(out.out);
    return c;
  }
  if (!probe.ok) {
    c.detail = (probe.error.empty() ? "the worker found no usable GPU" : probe.error) +
               " (use --no-gpu to check the rest on a machine without a GPU)";
    return c;
  }
  if (probe.devices.empty()) {
    c.detail = "the driver reports no CUDA device (check nvidia-smi and CUDA_VISIBLE_DEVICES)";
    return c;
  }
  std::string devices;
  bool arch_matches = false;
  for (const DeviceInfo& d : probe.devices) {
    if (!devices.empty()) devices += "; ";
    devices += "#" + std::to_string(d.index) + " " + d.name + " (cc " + d.cc + ", " + std::to_string(d.sms) +
               " SMs, " + Mib(d.l2_bytes) + " L2, " + Gib(d.memory_bytes) + ")";
    if (d.cc.rfind(CcPrefix(arch), 0) == 0) arch_matches = true;
  }
  if (!arch_matches) {
    c.detail = "no device of compute capability " + CcPrefix(arch) + "x for --arch " + arch + " (found " + devices +
               "): pick the --arch of your GPU";
    return c;
  }
  c.ok = true;
  c.detail = "driver " + DriverDescription(probe.driver_version) + ", " + devices;
  return c;
}

Check CheckCalibration(nlohmann::json* peaks_json) {
  Check c{"calibrate"};
  constexpr double kTimeoutS = 600;
  ProcessOutput out = RunProcess({SelfExecutablePath(), "worker", "--calibrate"}, kTimeoutS);
  nlohmann::json j;
  if (out.timed_out || !LastJsonLine(out.out, &j)) {
    c.detail = ChildFailure("forgek worker --calibrate", out, kTimeoutS);
    return c;
  }
  *peaks_json = j;
  if (!j.value("ok", false)) {
    c.detail = j.value("error", std::string("the worker could not calibrate")) ;
    return c;
  }
  DevicePeaks peaks;
  std::string err;
  if (FromJson(j, &peaks, &err) && !peaks.valid()) err = "no copy_kernel_gbps";
  if (!err.empty()) {
    c.detail = "`forgek worker --calibrate` answered something unexpected (" + err + ")";
    return c;
  }
  c.ok = true;
  c.detail = (peaks.device.empty() ? std::string() : peaks.device + ": ") + "copy kernel " +
             Fixed(peaks.copy_kernel_gbps, 0) + " GB/s, memcpy " + Fixed(peaks.memcpy_gbps, 0) + " GB/s, bf16 " +
             Fixed(peaks.bf16_tflops, 0) + " TFLOP/s, fp16 " + Fixed(peaks.fp16_tflops, 0) + " TFLOP/s, fp8 " +
             Fixed(peaks.fp8_tflops, 0) + " TFLOP/s, tf32 " + Fixed(peaks.tf32_tflops, 0) + " TFLOP/s";
  return c;
}

// Keeps the measured peaks per device in the store: every later run takes its SOL bounds from them.
Check StoreCalibration(const Context& ctx, const nlohmann::json& probe_json, const nlohmann::json& peaks_json) {
  Check c{"store calibration"};
  ProbeResult probe;
  DevicePeaks peaks;
  std::string err;
  if (!FromJson(probe_json, &probe, &err) || probe.devices.empty()) {
    c.detail = "no device from the probe to store the peaks for" + (err.empty() ? "" : ": " + err);
    return c;
  }
  if (!FromJson(peaks_json, &peaks, &err)) {
    c.detail = "peaks unreadable: " + err;
    return c;
  }
  peaks.source = "calibrated";
  Store store;
  if (!store.Open(StorePath(ctx), &err, StoreMode::create) ||
      !store.UpsertDevice(DeviceFromProbe(probe, ctx.arch, peaks), &err)) {
    c.detail = err;
    return c;
  }
  c.ok = true;
  c.detail = "peaks of " + probe.devices.front().name + " stored in " + store.path();
  return c;
}

struct DoctorFlags {
  bool no_gpu = false;
  bool calibrate = false;
};

void RunDoctor(const Context& ctx, const DoctorFlags& flags, int* exit_code) {
  std::vector<Check> checks = {CheckToolkit(), CheckNvrtc(ctx.arch), CheckCupti()};
  for (const LoadedLibrary& lib : LoadedLibraries()) checks.push_back(CheckLibrary(lib));
  Check store{"store"};
  try {
    store = CheckStore(StorePath(ctx));
  } catch (const Failure& f) {  // no home for the default store, or its folder is another user's
    store.detail = f.what();
  }
  for (Check c : {store, CheckCacheDir(), CheckLlm()}) checks.push_back(std::move(c));
  nlohmann::json probe_json, peaks_json;
  if (!flags.no_gpu) checks.push_back(CheckGpu(ctx.arch, &probe_json));
  if (flags.calibrate) {
    checks.push_back(CheckCalibration(&peaks_json));
    if (checks.back().ok) checks.push_back(StoreCalibration(ctx, probe_json, peaks_json));
  }

  int failed = 0;
  for (const Check& c : checks) failed += c.ok ? 0 : 1;
  if (ctx.json) {
    nlohmann::json j = {{"ok", failed == 0}, {"arch", ctx.arch}, {"checks", nlohmann::json::array()}};
    for (const Check& c : checks) j["checks"].push_back({{"name", c.what}, {"ok", c.ok}, {"detail", c.detail}});
    if (!probe_json.is_null()) j["gpu"] = probe_json;
    if (!peaks_json.is_null()) j["calibration"] = peaks_json;
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    for (const Check& c : checks) std::printf("%s %s: %s\n", c.ok ? "OK  " : "FAIL", c.what.c_str(), c.detail.c_str());
    if (flags.no_gpu) std::printf("SKIP gpu: --no-gpu\n");
  }
  std::fflush(stdout);
  if (failed > 0) {
    spdlog::error("{} of {} checks failed", failed, checks.size());
    *exit_code = kExitFailure;
  }
}

}  // namespace

void set_doctor_command(CLI::App& app, Context& ctx) {
  CLI::App* cmd = app.add_subcommand("doctor", "Check the toolkit, libraries, folders, LLM settings and GPU forgek needs");
  auto flags = std::make_shared<DoctorFlags>();
  cmd->add_flag("--no-gpu", flags->no_gpu, "Skip the GPU check (for machines without a GPU, such as CI)");
  cmd->add_flag("--calibrate", flags->calibrate, "Also measure the GPU's copy and GEMM peaks (takes a while)");
  cmd->callback([&ctx, flags] {
    if (flags->no_gpu && flags->calibrate) throw UsageError("doctor: --calibrate needs the GPU; drop --no-gpu");
    RunDoctor(ctx, *flags, &ctx.exit_code);
  });
}

}  // namespace forgek::cli
