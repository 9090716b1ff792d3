// A scripted stand-in for the GPU worker: times are a function of the kernel's params.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "forgek/core/evaluation.h"
#include "forgek/verdict/verdict.h"

namespace forgek {

// Time of a kernel in microseconds on a config, from its params (library kernels have none).
using TimeModel = std::function<double(const KernelUnderTest& k, const std::string& config)>;

class ScriptedEvaluator : public Evaluator {
 public:
  explicit ScriptedEvaluator(TimeModel model) : model_(std::move(model)) {}

  EvalResult Evaluate(const EvalRequest& req) override {
    requests.push_back(req);
    EvalResult r;
    for (const ConfigSpec& c : req.op->configs) {
      if (!req.configs.empty() && std::find(req.configs.begin(), req.configs.end(), c.name) == req.configs.end())
        continue;
      ConfigResult cr;
      cr.config = c.name;
      double t = model_(req.candidate, c.name);
      if (t < 0) {  // a negative time plants a wrong result
        r.outcome = Outcome::wrong;
        r.detail = "config " + c.name + ": 12 elements differ";
        return r;
      }
      cr.correctness.ok = true;
      if (!req.time) {  // correctness only: nothing timed, no incumbent
        r.configs.push_back(cr);
        continue;
      }
      cr.candidate.median_us = t;
      cr.candidate.rel_noise = 0.005;
      cr.incumbent.median_us = model_(req.incumbent, c.name);
      cr.incumbent.rel_noise = 0.005;
      cr.speedup = cr.incumbent.median_us / t;
      cr.sol_us = 10;
      cr.sol_pct = 100 * cr.sol_us / t;
      r.configs.push_back(cr);
    }
    if (!req.time) {  // correctness only, as the worker evaluator ends such a request
      r.outcome = Outcome::correct;
      return r;
    }
    JudgeTimed(&r);  // the worker evaluator's rule
    r.wall_s = reported_wall_s;
    return r;
  }
  bool Profile(const ProfileRequest& req, std::vector<KernelProfile>* out, std::string* err) override {
    profile_requests.push_back(req);
    if (!profile_error.empty()) return *err = profile_error, false;
    for (const ConfigSpec& c : req.op->configs) {
      if (!req.configs.empty() && std::find(req.configs.begin(), req.configs.end(), c.name) == req.configs.end())
        continue;
      KernelProfile p;
      p.config = c.name;
      KernelLaunchRecord l;
      l.name = "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT";
      l.grid[0] = 2;
      l.grid[1] = 66;
      l.block[0] = 384;
      l.cluster[0] = 2;
      l.cluster[1] = l.cluster[2] = 1;
      l.registers_per_thread = 168;
      l.dynamic_smem_bytes = 188636;
      p.launches.push_back(l);
      p.time_us = model_(req.kernel, c.name);
      p.wall_s = reported_profile_wall_s;
      out->push_back(p);
    }
    return true;
  }
  std::string DeviceName() const override { return "Scripted GPU"; }

  std::vector<EvalRequest> requests;
  std::vector<ProfileRequest> profile_requests;
  std::string profile_error;  // when set, every Profile fails with it
  double reported_wall_s = 0;  // the wall time each evaluation says it took (none is spent)
  double reported_profile_wall_s = 0;  // the same for each config a profile covers

 private:
  TimeModel model_;
};

}  // namespace forgek
