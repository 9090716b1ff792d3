// Tagged rows of `forgek ops bench` and their three printers (text, markdown, JSON).
#include "bench_rows.h"

#include <algorithm>

#include <fmt/format.h>

namespace forgek::cli {
namespace {

std::string CellText(const BenchCell& c) {
  if (!c.present) return "-";
  switch (c.tag) {
    case BenchTag::text: return c.text;
    case BenchTag::time_us: return fmt::format("{:.2f}", c.value);
    case BenchTag::noise: return fmt::format("±{:.1f}%", c.value * 100);
    case BenchTag::tflops: return fmt::format("{:.1f}", c.value);
    case BenchTag::gbps: return fmt::format("{:.0f}", c.value);
    case BenchTag::percent: return fmt::format("{:.1f}%", c.value);
  }
  return "";
}

bool RightAligned(BenchTag t) { return t != BenchTag::text; }

// Every row's cells as text, the header row first.
std::vector<std::vector<std::string>> Table(const std::vector<BenchRow>& rows, std::vector<BenchTag>* tags) {
  std::vector<std::vector<std::string>> table(1);
  for (const BenchCell& c : TagRow(BenchRow{})) {
    table[0].push_back(c.header);
    tags->push_back(c.tag);
  }
  for (const BenchRow& r : rows) {
    std::vector<std::string>& line = table.emplace_back();
    for (const BenchCell& c : TagRow(r)) line.push_back(CellText(c));
  }
  return table;
}

// Display width: "±" is two bytes but one column.
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

std::string Pad(const std::string& s, size_t width, bool right) {
  std::string fill(width > Width(s) ? width - Width(s) : 0, ' ');
  return right ? fill + s : s + fill;
}

std::vector<size_t> Widths(const std::vector<std::vector<std::string>>& table) {
  std::vector<size_t> w(table[0].size(), 0);
  for (const auto& line : table)
    for (size_t i = 0; i < line.size(); ++i) w[i] = std::max(w[i], Width(line[i]));
  return w;
}

std::string Failures(const std::vector<BenchRow>& rows) {
  std::string out;
  for (const BenchRow& r : rows)
    if (r.status != "ok") out += fmt::format("{} {}: {}: {}\n", r.op, r.config, r.status, r.detail);
  return out;
}

}  // namespace

std::vector<BenchCell> TagRow(const BenchRow& r) {
  const bool timed = r.status == "ok" && r.time.median_us > 0;
  const double us = r.time.median_us;
  auto num = [&](const char* key, const char* header, BenchTag tag, double v, bool present) {
    return BenchCell{key, header, tag, "", v, present};
  };
  return {
      {"operator", "operator", BenchTag::text, r.op},
      {"config", "config", BenchTag::text, r.config},
      {"reference", "reference", BenchTag::text, r.reference},
      {"status", "status", BenchTag::text, r.status},
      num("time_us", "time us", BenchTag::time_us, us, timed),
      num("noise", "noise", BenchTag::noise, r.time.rel_noise, timed),
      num("tflops", "TFLOP/s", BenchTag::tflops, timed ? r.flops / us / 1e6 : 0, timed && r.flops > 0),
      num("gbps", "GB/s", BenchTag::gbps, timed ? r.bytes / us / 1e3 : 0, timed && r.bytes > 0),
      num("sol_us", "SOL us", BenchTag::time_us, r.sol_us, r.sol_us > 0),
      num("sol_pct", "SOL %", BenchTag::percent, timed ? r.sol_us / us * 100 : 0, timed && r.sol_us > 0),
      num("datasheet_sol_pct", "sheet %", BenchTag::percent, timed ? r.datasheet_sol_us / us * 100 : 0,
          timed && r.datasheet_sol_us > 0),
      num("floor_us", "floor us", BenchTag::time_us, r.floor_us, r.floor_us > 0),
  };
}

std::string BenchText(const std::vector<BenchRow>& rows, const std::string& device) {
  std::vector<BenchTag> tags;
  auto table = Table(rows, &tags);
  auto widths = Widths(table);
  std::string out = "expert references on " + device + "\n";
  for (const auto& line : table) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i)
      text += (i ? "  " : "") + Pad(line[i], widths[i], RightAligned(tags[i]));
    out += text.erase(text.find_last_not_of(' ') + 1) + "\n";
  }
  return out + Failures(rows);
}

std::string BenchMarkdown(const std::vector<BenchRow>& rows, const std::string& device) {
  std::vector<BenchTag> tags;
  auto table = Table(rows, &tags);
  std::string out = "Expert references on " + device + ".\n\n";
  for (size_t l = 0; l < table.size(); ++l) {
    out += "|";
    for (const std::string& cell : table[l]) out += " " + cell + " |";
    out += "\n";
    if (l == 0) {
      out += "|";
      for (BenchTag t : tags) out += RightAligned(t) ? " ---: |" : " --- |";
      out += "\n";
    }
  }
  std::string failures = Failures(rows);
  return failures.empty() ? out : out + "\n```\n" + failures + "```\n";
}

nlohmann::json BenchJson(const std::vector<BenchRow>& rows, const std::string& device) {
  nlohmann::json list = nlohmann::json::array();
  for (const BenchRow& r : rows) {
    nlohmann::json j = nlohmann::json::object();
    for (const BenchCell& c : TagRow(r)) {
      if (c.tag == BenchTag::text) j[c.key] = c.text;
      else if (c.present) j[c.key] = c.value;
      else j[c.key] = nullptr;
    }
    j["samples"] = r.time.samples;
    j["flops"] = r.flops;
    j["bytes"] = r.bytes;
    j["detail"] = r.detail;
    list.push_back(std::move(j));
  }
  return {{"device", device}, {"rows", list}};
}

}  // namespace forgek::cli
