// Reading a number a program printed (printf's %g, Python's str) back in a test, inf and nan included.
#pragma once

#include <cmath>
#include <cstdlib>
#include <istream>
#include <string>

namespace forgek {

// The next whitespace-separated number of `in`: "inf", "-inf" and "nan" included. operator>> fails on
// those and stores 0, so that a check such as EXPECT_LE(max_abs, tol) passed on an infinite error.
// NaN when the next token is missing or not a number, so that every such check fails.
inline double ReadNumber(std::istream& in) {
  std::string token;
  if (!(in >> token)) return std::nan("");
  char* end = nullptr;
  const double v = std::strtod(token.c_str(), &end);
  return end != token.c_str() && *end == '\0' ? v : std::nan("");
}

}  // namespace forgek
