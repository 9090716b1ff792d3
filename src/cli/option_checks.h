// Checks of option values that CLI11's own validators let through (nan, inf, huge ranges, '').
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

namespace forgek::cli {

// The most candidates (or the longest patience) one run takes: a bound a person can read.
inline constexpr int kMaxIterations = 1000000;

// A finite number above zero (rejects nan, inf, 0 and negatives).
CLI::Validator FinitePositive();
// A finite number at or above zero.
CLI::Validator FiniteNonNegative();
// A whole number from `min` to `max`, said in words a person reads (not 1.79769e+308).
CLI::Validator WholeNumber(int64_t min, int64_t max);
// A number from `min` to `max`, both included (rejects nan, which passes a plain range check).
CLI::Validator NumberInRange(double min, double max);
// The name of an environment variable: letters, digits and _, not starting with a digit.
CLI::Validator EnvVarName();
// A value that is not empty (an empty path or name means nothing).
CLI::Validator NonEmpty();
// A path naming a regular file; otherwise says what it is (missing, a folder, a device, a FIFO, a
// symbolic link loop, a link to a missing file).
CLI::Validator ReadableFile();
// The syntax of --gpus (all, a count, a list of indices), before any GPU is counted.
CLI::Validator GpuListSyntax();

}  // namespace forgek::cli
