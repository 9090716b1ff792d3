// What scripts/compare_torch.py measured ("format": "forgek-compare-torch/1"): each sealed operator
// timed against torch eager and torch.compile, read for `forgek report --torch` to show beside the seal.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace forgek {

inline constexpr char kTorchCompareFormat[] = "forgek-compare-torch/1";

// One config as the script timed it. Times are medians in microseconds and noises relative (half
// the p10-p90 spread over the median), as forgek's worker counts them; 0 means not measured.
struct TorchConfig {
  std::string config;
  double seal_us = 0, seal_noise = 0;
  double eager_us = 0, eager_noise = 0;
  double compile_us = 0, compile_noise = 0;
  // torch's time over the seal's, as the file says: above 1 the seal is faster.
  double speedup_vs_eager = 0, speedup_vs_compile = 0;
  std::optional<bool> correct;  // the seal's outputs against the truth; none when not checked
  std::string status, note;     // "compared", "not compared", "failed"; why, where it says
};

struct TorchOperator {
  std::string op;
  std::string seal;  // the seal compared, "" when there was none
  std::string status, note;
  std::vector<TorchConfig> configs;
};

// Where a comparison came from and how it was made.
struct TorchSource {
  std::string file, device, torch_version, date, method;
};

struct TorchComparison {
  TorchSource source;
  std::vector<TorchOperator> operators;
};

// What a config row of the report shows of a comparison.
struct TorchBeside {
  std::string file;  // the comparison it comes from (TorchSource::file)
  std::string seal;  // the seal the comparison timed
  TorchConfig numbers;
  std::string note;  // "compared seal <id>, not the newest" when that is not the report's seal
  // Timed by a run's yardstick stage (docs/importing.md) rather than read from a comparison file;
  // a file given to `report --torch` replaces it.
  bool from_run = false;
};

// Parses the text of `file` (named in every message, with the field: "r.json: operators[0].configs[1]
// .eager_us: ..."). Anything not as compare_torch.py writes it is refused: not JSON, another format
// tag, a missing field, a field of another type, a time that is not a positive number, an operator
// or a config twice. Never throws; `out` is untouched on failure.
bool ParseTorchComparison(std::string_view text, const std::string& file, TorchComparison* out, std::string* err);

// Reads and parses the file at `path` (a regular file within the JSON size limit).
bool ReadTorchComparison(const std::string& path, TorchComparison* out, std::string* err);

}  // namespace forgek
