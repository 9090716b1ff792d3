// End-to-end tests of `forgek doctor`: check lines, exit codes, --json, and secrets kept out.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace forgek {
namespace {

// Store and cache under a fresh folder, so the result does not depend on the user's home.
std::vector<std::string> IsolatedEnv(const TempDir& home, std::vector<std::string> extra = {}) {
  extra.push_back("XDG_DATA_HOME=" + home.path() + "/data");
  extra.push_back("XDG_CACHE_HOME=" + home.path() + "/cache");
  extra.push_back("FORGEK_STORE=");
  return extra;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string LineStartingWith(const std::string& text, const std::string& prefix) {
  for (const std::string& line : Lines(text))
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

TEST(Doctor, GpuLineNamesTheReasonAndDecidesTheExitCode) {
  TempDir home;
  CommandResult r = RunForgek({"doctor"}, IsolatedEnv(home));
  std::string ok_gpu = LineStartingWith(r.out, "OK   gpu: ");
  if (!ok_gpu.empty()) {
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // a machine with a GPU and a full toolkit
    return;
  }
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  std::string fail_gpu = LineStartingWith(r.out, "FAIL gpu: ");
  ASSERT_FALSE(fail_gpu.empty()) << "no gpu line in:\n" << r.out;
  EXPECT_GT(fail_gpu.size(), std::string("FAIL gpu: ").size() + 10) << "the reason is missing: " << fail_gpu;
  // Everything but the GPU still got checked.
  for (const char* what : {"cuda toolkit", "nvrtc", "cupti", "cublas", "cudnn", "store", "compile cache", "llm"})
    EXPECT_FALSE(LineStartingWith(r.out, std::string("OK   ") + what + ":").empty()) << what << " not OK in:\n" << r.out;
}

TEST(Doctor, NoGpuPassesOnAMachineWithTheToolkit) {
  TempDir home;
  CommandResult r = RunForgek({"doctor", "--no-gpu"}, IsolatedEnv(home));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_FALSE(LineStartingWith(r.out, "SKIP gpu").empty()) << r.out;
  std::string nvrtc = LineStartingWith(r.out, "OK   nvrtc: ");
  EXPECT_NE(nvrtc.find("sm_90a"), std::string::npos) << nvrtc;
  EXPECT_FALSE(std::filesystem::exists(home.path() + "/data/forgek/store.db")) << "doctor must not create the store";
}

TEST(Doctor, ArchReachesTheNvrtcCheck) {
  TempDir home;
  CommandResult r = RunForgek({"--arch", "sm100", "doctor", "--no-gpu"}, IsolatedEnv(home));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(LineStartingWith(r.out, "OK   nvrtc: ").find("sm_100a"), std::string::npos) << r.out;
}

TEST(Doctor, JsonListsEveryCheck) {
  TempDir home;
  CommandResult r = RunForgek({"--json", "doctor"}, IsolatedEnv(home));
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "not JSON: " << r.out;
  ASSERT_TRUE(j.contains("checks") && j["checks"].is_array());
  std::set<std::string> names;
  bool all_ok = true;
  for (const nlohmann::json& c : j["checks"]) {
    names.insert(c.at("name").get<std::string>());
    EXPECT_FALSE(c.at("detail").get<std::string>().empty()) << c.dump();
    all_ok = all_ok && c.at("ok").get<bool>();
  }
  for (const char* what : {"cuda toolkit", "nvrtc", "cupti", "cublas", "cudnn", "store", "compile cache", "llm", "gpu"})
    EXPECT_TRUE(names.count(what)) << what << " missing from " << r.out;
  EXPECT_EQ(j.at("ok").get<bool>(), all_ok);
  EXPECT_EQ(r.exit_code, all_ok ? 0 : 1);
}

TEST(Doctor, ApiKeysAreNeverPrinted) {
  TempDir home;
  const std::string secret = "sk-secret-123";
  std::vector<std::string> env = IsolatedEnv(home, {"OPENAI_API_KEY=" + secret, "ANTHROPIC_API_KEY=" + secret + "-b"});
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"doctor"}, {"doctor", "--no-gpu"}, {"--json", "doctor"}, {"-v", "-v", "doctor"}}) {
    CommandResult r = RunForgek(args, env);
    EXPECT_EQ(r.out.find(secret), std::string::npos) << "stdout leaks the key:\n" << r.out;
    EXPECT_EQ(r.err.find(secret), std::string::npos) << "stderr leaks the key:\n" << r.err;
    EXPECT_NE(r.out.find("OPENAI_API_KEY set"), std::string::npos) << r.out;
  }
}

TEST(Doctor, BaseUrlsAreShownWithoutCredentials) {
  TempDir home;
  CommandResult r = RunForgek({"doctor", "--no-gpu"},
                              IsolatedEnv(home, {"FORGEK_LLM_BASE_URL=https://user:hunter2@llm.example/v1"}));
  std::string llm = LineStartingWith(r.out, "OK   llm: ");
  EXPECT_NE(llm.find("FORGEK_LLM_BASE_URL=https://***@llm.example/v1"), std::string::npos) << llm;
  EXPECT_EQ(r.out.find("hunter2"), std::string::npos) << r.out;
}

TEST(Doctor, UnwritableStoreFails) {
  TempDir home;
  WriteFile(home.file("a-file"), "x");
  CommandResult r = RunForgek({"--store", home.file("a-file") + "/sub/store.db", "doctor", "--no-gpu"}, IsolatedEnv(home));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  std::string store = LineStartingWith(r.out, "FAIL store: ");
  EXPECT_NE(store.find("--store"), std::string::npos) << "the message should say what to do: " << r.out;
}

TEST(Doctor, CalibrateWithoutGpuIsAUsageError) {
  CommandResult r = RunForgek({"doctor", "--no-gpu", "--calibrate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--calibrate"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace forgek
