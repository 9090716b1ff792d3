// Instruction classes of disassembled SASS (cuobjdump -sass / nvdisasm), and disassembling a cubin.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "forgek/knowledge/knowledge.h"
#include "forgek/core/subprocess.h"

namespace forgek {

namespace {

// The opcode of one disassembly line ("/*0200*/  @!P0 HGMMA.64x128x16.F32.BF16 R24, ... ;"), or "".
std::string OpcodeOf(const std::string& line) {
  size_t p = line.find("*/");
  if (p == std::string::npos) return "";
  p += 2;
  auto skip = [&] {
    while (p < line.size() && (line[p] == ' ' || line[p] == '\t' || line[p] == '{')) ++p;
  };
  skip();
  if (p < line.size() && line[p] == '@') {  // predicate guard
    while (p < line.size() && line[p] != ' ' && line[p] != '\t') ++p;
    skip();
  }
  size_t end = p;
  while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != ';') ++end;
  std::string op = line.substr(p, end - p);
  if (op.empty() || !(op[0] >= 'A' && op[0] <= 'Z')) return "";
  return op;
}

bool HasModifier(const std::string& op, const std::string& mod) {
  return (op + ".").find("." + mod + ".") != std::string::npos;
}

}  // namespace

std::map<std::string, int> ClassifySass(const std::string& sass) {
  std::map<std::string, int> classes;
  std::istringstream in(sass);
  std::string line;
  while (std::getline(in, line)) {
    std::string op = OpcodeOf(line);
    if (op.empty()) continue;
    std::string base = op.substr(0, op.find('.'));
    // The evict-first hint (ld/st.global.cs, __ldcs/__stcs) is a mechanism of its own, whatever the
    // width: "STG.E.EF.128" counts as STG.128 and as STG.EF.
    if ((base == "LDG" || base == "STG") && HasModifier(op, "EF")) ++classes[base + ".EF"];
    // Width matters for plain memory instructions: 16-byte accesses are a mechanism of their own.
    if ((base == "LDG" || base == "STG" || base == "LDS" || base == "STS" || base == "LD" || base == "ST") &&
        HasModifier(op, "128")) {
      ++classes[base + ".128"];
      continue;
    }
    if (base == "ATOMG") base = "ATOM";
    if (base == "REDG") base = "RED";
    ++classes[base];
    if (base == "UTMALDG" && HasModifier(op, "MULTICAST")) ++classes["UTMALDG.MULTICAST"];
    if (base == "MUFU" && HasModifier(op, "EX2")) ++classes["MUFU.EX2"];
  }
  return classes;
}

bool DisassembleCubin(const std::string& cubin, std::string* sass, std::string* err) {
  namespace fs = std::filesystem;
  std::string root = FORGEK_CUDA_ROOT;
  std::vector<std::string> argv;
  for (const char* name : {"cuobjdump", "nvdisasm"}) {
    fs::path p = fs::path(root) / "bin" / name;
    if (access(p.c_str(), X_OK) == 0) {
      argv = {p.string()};
      if (std::string(name) == "cuobjdump") argv.push_back("-sass");
      break;
    }
  }
  if (argv.empty()) {
    if (err) *err = "no cuobjdump or nvdisasm under " + root + "/bin";
    return false;
  }
  char tmpl[] = "/tmp/forgek-cubin-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) {
    if (err) *err = "cannot create a temporary file for disassembly";
    return false;
  }
  close(fd);
  { std::ofstream(tmpl, std::ios::binary) << cubin; }
  argv.push_back(tmpl);
  constexpr double kDisassemblyTimeoutS = 120;
  ProcessOutput run = RunProcess(argv, kDisassemblyTimeoutS);
  std::remove(tmpl);
  std::string text = run.out + run.err;
  if (run.exit_code != 0 || run.timed_out) {
    if (err) *err = "disassembly failed: " + text.substr(0, 500);
    return false;
  }
  text = run.out;
  *sass = text;
  return true;
}

}  // namespace forgek
