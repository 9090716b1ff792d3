// The Evaluator backed by a GPU worker process: per-config requests, outcomes, SOL, respawn.
#include <chrono>
#include <cmath>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "forgek/protocol/timing_stats.h"
#include "forgek/verdict/verdict.h"
#include "forgek/eval/worker_client.h"

namespace forgek {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<uint64_t> FreshSeeds(int n) {
  std::random_device rd;
  std::vector<uint64_t> seeds;
  for (int i = 0; i < std::max(n, 1); ++i) seeds.push_back((uint64_t(rd()) << 32) ^ rd());
  return seeds;
}


bool EvalFormula(const std::string& text, const char* field, const OperatorSpec& op, const ConfigSpec& c,
                 double* out, std::string* err) {
  if (text.empty()) return *out = 0, true;
  int64_t v = 0;
  Diagnostic d;
  if (!EvalExpression(text, c.values, &v, &d)) {
    *err = op.path + ": " + field + ": " + d.message;
    return false;
  }
  *out = static_cast<double>(v);
  return true;
}

bool ReplyOk(const WorkerClient::Reply& r) {
  return r.status == WorkerClient::Status::ok && BoolField(r.body, "ok", false);
}

std::string CallFailure(const WorkerClient::Reply& r) {
  if (r.status != WorkerClient::Status::ok) return r.detail;
  return StringField(r.body, "error", "worker refused the request");
}

}  // namespace

bool MakeWireConfig(const OperatorSpec& op, const ConfigSpec& config, WireConfig* out, std::string* err) {
  WireConfig w;
  w.op = op.name;
  w.name = config.name;
  w.values = config.values;
  w.scalars = op.scalars;
  w.tolerance = op.tolerance;
  for (const TensorSpec& t : op.tensors) {
    WireTensor wt;
    wt.name = t.name;
    wt.role = t.role;
    wt.dtype = t.dtype;
    wt.init = t.init;
    Diagnostic d;
    if (!op.TensorShape(t, config.values, &wt.shape, &d)) {
      *err = d.str();
      return false;
    }
    if (!t.init.hi_expr.empty()) {
      int64_t hi = 0;
      if (!EvalExpression(t.init.hi_expr, config.values, &hi, &d)) {
        *err = op.path + ": tensors." + t.name + ".init.hi: " + d.message;
        return false;
      }
      wt.init.hi = static_cast<double>(hi);
    }
    if (!t.init.total_expr.empty() &&
        !EvalExpression(t.init.total_expr, config.values, &wt.init.total, &d)) {
      *err = op.path + ": tensors." + t.name + ".init.total: " + d.message;
      return false;
    }
    w.tensors.push_back(std::move(wt));
  }
  *out = std::move(w);
  return true;
}

bool MakeWireKernel(const KernelUnderTest& k, const OperatorSpec& op, const ConfigSpec& config, int64_t num_sms,
                    WireKernel* out, std::string* err) {
  WireKernel w;
  w.label = k.label;
  if (!k.torch_file.empty()) {
    w.torch_file = k.torch_file;  // the worker's torch helper computes it at the config's values
  } else if (!k.library.empty()) {
    w.library = k.library;
  } else {
    if (k.cubin.empty()) {
      *err = k.label + ": no cubin (compile it first)";
      return false;
    }
    std::string why;
    if (!ConstraintsHold(k.manifest, k.params, config.values, num_sms, &why)) {
      *err = k.label + " does not support config " + config.name + ": " + why;
      return false;
    }
    Diagnostics diags;
    if (!ResolveCandidate(k.manifest, op, k.params, config.values, num_sms, &w.launch, &diags)) {
      *err = k.label + " on config " + config.name + ": " + FormatDiagnostics(diags);
      return false;
    }
    w.cubin_b64 = Base64Encode(k.cubin);
  }
  *out = std::move(w);
  return true;
}

