// A model's reply turned into a proposal: the one code block, its manifest, checked against the operator.
#pragma once

#include <string>
#include <vector>

#include "forgek/agent/agent.h"

namespace forgek {

struct FencedBlock {
  std::string tag;   // first word after the opening fence, lower case ("" when untagged)
  std::string code;  // the lines between the fences
  int line = 0;      // 1-based line of the opening fence
};

// The ``` fenced blocks of `text`, in order. `unclosed` is set when the last block has no closing
// fence (a reply cut off at the token limit).
std::vector<FencedBlock> FencedBlocks(const std::string& text, bool* unclosed);

// The candidate's code: the only block tagged cuda, cu, c++, cpp, c or untagged; with several, the
// only one holding a "/* forgek" manifest. Other tags (json, text, ...) are ignored. `prose` gets
// the reply without its code blocks. False with a message meant for the model otherwise.
bool ExtractCandidateCode(const std::string& reply, std::string* code, std::string* prose, std::string* problem);

// ExtractCandidateCode, then ParseCandidate and ValidateCandidate against `op`. A fixed-value
// candidate must satisfy its constraints under at least one config. A family (some param lists
// several values) gets `family` = "llm/<name>-<sha8>.cu" and its first instance valid for every
// config as `params`. On failure `problem` says what to fix, with line numbers in the code block.
bool ParseReplyCandidate(const std::string& reply, const OperatorSpec& op, Proposal* out, std::string* problem);

}  // namespace forgek
