// A scripted model behind the loopback server: its replies depend on what the request says, as a
// real model's would (a compile error's line is removed, "slower" doubles the block size, a request
// for a new architecture gets a family), for a toy copy operator y = x over N floats.
#pragma once

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/llm_test_server.h"

namespace forgek::testing {

// The toy kernel with a fixed BLOCK; `broken` adds line 7, which names an undeclared identifier.
inline std::string CopyKernel(int block, bool broken = false) {
  std::string code = "/* forgek\n"
                     "{ \"name\": \"copy_b" + std::to_string(block) + "\", \"mechanisms\": [\"vector_16B\"], \"params\": {\"BLOCK\": " +
                     std::to_string(block) + "},\n"
                     "  \"launches\": [{\"kernel\": \"copy\", \"grid\": [\"ceil_div(N, BLOCK)\"], \"block\": [\"BLOCK\"], "
                     "\"args\": [\"x\", \"y\", \"N\"]}] }\n"
                     "*/\n"
                     "extern \"C\" __global__ void copy(const float* x, float* y, int N) {\n"
                     "  int i = blockIdx.x * BLOCK + threadIdx.x;\n";
  if (broken) code += "  if (i == 0) y[0] = undeclared_name;\n";
  return code + "  if (i < N) y[i] = x[i];\n}\n";
}

// The same kernel as a family: BLOCK is searched.
inline std::string CopyFamily() {
  return "/* forgek\n"
         "{ \"name\": \"copy_family\", \"mechanisms\": [\"vector_16B\"], \"params\": {\"BLOCK\": [64, 128, 256, 512]},\n"
         "  \"launches\": [{\"kernel\": \"copy\", \"grid\": [\"ceil_div(N, BLOCK)\"], \"block\": [\"BLOCK\"], "
         "\"args\": [\"x\", \"y\", \"N\"]}] }\n"
         "*/\n"
         "extern \"C\" __global__ void copy(const float* x, float* y, int N) {\n"
         "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
         "  if (i < N) y[i] = x[i];\n"
         "}\n";
}

class ScriptedModel {
 public:
  bool family_first = false;  // answer the first request with a family
  int max_block = 4096;

  ScriptedResponse operator()(const ReceivedRequest& req, int) const {
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    std::string last, previous;  // the last user message and the model's previous reply
    for (const auto& m : body.value("messages", nlohmann::json::array())) {
      if (m.value("role", "") == "user") last = m.value("content", "");
      if (m.value("role", "") == "assistant") previous = m.value("content", "");
    }
    return {200, {}, OpenAiReply(Answer(last, previous), 1000, 500)};
  }

 private:
  static std::string Block(const std::string& code) { return "```cuda\n" + code + "```\n"; }
  static int Find(const std::string& text, const std::regex& re, int otherwise) {
    std::smatch m;
    return std::regex_search(text, m, re) ? std::stoi(m[1]) : otherwise;
  }
  static std::string CodeOf(const std::string& reply) {
    size_t start = reply.find("```cuda\n");
    if (start == std::string::npos) return "";
    start += 8;
    return reply.substr(start, reply.find("```", start) - start);
  }

  std::string Answer(const std::string& last, const std::string& previous) const {
    static const std::regex kLine(R"(line (\d+):)"), kBlock(R"("BLOCK": (\d+))"), kParentBlock(R"(### Parent A:[^\n]*BLOCK=(\d+))");
    if (!previous.empty() && last.find("compile_error") != std::string::npos) {
      // Remove the line the compiler names (lines count from the code block's first line).
      int line = Find(last, kLine, 0);
      std::istringstream in(CodeOf(previous));
      std::string out, text;
      for (int n = 1; std::getline(in, text); ++n)
        if (n != line) out += text + "\n";
      return "Fixed line " + std::to_string(line) + ": it named an undeclared identifier.\n\n" + Block(out);
    }
    if (!previous.empty()) {
      // Feedback on a timed kernel, or a duplicate sent back: a larger block.
      int block = std::min(max_block, 2 * Find(previous, kBlock, 32));
      return "BLOCK " + std::to_string(block / 2) + " -> " + std::to_string(block) + ": the feedback says `" +
             (last.find("`slower`") != std::string::npos ? "slower" : "not faster enough") +
             "`, so more threads per block.\n\n" + Block(CopyKernel(block));
    }
    if (last.find("### Parent A") == std::string::npos) {
      return family_first ? "A copy kernel whose block size the search should pick.\n\n" + Block(CopyFamily())
                          : "First try: one thread per element.\n\n" + Block(CopyKernel(64, /*broken=*/true));
    }
    if (last.find("NEW ARCHITECTURE") != std::string::npos)
      return "A family over the block size.\n\n" + Block(CopyFamily());
    int block = std::min(max_block, 2 * Find(last, kParentBlock, 32));
    return "Parent A with BLOCK " + std::to_string(block) + ".\n\n" + Block(CopyKernel(block));
  }
};

}  // namespace forgek::testing