WorkerEvaluator::WorkerEvaluator(WorkerEvaluatorOptions opts)
    : opts_(std::move(opts)), client_(opts_.command), peaks_(opts_.peaks) {}

bool WorkerEvaluator::Probe(ProbeResult* out, std::string* err) {
  WorkerClient::Reply r = client_.Call("hello", {}, opts_.hello_deadline_s);
  if (r.status != WorkerClient::Status::ok) return *err = r.detail, false;
  if (!FromJson(r.body, out, err)) return false;
  if (!out->ok) return *err = out->error, false;
  if (!out->devices.empty()) device_sms_ = out->devices.front().sms;
  return true;
}

bool WorkerEvaluator::DeviceSms(int64_t* out, std::string* err) {
  if (device_sms_ <= 0) {
    ProbeResult probe;
    if (!Probe(&probe, err)) return *err = "the worker did not describe its device: " + *err, false;
    if (device_sms_ <= 0) return *err = "the worker reports no device (num_sms unknown)", false;
  }
  *out = device_sms_;
  return true;
}

bool WorkerEvaluator::Peaks(DevicePeaks* out, std::string* err) {
  if (!peaks_.valid()) {
    WorkerClient::Reply r = client_.Call("calibrate", {}, opts_.calibrate_deadline_s);
    if (!ReplyOk(r)) return *err = "calibration failed: " + CallFailure(r), false;
    if (!FromJson(r.body.value("peaks", nlohmann::json::object()), &peaks_, err)) return false;
    if (!peaks_.valid()) return *err = "calibration reported no bandwidth peak (copy_kernel_gbps)", false;
  }
  *out = peaks_;
  return true;
}

