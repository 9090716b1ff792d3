// PyTorch beside a kernel: the yardstick's times (eager, torch.compile) and the kernel's speedup
// against each, as a run's summary, eval's table and the scoreboard print them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "forgek/core/evaluation.h"
#include "forgek/report/torch_compare.h"

namespace forgek {

// torch's median over the kernel's: above 1 the kernel is faster. 0 when either is unknown.
double SpeedupOverTorch(const TimingStats& torch, double kernel_us);

// {"device", "torch_version", "eager": {median_us, p10_us, p90_us, rel_noise, samples} or
// {"error"}, "compile": the same, "speedup_vs_eager", "speedup_vs_compile"} (speedups only where
// both times are known). kernel_us: the kernel's median on that config.
nlohmann::json TorchYardstickJson(const TorchYardstick& t, double kernel_us);

// One line: "eager 41.2 us ±1.1% (1.52x), torch.compile 30.8 us ±0.9% (1.14x)"; a mode that did
// not run shows its reason instead.
std::string TorchYardstickText(const TorchYardstick& t, double kernel_us);

// The "torch" object of a run summary's config (TorchYardstickJson with "kernel_us") as the
// report's tables hold PyTorch beside a kernel; `source` names where it came from ("run 1a2b3c").
TorchBeside TorchBesideOfRun(const nlohmann::json& torch, const std::string& config, const std::string& seal,
                             const std::string& source);

}  // namespace forgek
