// The "Against PyTorch" table: per config, what scripts/compare_torch.py timed of the seal, torch
// eager and torch.compile (`report --torch`), for the markdown and HTML printers.
#include "report_tables.h"
#include "report_text.h"

namespace forgek::report_tables {
namespace {

using report_text::Num;
using report_text::TimeCell;

std::string CorrectCell(const std::optional<bool>& correct) { return !correct ? "-" : *correct ? "yes" : "NO"; }

// The config's status where it is not "compared" (unless the note says it), the seal's note, the config's.
std::string NoteCell(const TorchBeside& t) {
  std::vector<std::string> parts;
  const TorchConfig& c = t.numbers;
  if (!c.status.empty() && c.status != "compared" && c.note.rfind(c.status, 0) != 0) parts.push_back(c.status);
  if (!t.note.empty()) parts.push_back(t.note);
  if (!c.note.empty()) parts.push_back(c.note);
  return report_text::Join(parts, "; ");
}

std::string Intro(const Report& r) {
  bool from_runs = false;
  for (const ConfigRow& c : r.configs) from_runs = from_runs || (c.torch && c.torch->from_run);
  const std::string runs =
      "Timed by a run's PyTorch yardstick (an operator whose golden is a PyTorch problem): the kernel serving "
      "the config, torch eager and torch.compile in one worker, cold L2, medians in us with their noise "
      "(docs/importing.md). Speedups are torch's time over the kernel's: above 1 forgek is faster.";
  if (r.torch.empty()) return runs;
  std::string out = (from_runs ? runs + " Others: " : std::string()) +
      "Timed by scripts/compare_torch.py: the seal, torch eager and torch.compile interleaved in one session, "
      "launch by launch with a cold L2 (so the seal's time may differ from the worker's above). Medians in us "
      "with their noise; speedups are torch's time over the seal's: above 1 the seal is faster. From ";
  for (size_t i = 0; i < r.torch.size(); ++i) {
    const TorchSource& s = r.torch[i];
    out += (i == 0 ? "" : "; ") + s.file + " (" + s.device + ", torch " + s.torch_version + ", " + s.date + ")";
    if (!s.method.empty()) out += ": " + s.method;
  }
  return out + ".";
}

}  // namespace

bool HasTorch(const Report& r) {
  for (const ConfigRow& c : r.configs)
    if (c.torch) return true;
  return false;
}

Table Torch(const Report& r) {
  Table t{"torch", "Against PyTorch", Intro(r),
          {"operator", "config", "seal", "seal us", "eager us", "compile us", "vs eager", "vs compile", "correct",
           "note"},
          "lllrrrrrll", {}};
  for (const ConfigRow& row : r.configs) {
    if (!row.torch) continue;
    const TorchConfig& c = row.torch->numbers;
    t.rows.push_back({row.op, row.config, row.torch->seal.empty() ? "-" : report_text::ShortId(row.torch->seal),
                      TimeCell(c.seal_us, c.seal_noise), TimeCell(c.eager_us, c.eager_noise),
                      TimeCell(c.compile_us, c.compile_noise), Num(c.speedup_vs_eager, "%.2fx"),
                      Num(c.speedup_vs_compile, "%.2fx"), CorrectCell(c.correct), NoteCell(*row.torch)});
  }
  return t;
}

}  // namespace forgek::report_tables
