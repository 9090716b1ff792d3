// PyTorch beside a kernel, as JSON and as one line of text.
#include "forgek/report/torch_yardstick.h"

#include <fmt/format.h>

#include "report_build.h"

namespace forgek {
namespace {

nlohmann::json ModeJson(const TimingStats& s, const std::string& error) {
  if (s.samples <= 0) return {{"error", error.empty() ? "not measured" : error}};
  return {{"median_us", s.median_us}, {"p10_us", s.p10_us}, {"p90_us", s.p90_us},
          {"rel_noise", s.rel_noise}, {"samples", s.samples}};
}

std::string ModeText(const char* name, const TimingStats& s, const std::string& error, double kernel_us) {
  if (s.samples <= 0) return fmt::format("{}: {}", name, error.empty() ? "not measured" : error);
  std::string text = fmt::format("{} {:.2f} us ±{:.1f}%", name, s.median_us, s.rel_noise * 100);
  const double speedup = SpeedupOverTorch(s, kernel_us);
  return speedup > 0 ? text + fmt::format(" ({:.3f}x)", speedup) : text;
}

}  // namespace

double SpeedupOverTorch(const TimingStats& torch, double kernel_us) {
  return torch.samples > 0 && torch.median_us > 0 && kernel_us > 0 ? torch.median_us / kernel_us : 0;
}

nlohmann::json TorchYardstickJson(const TorchYardstick& t, double kernel_us) {
  nlohmann::json j = {{"device", t.device},
                      {"torch_version", t.torch_version},
                      {"eager", ModeJson(t.eager, t.eager_error)},
                      {"compile", ModeJson(t.compiled, t.compile_error)}};
  if (double s = SpeedupOverTorch(t.eager, kernel_us); s > 0) j["speedup_vs_eager"] = s;
  if (double s = SpeedupOverTorch(t.compiled, kernel_us); s > 0) j["speedup_vs_compile"] = s;
  return j;
}

std::string TorchYardstickText(const TorchYardstick& t, double kernel_us) {
  return ModeText("eager", t.eager, t.eager_error, kernel_us) + ", " +
         ModeText("torch.compile", t.compiled, t.compile_error, kernel_us);
}

using report_build::NumberAt;
using report_build::StringAt;

TorchBeside TorchBesideOfRun(const nlohmann::json& t, const std::string& config, const std::string& seal,
                             const std::string& source) {
  const nlohmann::json none;
  const nlohmann::json& eager = t.is_object() && t.contains("eager") ? t["eager"] : none;
  const nlohmann::json& compiled = t.is_object() && t.contains("compile") ? t["compile"] : none;
  TorchBeside b;
  b.file = source;
  b.seal = seal;
  b.from_run = true;
  TorchConfig& c = b.numbers;
  c.config = config;
  c.seal_us = NumberAt(t, "kernel_us");
  c.eager_us = NumberAt(eager, "median_us");
  c.eager_noise = NumberAt(eager, "rel_noise");
  c.compile_us = NumberAt(compiled, "median_us");
  c.compile_noise = NumberAt(compiled, "rel_noise");
  c.speedup_vs_eager = NumberAt(t, "speedup_vs_eager");
  c.speedup_vs_compile = NumberAt(t, "speedup_vs_compile");
  c.status = c.eager_us > 0 || c.compile_us > 0 ? "compared" : "not compared";
  if (std::string e = StringAt(eager, "error"); !e.empty()) c.note = "eager: " + e;
  if (std::string e = StringAt(compiled, "error"); !e.empty())
    c.note += (c.note.empty() ? "" : "; ") + std::string("torch.compile: ") + e;
  if (std::string k = StringAt(t, "kernel"); k == "incumbent")
    c.note += (c.note.empty() ? "" : "; ") + std::string("beside the incumbent (the run sealed nothing)");
  return b;
}

}  // namespace forgek
