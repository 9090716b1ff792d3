// Small helpers the run's stage files share: elapsed seconds and a speedup written to 3 decimals.
#pragma once

#include <chrono>
#include <string>

#include <fmt/format.h>

namespace forgek {

inline double SecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

inline std::string Fmt3(double v) { return fmt::format("{:.3f}", v); }

}  // namespace forgek
