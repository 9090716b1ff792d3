// The store's ISO-8601 UTC times ("2026-11-29T15:40:00Z") as seconds, for the plots' time axes.
#pragma once

#include <string>

namespace forgek::report_time {

// Seconds since 1970 of "YYYY-MM-DDTHH:MM:SS[.fff]Z" (a date alone is midnight); false for
// anything else.
bool ParseIso(const std::string& text, double* seconds);

// "YYYY-MM-DD", or "MM-DD HH:MM" with `with_time`, of `seconds` since 1970 (UTC).
std::string FormatDate(double seconds, bool with_time);

}  // namespace forgek::report_time
