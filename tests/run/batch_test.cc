// Tests of the batch scheduler with a scripted launcher on a virtual clock.
#include "forgek/run/batch.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace forgek {
namespace {

// Each op takes `duration[op]` virtual seconds; ops named "bad*" exit 1, "nostart*" fail to start.
class ScriptedLauncher : public RunLauncher {
 public:
  std::map<std::string, double> duration;
  double now = 0;
  int max_concurrent = 0;
  std::map<int, int> per_gpu_running;  // gpu -> running count
  std::vector<std::pair<std::string, int>> starts;

  bool Start(const std::string& op, int gpu, int* handle, std::string* err) override {
    if (op.rfind("nostart", 0) == 0) {
      *err = "cannot spawn";
      return false;
    }
    *handle = next_++;
    jobs_[*handle] = {op, gpu, now + duration[op]};
    starts.push_back({op, gpu});
    EXPECT_EQ(++per_gpu_running[gpu], 1) << "two runs on GPU " << gpu;
    max_concurrent = std::max(max_concurrent, static_cast<int>(jobs_.size()));
    return true;
  }
  bool WaitAny(int* handle, int* exit_code, std::string* output, std::string* err) override {
    if (jobs_.empty()) {
      *err = "nothing running";
      return false;
    }
    auto first = jobs_.begin();
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
      if (it->second.end < first->second.end) first = it;
    now = first->second.end;
    *handle = first->first;
    *exit_code = first->second.op.rfind("bad", 0) == 0 ? 1 : 0;
    *output = R"({"attempts": 5, "best": {"speedup": 1.2}, "seal": "abcdef0123456789"})";
    --per_gpu_running[first->second.gpu];
    jobs_.erase(first);
    return true;
  }

 private:
  struct Job {
    std::string op;
    int gpu;
    double end;
  };
  std::map<int, Job> jobs_;
  int next_ = 1;
};

TEST(Batch, OneRunPerFreeGpuAndAllOpsRun) {
  ScriptedLauncher l;
  std::vector<std::string> ops = {"a", "b", "c", "d", "e", "f", "g", "h"};
  for (const auto& op : ops) l.duration[op] = 10;
  std::vector<std::string> lines;
  auto results = RunBatch(ops, {0, 1}, l, [&](const std::string& s) { lines.push_back(s); });
  ASSERT_EQ(results.size(), 8u);
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(results[i].op, ops[i]);
    EXPECT_EQ(results[i].exit_code, 0);
  }
  EXPECT_EQ(l.max_concurrent, 2);
  EXPECT_DOUBLE_EQ(l.now, 40.0) << "8 runs of 10 s on 2 GPUs take 40 s";
  EXPECT_EQ(lines.size(), 16u);
}

TEST(Batch, ContinuesAfterFailuresAndStartErrors) {
  ScriptedLauncher l;
  l.duration = {{"bad1", 1}, {"ok1", 5}, {"ok2", 5}};
  auto results = RunBatch({"bad1", "nostart", "ok1", "ok2"}, {3}, l, nullptr);
  EXPECT_EQ(results[0].exit_code, 1);
  EXPECT_EQ(results[1].exit_code, -1);
  EXPECT_EQ(results[1].error, "cannot spawn");
  EXPECT_EQ(results[2].exit_code, 0);
  EXPECT_EQ(results[3].exit_code, 0);
  for (const auto& [op, gpu] : l.starts) EXPECT_EQ(gpu, 3);
  std::string text = BatchSummaryText(results, 11);
  EXPECT_NE(text.find("failed (1)"), std::string::npos) << text;
  EXPECT_NE(text.find("not run"), std::string::npos) << text;
  EXPECT_NE(text.find("2 of 4 runs ok"), std::string::npos) << text;
  EXPECT_NE(text.find("abcdef012345"), std::string::npos) << text;
}

TEST(Batch, UnevenRunsFillFreedGpus) {
  ScriptedLauncher l;
  l.duration = {{"long", 30}, {"s1", 10}, {"s2", 10}, {"s3", 10}};
  RunBatch({"long", "s1", "s2", "s3"}, {0, 1}, l, nullptr);
  EXPECT_DOUBLE_EQ(l.now, 30.0) << "the short runs share the second GPU while the long one runs";
}

}  // namespace
}  // namespace forgek
