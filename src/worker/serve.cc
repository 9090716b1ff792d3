// The worker's request loop: one JSON line in, progress lines and one reply line out.
#include <cstring>
#include <string>

#include <spdlog/spdlog.h>

#include "evaluate.h"
#include "forgek/worker/gpu_context.h"
#include "profile.h"
#include "forgek/worker/worker.h"

namespace forgek::worker {
namespace {

bool ReadLine(std::FILE* in, std::string* line) {
  line->clear();
  for (int c; (c = std::fgetc(in)) != EOF;) {
    if (c == '\n') return true;
    line->push_back(static_cast<char>(c));
  }
  return !line->empty();
}

void Send(std::FILE* out, const nlohmann::json& message) {
  std::string text = EncodeLine(message);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

nlohmann::json Reply(int64_t id, bool ok) { return {{"id", id}, {"type", "reply"}, {"ok", ok}}; }

}  // namespace

int Serve(std::FILE* in, std::FILE* out) {
  GpuContext gpu;
  bool gpu_ready = false;
  TorchGolden torch;  // the PyTorch helper, started at the first golden given as a problem file
  std::string line;
  while (ReadLine(in, &line)) {
    nlohmann::json request;
    std::string err;
    if (!DecodeMessageLine(line, &request, &err)) {
      // Without an id there is nobody to answer: say so on stderr and on stdout with id -1.
      spdlog::error("bad request: {}", err);
      Send(out, {{"id", -1}, {"type", "reply"}, {"ok", false}, {"error", "bad request: " + err}});
      continue;
    }
    int64_t id = request["id"].get<int64_t>();
    std::string type = request["type"].get<std::string>();
    if (type == "shutdown") {
      Send(out, Reply(id, true));
      return 0;
    }
    if (type == "hello") {
      nlohmann::json j = ToJson(ProbeDevices());
      j["id"] = id;
      j["type"] = "reply";
      j["protocol"] = kWorkerProtocolVersion;
      Send(out, j);
      continue;
    }
    if (type == "calibrate") {
      DevicePeaks peaks;
      nlohmann::json j = Reply(id, Calibrate(&peaks, &err));
      if (j["ok"]) j["peaks"] = ToJson(peaks);
      else j["error"] = err;
      Send(out, j);
      continue;
    }
    if (type != "evaluate" && type != "prepare" && type != "profile") {
      nlohmann::json j = Reply(id, false);
      j["error"] = "unknown request type '" + type + "' (hello, calibrate, prepare, evaluate, profile, shutdown)";
      Send(out, j);
      continue;
    }
    if (!gpu_ready) {
      GpuError gerr;
      if (!gpu.Init(&gerr)) {
        nlohmann::json j = Reply(id, false);
        j["error"] = "cannot open the GPU: " + gerr.message;
        Send(out, j);
        return 1;
      }
      gpu_ready = true;
    }
    EvaluateCommand cmd;
    if (type == "prepare") {
      // Opening the context is the expensive part of preparing; tensors are per evaluation.
      Send(out, Reply(id, true));
      continue;
    }
    auto progress = [&](const std::string& step, double budget_s) {
      Send(out, {{"id", id}, {"type", "progress"}, {"step", step}, {"budget_s", budget_s}});
    };
    if (type == "profile") {
      ProfileCommand profile_cmd;
      ProfileReply reply;
      if (!FromJson(request, &profile_cmd, &err)) reply.status = ReplyStatus::error, reply.error = "bad profile request: " + err;
      else reply = Profile(&gpu, profile_cmd, progress);
      nlohmann::json j = ToJson(reply);
      j["id"] = id;
      j["type"] = "reply";
      j["ok"] = reply.status == ReplyStatus::ok;
      Send(out, j);
      if (reply.status == ReplyStatus::crash) return 3;
      continue;
    }
    if (!FromJson(request, &cmd, &err)) {
      nlohmann::json j = Reply(id, false);
      j["error"] = "bad evaluate request: " + err;
      Send(out, j);
      continue;
    }
    EvaluateReply reply = Evaluate(&gpu, cmd, progress, &torch);
    nlohmann::json j = ToJson(reply);
    j["id"] = id;
    j["type"] = "reply";
    j["ok"] = reply.status == ReplyStatus::ok;
    Send(out, j);
    if (reply.status == ReplyStatus::crash) {
      spdlog::error("sticky CUDA error ({}); exiting so the supervisor respawns a clean worker", reply.cuda_error);
      return 3;
    }
  }
  return 0;
}

}  // namespace forgek::worker
