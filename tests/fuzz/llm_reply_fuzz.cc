// libFuzzer target: an LLM reply, as an HTTP body of either API and as reply text holding a candidate.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/llm_provider.h"
#include "agent/reply_parser.h"
#include "forgek/core/operator_spec.h"

namespace {

// A small elementwise operator, so that a parsed candidate is checked against real tensors.
const forgek::OperatorSpec& Operator() {
  static const forgek::OperatorSpec op = [] {
    forgek::OperatorSpec o;
    o.name = "vadd";
    o.category = "elementwise";
    o.params = {"N"};
    o.configs = {{"small", {{"N", 1024}}}};
    o.tensors = {{"x", forgek::TensorRole::input, forgek::DType::f32, {"N"}, {}},
                 {"out", forgek::TensorRole::output, forgek::DType::f32, {"N"}, {}}};
    o.flops = "N";
    o.bytes = "8*N";
    return o;
  }();
  return op;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string body(reinterpret_cast<const char*>(data), size);
  for (auto kind : {forgek::LlmProviderKind::openai, forgek::LlmProviderKind::anthropic}) {
    forgek::LlmReply reply;
    std::string err;
    forgek::MakeLlmProvider(kind)->ParseReply(body, &reply, &err);
  }
  forgek::ApiErrorMessage(body);
  forgek::Proposal proposal;
  std::string problem;
  forgek::ParseReplyCandidate(body, Operator(), &proposal, &problem);
  return 0;
}
