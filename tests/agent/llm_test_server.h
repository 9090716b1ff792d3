// A scripted HTTP server on 127.0.0.1 standing in for the LLM APIs, plus a small test operator.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "forgek/core/operator_spec.h"

namespace forgek::testing {

struct ScriptedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  double delay_s = 0;     // wait before answering
  bool chunked = false;   // send the body without Content-Length
  double drip_s = 0;      // > 0: send the body one byte at a time, this many seconds apart (chunked)
};

struct ReceivedRequest {
  std::string path;
  httplib::Headers headers;
  std::string body;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// Answers POSTs from a queue of scripted responses, then from `fallback` (default: HTTP 500).
class FakeLlmServer {
 public:
  using Responder = std::function<ScriptedResponse(const ReceivedRequest&, int index)>;

  FakeLlmServer() {
    server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("test server: cannot bind 127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // Bounded wait: a server that never starts fails the test instead of hanging it.
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!server_.is_running()) {
      server_.stop();
      thread_.join();
      throw std::runtime_error("test server: did not start within 5 s");
    }
  }
  ~FakeLlmServer() { Stop(); }

  void Stop() {
    stopping_ = true;
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  void Push(ScriptedResponse r) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(r));
  }
  void SetFallback(Responder f) {
    std::lock_guard<std::mutex> lock(mu_);
    fallback_ = std::move(f);
  }
  std::vector<ReceivedRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    ScriptedResponse r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ReceivedRequest got{req.path, req.headers, req.body};
      requests_.push_back(got);
      int index = static_cast<int>(requests_.size()) - 1;
      if (!queue_.empty()) {
        r = std::move(queue_.front());
        queue_.pop_front();
      } else if (fallback_) {
        r = fallback_(got, index);
      } else {
        r = {500, {}, R"({"error":{"message":"no scripted response"}})"};
      }
    }
    // Sleep in slices so that Stop() is not held up by a long scripted delay.
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(r.delay_s);
    while (!stopping_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    res.status = r.status;
    for (const auto& [name, value] : r.headers) res.set_header(name, value);
    if (r.drip_s > 0) {
      auto body = std::make_shared<std::string>(std::move(r.body));
      double drip = r.drip_s;
      res.set_chunked_content_provider("application/json", [this, body, drip](size_t offset, httplib::DataSink& sink) {
        if (offset >= body->size()) {
          sink.done();
          return true;
        }
        auto next_byte = std::chrono::steady_clock::now() + std::chrono::duration<double>(drip);
        while (!stopping_ && std::chrono::steady_clock::now() < next_byte)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return !stopping_ && sink.write(body->data() + offset, 1);
      });
    } else if (r.chunked) {
      auto body = std::make_shared<std::string>(std::move(r.body));
      res.set_chunked_content_provider("application/json", [body](size_t offset, httplib::DataSink& sink) {
        constexpr size_t kChunk = 1 << 16;
        if (offset >= body->size()) {
          sink.done();
          return true;
        }
        size_t n = std::min(kChunk, body->size() - offset);
        return sink.write(body->data() + offset, n);
      });
    } else {
      res.set_content(r.body, "application/json");
    }
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::deque<ScriptedResponse> queue_;
  Responder fallback_;
  std::vector<ReceivedRequest> requests_;
};

// Response bodies as the two APIs send them.
inline std::string OpenAiReply(const std::string& text, int64_t in = 1000, int64_t out = 500,
                               const std::string& finish = "stop") {
  nlohmann::json j = {{"id", "chatcmpl-1"},
                      {"object", "chat.completion"},
                      {"choices", {{{"index", 0},
                                    {"message", {{"role", "assistant"}, {"content", text}}},
                                    {"finish_reason", finish}}}},
                      {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}, {"total_tokens", in + out}}}};
  return j.dump();
}

inline std::string AnthropicReply(const std::string& text, int64_t in = 1000, int64_t out = 500,
                                  const std::string& stop = "end_turn") {
  nlohmann::json j = {{"id", "msg_1"},
                      {"type", "message"},
                      {"role", "assistant"},
                      {"content", {{{"type", "text"}, {"text", text}}}},
                      {"stop_reason", stop},
                      {"usage", {{"input_tokens", in}, {"output_tokens", out}}}};
  return j.dump();
}

// A vector add: out = x + y over N elements, two configs.
inline OperatorSpec VectorAddOperator() {
  OperatorSpec op;
  op.name = "vadd";
  op.category = "elementwise";
  op.description = "out[i] = x[i] + y[i]";
  op.params = {"N"};
  op.configs = {{"small", {{"N", 1024}}}, {"large", {{"N", 4096}}}};
  TensorSpec x{"x", TensorRole::input, DType::f32, {"N"}, {}};
  TensorSpec y{"y", TensorRole::input, DType::f32, {"N"}, {}};
  TensorSpec out{"out", TensorRole::output, DType::f32, {"N"}, {}};
  op.tensors = {x, y, out};
  op.flops = "N";
  op.bytes = "12*N";
  op.tolerance.rel_l2 = 1e-6;
  op.tolerance.max_abs = 1e-5;
  op.reference.library = "test.vadd";
  return op;
}

// A valid candidate for VectorAddOperator with block size `block`.
inline std::string VectorAddCandidate(int block = 256) {
  return "/* forgek\n"
         "{ \"name\": \"vadd_b" + std::to_string(block) + "\", \"mechanisms\": [\"vector_16B\"],\n"
         "  \"params\": {\"BLOCK\": " + std::to_string(block) + "},\n"
         "  \"launches\": [{\"kernel\": \"vadd\", \"grid\": [\"ceil_div(N, BLOCK)\"], \"block\": [\"BLOCK\"],\n"
         "                \"args\": [\"x\", \"y\", \"out\", \"N\"]}] }\n"
         "*/\n"
         "extern \"C\" __global__ void vadd(const float* x, const float* y, float* out, int N) {\n"
         "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
         "  if (i < N) out[i] = x[i] + y[i];\n"
         "}\n";
}

// A reply holding `code` in one ```cuda block, with some prose around it.
inline std::string ReplyWith(const std::string& code) {
  return "Idea: one thread per element, coalesced loads.\n\n```cuda\n" + code + "```\n\nThis should be fast.";
}

}  // namespace forgek::testing
