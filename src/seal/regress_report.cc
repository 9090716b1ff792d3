// The printers of a `forgek regress` report (text, JSON, JUnit XML) and its rows of the store's
// nightly history; each reads the same RegressReport.
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "forgek/core/utf8_text.h"
#include "forgek/seal/regress.h"

namespace forgek {
namespace {

const char* StatusName(RegressSealResult::Status s) {
  switch (s) {
    case RegressSealResult::Status::checked: return "checked";
    case RegressSealResult::Status::skipped: return "skipped";
    case RegressSealResult::Status::error: return "error";
  }
  return "error";
}

// One line on a config: what CI shows as the failure message, and the text report's line.
std::string ConfigLine(const RegressConfig& c) {
  switch (c.klass) {
    case RegressClass::wrong:
      return fmt::format("config {}: wrong{}", c.config, c.message.empty() ? "" : " (" + c.message + ")");
    case RegressClass::unmeasured:
      return fmt::format("config {}: {}", c.config, c.message.empty() ? "not measured" : c.message);
    default:
      return fmt::format("config {}: {} the expert reference, {:.3f}x (noise {:.1f}%), now {:.2f} us, "
                         "expert {:.2f} us, sealed {:.2f} us (drift {:+.1f}%)",
                         c.config,
                         c.klass == RegressClass::slower   ? "slower than"
                         : c.klass == RegressClass::faster ? "faster than"
                                                           : "within noise of",
                         c.speedup, 100 * c.noise, c.now_us, c.expert_us, c.sealed_us, 100 * c.drift);
  }
}

std::string Num(double v) { return fmt::format("{:.6g}", v); }

std::string Property(const std::string& name, const std::string& value) {
  return "<property name=\"" + XmlEscape(name) + "\" value=\"" + XmlEscape(value) + "\"/>";
}

}  // namespace

std::string RegressText(const RegressReport& report) {
  std::string out = fmt::format("regress on {} (driver {}, {}), {} seal(s)\n", report.device, report.driver,
                                report.toolchain, report.seals.size());
  for (const RegressSealResult& s : report.seals) {
    const std::string id = s.seal_id.empty() ? "(none)" : s.seal_id.substr(0, 12);
    if (s.status == RegressSealResult::Status::skipped) {
      out += fmt::format("{:<26} {:<14} skipped: {}\n", s.operator_name, id, s.reason);
      continue;
    }
    if (s.status == RegressSealResult::Status::error) {
      out += fmt::format("{:<26} {:<14} ERROR: {}\n", s.operator_name, id, s.reason);
      continue;
    }
    out += fmt::format("{:<26} {:<14} {} ({:.1f} s)\n", s.operator_name, id, s.Regressed() ? "REGRESSION" : "holds",
                       s.wall_s);
    for (const RegressConfig& c : s.configs)
      out += fmt::format("  {:<10} {}\n", RegressClassName(c.klass), ConfigLine(c));
    for (const std::string& line : s.beyond_suite) out += "  " + line + "\n";
  }
  out += fmt::format("{} of {} seal(s) regressed\n", report.Regressions(), report.seals.size());
  return out;
}

std::string RegressJson(const RegressReport& report) {
  nlohmann::json seals = nlohmann::json::array();
  for (const RegressSealResult& s : report.seals) {
    nlohmann::json configs = nlohmann::json::array();
    for (const RegressConfig& c : s.configs)
      configs.push_back({{"config", c.config}, {"class", RegressClassName(c.klass)}, {"correct", c.correct},
                         {"now_us", c.now_us}, {"expert_us", c.expert_us}, {"sealed_us", c.sealed_us},
                         {"speedup_vs_expert", c.speedup}, {"noise", c.noise}, {"drift", c.drift},
                         {"message", c.message}});
    seals.push_back({{"operator", s.operator_name}, {"seal", s.seal_id}, {"status", StatusName(s.status)},
                     {"regressed", s.Regressed()}, {"reason", s.reason}, {"wall_s", s.wall_s},
                     {"configs", configs}, {"beyond_suite", s.beyond_suite},
                     {"beyond_suite_failures", s.beyond_suite_failures}});
  }
  nlohmann::json j = {{"check", report.check_id}, {"started_at", report.started_at}, {"device", report.device},
                      {"driver", report.driver}, {"toolchain", report.toolchain}, {"arch", report.arch},
                      {"threshold", report.threshold}, {"regressions", report.Regressions()}, {"seals", seals}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string RegressJunit(const RegressReport& report) {
  // Counts per suite, then the whole: tests, failures (slower, wrong), errors (unmeasured, a seal
  // that could not be measured), skipped.
  struct Counts {
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    double time = 0;
  };
  std::string suites;
  Counts all;
  for (const RegressSealResult& s : report.seals) {
    Counts n;
    std::string cases;
    const std::string classname = "forgek." + s.operator_name;
    auto open_case = [&](const std::string& name, double seconds) {
      return "    <testcase name=\"" + XmlEscape(name) + "\" classname=\"" + XmlEscape(classname) + "\" time=\"" +
             Num(seconds) + "\"";
    };
    if (s.status != RegressSealResult::Status::checked) {
      // The seal as one case: skipped (another GPU model, driver or toolkit; no seal) or in error.
      ++n.tests;
      cases += open_case("seal", s.wall_s) + ">\n";
      if (s.status == RegressSealResult::Status::skipped) {
        ++n.skipped;
        cases += "      <skipped message=\"" + XmlEscape(s.reason) + "\"/>\n";
      } else {
        ++n.errors;
        cases += "      <error message=\"" + XmlEscape(s.reason) + "\" type=\"error\">" + XmlEscape(s.reason) +
                 "</error>\n";
      }
      cases += "    </testcase>\n";
    } else {
      // The seal's measurement is one interleaved run over its configs: each case gets its share.
      const size_t parts = s.configs.size() + (s.beyond_suite.empty() ? 0 : 1);
      const double share = parts ? s.wall_s / static_cast<double>(parts) : 0;
      for (const RegressConfig& c : s.configs) {
        ++n.tests;
        cases += open_case(c.config, share) + ">\n      <properties>\n";
        for (const auto& [name, value] :
             {std::pair<std::string, std::string>{"class", RegressClassName(c.klass)}, {"now_us", Num(c.now_us)},
              {"expert_us", Num(c.expert_us)}, {"sealed_us", Num(c.sealed_us)}, {"speedup_vs_expert", Num(c.speedup)},
              {"noise", Num(c.noise)}, {"drift", Num(c.drift)}})
          cases += "        " + Property(name, value) + "\n";
        cases += "      </properties>\n";
        if (c.klass == RegressClass::slower || c.klass == RegressClass::wrong) {
          ++n.failures;
          cases += "      <failure message=\"" + XmlEscape(ConfigLine(c)) + "\" type=\"" + RegressClassName(c.klass) +
                   "\">" + XmlEscape(ConfigLine(c)) + "</failure>\n";
        } else if (c.klass == RegressClass::unmeasured) {
          ++n.errors;
          cases += "      <error message=\"" + XmlEscape(ConfigLine(c)) + "\" type=\"unmeasured\">" +
                   XmlEscape(ConfigLine(c)) + "</error>\n";
        }
        cases += "    </testcase>\n";
      }
      if (!s.beyond_suite.empty()) {
        ++n.tests;
        std::string lines;
        for (const std::string& l : s.beyond_suite) lines += l + "\n";
        cases += open_case("beyond the suite", share) + ">\n";
        if (!s.beyond_suite_failures.empty()) {
          ++n.failures;
          std::string message;
          for (const std::string& f : s.beyond_suite_failures) message += (message.empty() ? "" : "; ") + f;
          cases += "      <failure message=\"" + XmlEscape(message) + "\" type=\"beyond_suite\">" + XmlEscape(lines) +
                   "</failure>\n";
        } else {
          cases += "      <system-out>" + XmlEscape(lines) + "</system-out>\n";
        }
        cases += "    </testcase>\n";
      }
    }
    n.time = s.wall_s;
    suites += "  <testsuite name=\"" + XmlEscape(s.operator_name) + "\" tests=\"" + std::to_string(n.tests) +
              "\" failures=\"" + std::to_string(n.failures) + "\" errors=\"" + std::to_string(n.errors) +
              "\" skipped=\"" + std::to_string(n.skipped) + "\" time=\"" + Num(n.time) + "\" timestamp=\"" +
              XmlEscape(report.started_at) + "\" hostname=\"" + XmlEscape(report.device) + "\">\n    <properties>\n";
    for (const auto& [name, value] : {std::pair<std::string, std::string>{"seal", s.seal_id},
                                      {"device", report.device}, {"driver", report.driver},
                                      {"toolchain", report.toolchain}, {"threshold", Num(report.threshold)}})
      suites += "      " + Property(name, value) + "\n";
    suites += "    </properties>\n" + cases + "  </testsuite>\n";
    all.tests += n.tests, all.failures += n.failures, all.errors += n.errors, all.skipped += n.skipped;
    all.time += n.time;
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"forgek regress\" tests=\"" +
         std::to_string(all.tests) + "\" failures=\"" + std::to_string(all.failures) + "\" errors=\"" +
         std::to_string(all.errors) + "\" skipped=\"" + std::to_string(all.skipped) + "\" time=\"" + Num(all.time) +
         "\" timestamp=\"" + XmlEscape(report.started_at) + "\">\n" + suites + "</testsuites>\n";
}

std::vector<SealCheckRecord> RegressHistoryRows(const RegressReport& report) {
  std::vector<SealCheckRecord> rows;
  for (const RegressSealResult& s : report.seals) {
    SealCheckRecord base;
    base.check_id = report.check_id;
    base.seal_id = s.seal_id;
    base.operator_name = s.operator_name;
    base.arch = report.arch;
    base.device = report.device;
    base.driver = report.driver;
    base.toolchain = report.toolchain;
    base.checked_at = report.started_at;
    if (s.status != RegressSealResult::Status::checked) {
      SealCheckRecord r = base;
      r.result = StatusName(s.status);
      r.message = s.reason;
      rows.push_back(std::move(r));
      continue;
    }
    for (const RegressConfig& c : s.configs) {
      SealCheckRecord r = base;
      r.config = c.config;
      r.result = RegressClassName(c.klass);
      r.now_us = c.now_us;
      r.expert_us = c.expert_us;
      r.sealed_us = c.sealed_us;
      r.speedup = c.speedup;
      r.noise = c.noise;
      r.message = c.message;
      rows.push_back(std::move(r));
    }
    if (!s.beyond_suite.empty()) {
      SealCheckRecord r = base;
      r.result = s.beyond_suite_failures.empty() ? "beyond_suite_ok" : "beyond_suite_failed";
      for (const std::string& l : s.beyond_suite) r.message += (r.message.empty() ? "" : "\n") + l;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

}  // namespace forgek
