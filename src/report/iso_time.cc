// Reading and printing the store's UTC times for the plots' time axes.
#include "iso_time.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace forgek::report_time {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil): no
// time zone and no locale, unlike mktime.
long DaysFromCivil(long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long>(doe) - 719468;
}

bool Digits(const std::string& s, size_t at, size_t n, int* out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

bool ParseIso(const std::string& text, double* seconds) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!Digits(text, 0, 4, &y) || text.size() < 10 || text[4] != '-' || !Digits(text, 5, 2, &mo) || text[7] != '-' ||
      !Digits(text, 8, 2, &d))
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return false;
  if (text.size() > 10) {
    if (text.size() < 19 || (text[10] != 'T' && text[10] != ' ') || !Digits(text, 11, 2, &h) || text[13] != ':' ||
        !Digits(text, 14, 2, &mi) || text[16] != ':' || !Digits(text, 17, 2, &s))
      return false;
    if (h > 23 || mi > 59 || s > 60) return false;
  }
  *seconds = static_cast<double>(DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400.0 +
             h * 3600.0 + mi * 60.0 + s;
  return true;
}

std::string FormatDate(double seconds, bool with_time) {
  if (!std::isfinite(seconds)) return "?";
  std::time_t t = static_cast<std::time_t>(std::floor(seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, with_time ? "%m-%d %H:%M" : "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace forgek::report_time
