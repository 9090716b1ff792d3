// Extraction of the candidate code block from a reply and its checking against the operator.
#include "reply_parser.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "forgek/agent/family_space.h"
#include "forgek/core/hash.h"

namespace forgek {
namespace {

bool IsCodeTag(const std::string& tag) {
  return tag.empty() || tag == "cuda" || tag == "cu" || tag == "c++" || tag == "cpp" || tag == "c";
}

// "```cuda title" -> fence length 3, tag "cuda"; false when the line is no fence.
bool ParseFence(const std::string& line, size_t* fence_len, std::string* tag) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  size_t start = i;
  while (i < line.size() && line[i] == '`') ++i;
  if (i - start < 3) return false;
  *fence_len = i - start;
  while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  size_t word = i;
  while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i])) && line[i] != '{') ++i;
  *tag = line.substr(word, i - word);
  std::transform(tag->begin(), tag->end(), tag->begin(), [](unsigned char c) { return std::tolower(c); });
  return true;
}

bool IsClosingFence(const std::string& line, size_t fence_len) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  size_t start = i;
  while (i < line.size() && line[i] == '`') ++i;
  if (i - start < fence_len) return false;
  while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  return i == line.size();
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

const char* kAskOneBlock = "Reply with the complete candidate file in exactly one ```cuda code block.";

}  // namespace

std::vector<FencedBlock> FencedBlocks(const std::string& text, bool* unclosed) {
  std::vector<FencedBlock> blocks;
  *unclosed = false;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool inside = false;
  size_t fence_len = 0;
  FencedBlock current;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!inside) {
      if (ParseFence(line, &fence_len, &current.tag)) {
        inside = true;
        current.code.clear();
        current.line = number;
      }
    } else if (IsClosingFence(line, fence_len)) {
      blocks.push_back(current);
      inside = false;
    } else {
      current.code += line + "\n";
    }
  }
  if (inside) {
    *unclosed = true;
    blocks.push_back(current);
  }
  return blocks;
}

bool ExtractCandidateCode(const std::string& reply, std::string* code, std::string* prose, std::string* problem) {
  bool unclosed = false;
  std::vector<FencedBlock> blocks = FencedBlocks(reply, &unclosed);
  if (unclosed) {
    *problem = "the code block opened at line " + std::to_string(blocks.back().line) +
               " of the reply is never closed (was the reply cut off?). " + kAskOneBlock;
    return false;
  }
  std::vector<const FencedBlock*> code_blocks;
  for (const auto& b : blocks) {
    if (IsCodeTag(b.tag)) code_blocks.push_back(&b);
  }
  if (code_blocks.empty()) {
    *problem = std::string("no code block in the reply. ") + kAskOneBlock;
    return false;
  }
  const FencedBlock* chosen = code_blocks.front();
  if (code_blocks.size() > 1) {
    std::vector<const FencedBlock*> with_manifest;
    for (const auto* b : code_blocks) {
      if (b->code.find("/* forgek") != std::string::npos) with_manifest.push_back(b);
    }
    if (with_manifest.size() != 1) {
      *problem = std::to_string(code_blocks.size()) + " code blocks in the reply, " +
                 std::to_string(with_manifest.size()) + " of them with a /* forgek manifest. " + kAskOneBlock;
      return false;
    }
    chosen = with_manifest.front();
  }
  *code = chosen->code;

  // The prose around the blocks is the model's rationale.
  std::string rest;
  std::istringstream in(reply);
  std::string line;
  bool inside = false;
  size_t fence_len = 0;
  std::string tag;
  while (std::getline(in, line)) {
    if (!inside && ParseFence(line, &fence_len, &tag)) {
      inside = true;
    } else if (inside && IsClosingFence(line, fence_len)) {
      inside = false;
    } else if (!inside) {
      rest += line + "\n";
    }
  }
  *prose = Trim(rest);
  return true;
}

bool ParseReplyCandidate(const std::string& reply, const OperatorSpec& op, Proposal* out, std::string* problem) {
  std::string code, prose;
  if (!ExtractCandidateCode(reply, &code, &prose, problem)) return false;

  Candidate candidate;
  Diagnostics diags;
  if (!ParseCandidate("candidate.cu", code, &candidate, &diags) || !ValidateCandidate(candidate, op, &diags)) {
    *problem = "the candidate's manifest has problems (lines count from the first line of the code block):\n" +
               FormatDiagnostics(diags);
    return false;
  }
  candidate.path.clear();

  ParamAssignment params;
  bool family = false;
  for (const auto& p : candidate.manifest.params) {
    if (!p.values.empty()) params[p.name] = p.values.front();
    family = family || p.values.size() > 1;
  }
  if (family) {
    // A family: its first instance is the listed first values when they are valid for every
    // config (a seal must serve them all with one assignment), else a valid draw; the run's
    // search tunes the rest.
    FamilySpace space(candidate, op);
    std::string why;
    if (!space.Valid(params, &why)) {
      Rng rng(1);
      if (!space.Sample(rng, &params)) {
        *problem = "no instance of the family (params with lists of values) satisfies its constraints for every "
                   "config (" + why + ")";
        return false;
      }
    }
    std::string name;
    for (char c : candidate.manifest.name) name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '-';
    out->family = std::string(kInventedFamilyPrefix) + (name.empty() ? "family" : name) + "-" +
                  Sha256Hex(code).substr(0, 8) + ".cu";
  }
  std::string why;
  bool any_config = op.configs.empty() || family;
  for (const auto& config : op.configs) {
    std::string config_why;
    if (ConstraintsHold(candidate.manifest, params, config.values, NominalSmCount(candidate.manifest), &config_why)) {
      any_config = true;
      break;
    }
    if (why.empty()) why = config.name + ": " + config_why;
  }
  if (!any_config) {
    *problem = "the candidate's constraints fail for every config (" + why + ")";
    return false;
  }

  constexpr size_t kMaxRationale = 2000;
  out->candidate = std::move(candidate);
  out->params = std::move(params);
  if (!family) out->family.clear();
  out->rationale = prose.size() > kMaxRationale ? prose.substr(0, kMaxRationale) + " ..." : prose;
  return true;
}

}  // namespace forgek