EvalResult WorkerEvaluator::Evaluate(const EvalRequest& req) {
  auto start = Clock::now();
  EvalResult result;
  auto finish = [&](Outcome o, std::string detail) {
    result.outcome = o;
    result.detail = std::move(detail);
    result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
  };
  if (!req.op) return finish(Outcome::launch_error, "no operator given");
  const OperatorSpec& op = *req.op;
  if (op.tolerance.check != "elementwise")
    return finish(Outcome::launch_error, "operator " + op.name + ": tolerance.check \"" + op.tolerance.check +
                                             "\" is not supported by this worker (only elementwise comparison)");
  const bool timed = req.time;
  const bool has_incumbent = !(req.incumbent.library.empty() && req.incumbent.cubin.empty());
  DevicePeaks peaks;
  std::string err;
  if (req.time && !Peaks(&peaks, &err)) return finish(Outcome::crash, err);

  std::vector<const ConfigSpec*> configs;
  if (req.configs.empty()) {
    for (const ConfigSpec& c : op.configs) configs.push_back(&c);
  } else {
    for (const std::string& name : req.configs) {
      const ConfigSpec* c = op.FindConfig(name);
      if (!c) return finish(Outcome::launch_error, "operator " + op.name + " has no config '" + name + "'");
      configs.push_back(c);
    }
  }
  int64_t num_sms = 0;
  if (!DeviceSms(&num_sms, &err)) return finish(Outcome::crash, err);

  for (const ConfigSpec* config : configs) {
    EvaluateCommand cmd;
    cmd.time = timed;
    if (timed) cmd.torch_yardstick = req.torch_yardstick;
    cmd.policy = opts_.policy;
    cmd.seeds = FreshSeeds(req.seeds);
    if (!MakeWireConfig(op, *config, &cmd.config, &err)) return finish(Outcome::launch_error, err);
    if (!MakeWireKernel(req.golden, op, *config, num_sms, &cmd.golden, &err))
      return finish(Outcome::launch_error, "golden: " + err);
    if (!MakeWireKernel(req.candidate, op, *config, num_sms, &cmd.candidate, &err)) return finish(Outcome::launch_error, err);
    if (has_incumbent && !MakeWireKernel(req.incumbent, op, *config, num_sms, &cmd.incumbent, &err))
      return finish(Outcome::launch_error, "incumbent: " + err);
    if (cmd.golden.label.empty()) cmd.golden.label = "golden";
    if (cmd.candidate.label.empty()) cmd.candidate.label = "candidate";
    if (cmd.incumbent.label.empty()) cmd.incumbent.label = "incumbent";

    WorkerClient::Reply r = client_.Call("evaluate", ToJson(cmd), req.deadline_s);
    const std::string where = "config " + config->name;
    Outcome failed = Outcome::crash;
    if (WorkerFailure(r.status, ReplyStatus::ok, &failed)) return finish(failed, where + ": " + r.detail);
    EvaluateReply reply;
    Outcome malformed = Outcome::crash;  // a reply that breaks the protocol counts as a protocol_error
    WorkerFailure(WorkerClient::Status::protocol_error, ReplyStatus::error, &malformed);
    if (!BoolField(r.body, "ok", false) && !r.body.contains("status"))
      return finish(malformed, where + ": worker error: " + StringField(r.body, "error", "?"));
    if (!FromJson(r.body, &reply, &err)) return finish(malformed, where + ": malformed worker reply: " + err);
    std::string who = reply.failed_kernel.empty() ? "" : " (" + reply.failed_kernel + ")";
    if (WorkerFailure(r.status, reply.status, &failed)) {
      if (failed != Outcome::crash) return finish(failed, where + who + ": " + reply.error);
      client_.Kill();  // it exits by itself after a sticky error; make sure before the next request
      return finish(failed, where + who + ": " + reply.cuda_error + ": " + reply.error);
    }

    ConfigResult cr;
    cr.config = config->name;
    cr.correctness = reply.correctness;
    cr.golden = reply.golden;
    cr.torch = reply.torch;
    if (reply.golden.seeds > 0)
      spdlog::info("{}: the PyTorch golden ({}, {}) took {:.1f} ms per seed ({:.1f} ms {}, {:.1f} ms torch)",
                   where, reply.golden.device, reply.golden.transport, reply.golden.total_ms / reply.golden.seeds,
                   reply.golden.copy_ms / reply.golden.seeds,
                   reply.golden.transport == "cuda_ipc" ? "mapping" : "device copies",
                   reply.golden.compute_ms / reply.golden.seeds);
    if (!reply.correctness.ok) {
      result.configs.push_back(cr);
      return finish(Outcome::wrong, where + ": " + reply.correctness.detail);
    }
    if (!reply.audit_ok) {
      result.configs.push_back(cr);
      return finish(Outcome::wrong, where + ": right when checked but wrong when timed (audited launch): " +
                                        reply.audit_detail);
    }
    if (reply.timed) {
      cr.candidate = reply.candidate;
      cr.incumbent = reply.incumbent;
      cr.paired = reply.paired;
      double flops = 0, bytes = 0;
      if (!EvalFormula(op.flops, "flops", op, *config, &flops, &err) ||
          !EvalFormula(op.bytes, "bytes", op, *config, &bytes, &err))
        return finish(Outcome::launch_error, err);
      const double median = cr.candidate.median_us;
      auto pct = [&](double bound_us) { return median > 0 ? bound_us / median * 100 : 0; };
      cr.roofline_us = SolMicros(flops, bytes, peaks.TflopsFor(op.ComputeDType()), peaks.BandwidthGbps());
      cr.floor_us = peaks.launch_floor_us;
      cr.sol_us = BoundMicros(cr.roofline_us, cr.floor_us);
      cr.sol_pct = pct(cr.sol_us);
      const DevicePeaks& sheet = opts_.datasheet;
      if (sheet.valid()) {
        cr.datasheet_sol_us =
            BoundMicros(SolMicros(flops, bytes, sheet.TflopsFor(op.ComputeDType()), sheet.BandwidthGbps()), cr.floor_us);
        cr.datasheet_sol_pct = pct(cr.datasheet_sol_us);
      }
      cr.speedup = has_incumbent && median > 0 ? cr.incumbent.median_us / median : 0;
      result.configs.push_back(cr);
      // Only the roofline judges what is possible: the floor is a measurement, not a law.
      if (FasterThanPossible(median, cr.roofline_us))
        return finish(Outcome::wrong, fmt::format("{}: measured {:.3f} us is below the speed-of-light bound {:.3f} us "
                                                  "({:.0f}% of SOL): impossible, the kernel skips work or fools the timer",
                                                  where, median, cr.roofline_us, pct(cr.roofline_us)));
    } else {
      result.configs.push_back(cr);
    }
  }
  if (!timed || !has_incumbent)
    return finish(Outcome::correct, "correct on every config; not timed against an incumbent");
  JudgeTimed(&result);
  return finish(result.outcome, result.detail);
}

