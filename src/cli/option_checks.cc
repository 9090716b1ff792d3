// Option-value checks: each returns "" for a good value, else what is wrong with it.
#include "option_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "forgek/run/gpu_list.h"
#include "forgek/core/paths.h"

namespace forgek::cli {
namespace {

// The largest device index --gpus accepts before the host is asked how many it has.
constexpr int kMaxGpuIndex = 1024;

bool ParseNumber(const std::string& text, double* v) {
  char* end = nullptr;
  errno = 0;
  *v = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

}  // namespace

CLI::Validator FinitePositive() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        if (!ParseNumber(s, &v) || !std::isfinite(v) || v <= 0) return "'" + s + "' is not a finite number above 0";
        return "";
      },
      "POSITIVE");
}

CLI::Validator FiniteNonNegative() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        if (!ParseNumber(s, &v) || !std::isfinite(v) || v < 0) return "'" + s + "' is not a finite number, 0 or more";
        return "";
      },
      "NON-NEGATIVE");
}

CLI::Validator WholeNumber(int64_t min, int64_t max) {
  std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || v < min || v > max)
          return "'" + s + "' is not a whole number from " + range;
        return "";
      },
      "INT in " + range);
}

CLI::Validator NumberInRange(double min, double max) {
  std::string range = fmt::format("{:g} to {:g}", min, max);
  return CLI::Validator(
      [min, max, range](std::string& s) -> std::string {
        double v = 0;
        if (!ParseNumber(s, &v) || !(v >= min && v <= max)) return "'" + s + "' is not a number from " + range;
        return "";
      },
      "NUMBER in " + range);
}

CLI::Validator EnvVarName() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        auto name_char = [](unsigned char c) { return c < 0x80 && (std::isalnum(c) || c == '_'); };
        bool ok = !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) &&
                  std::all_of(s.begin(), s.end(), [&](char c) { return name_char(static_cast<unsigned char>(c)); });
        if (ok) return "";
        return s.empty() ? std::string("must name an environment variable, not be empty")
                         : "'" + s + "' is not an environment variable name (letters, digits and _, not starting with a digit)";
      },
      "ENV-NAME");
}

CLI::Validator NonEmpty() {
  return CLI::Validator([](std::string& s) -> std::string { return s.empty() ? "must not be empty" : ""; },
                        "NON-EMPTY");
}

CLI::Validator ReadableFile() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        std::string why;
        return IsReadableFile(s, &why) ? std::string() : s + " " + why;
      },
      "FILE");
}

CLI::Validator GpuListSyntax() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        std::vector<int> indices;
        std::string err;
        return ParseGpuList(s, kMaxGpuIndex, &indices, &err) ? "" : err;
      },
      "GPUS");
}

}  // namespace forgek::cli