bool WorkerEvaluator::Profile(const ProfileRequest& req, std::vector<KernelProfile>* out, std::string* err) {
  if (!req.op) return *err = "no operator given", false;
  const OperatorSpec& op = *req.op;
  std::vector<const ConfigSpec*> configs;
  if (req.configs.empty()) {
    for (const ConfigSpec& c : op.configs) configs.push_back(&c);
  } else {
    for (const std::string& name : req.configs) {
      const ConfigSpec* c = op.FindConfig(name);
      if (!c) return *err = "operator " + op.name + " has no config '" + name + "'", false;
      configs.push_back(c);
    }
  }
  int64_t num_sms = 0;
  if (!DeviceSms(&num_sms, err)) return false;
  std::vector<KernelProfile> profiles;
  const auto profile_start = std::chrono::steady_clock::now();
  for (const ConfigSpec* config : configs) {
    const std::string where = "config " + config->name;
    double bound_left = 0;  // 0: unbounded
    if (req.bound_s > 0) {
      bound_left = req.bound_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - profile_start).count();
      if (bound_left <= 0)
        return *err = where + ": not profiled within the profile's bound of " + fmt::format("{:.1f}", req.bound_s) + " s",
               false;
    }
    ProfileCommand cmd;
    cmd.metrics = req.metrics;
    cmd.seed = FreshSeeds(1)[0];
    if (!MakeWireConfig(op, *config, &cmd.config, err) || !MakeWireKernel(req.kernel, op, *config, num_sms, &cmd.kernel, err))
      return false;
    if (cmd.kernel.label.empty()) cmd.kernel.label = "kernel";
    const auto call_start = std::chrono::steady_clock::now();
    WorkerClient::Reply r = client_.Call("profile", ToJson(cmd), opts_.profile_deadline_s, bound_left);
    const double call_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count();
    if (r.status != WorkerClient::Status::ok) return *err = where + ": " + r.detail, false;
    ProfileReply reply;
    if (!r.body.contains("status"))
      return *err = where + ": worker error: " + StringField(r.body, "error", "?"), false;
    if (!FromJson(r.body, &reply, err)) return *err = where + ": malformed worker reply: " + *err, false;
    Outcome failed = Outcome::crash;
    if (WorkerFailure(r.status, reply.status, &failed)) {
      if (failed == Outcome::crash) client_.Kill();  // it exits after a sticky error; make sure
      return *err = where + ": " + (reply.cuda_error.empty() ? "" : reply.cuda_error + ": ") + reply.error, false;
    }
    if (!reply.metrics_error.empty()) spdlog::warn("{} on {}: {}", cmd.kernel.label, config->name, reply.metrics_error);

    KernelProfile p;
    p.label = req.kernel.label;
    p.config = config->name;
    p.launches = std::move(reply.launches);
    p.metrics = std::move(reply.metrics);
    p.time_us = reply.time_us;
    p.wall_s = call_s;
    if (!EvalFormula(op.flops, "flops", op, *config, &p.flops, err) ||
        !EvalFormula(op.bytes, "bytes", op, *config, &p.bytes, err))
      return false;
    profiles.push_back(std::move(p));
  }
  *out = std::move(profiles);
  return true;
}

}  // namespace forgek
