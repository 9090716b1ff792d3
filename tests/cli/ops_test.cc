// End-to-end tests of `forgek ops`: list, show and validate over fixture operators.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace forgek {
namespace {

std::string Fixtures() { return SourceDir() + "/tests/core/data/operators"; }

// Runs forgek with --operators pointing at the fixtures and an isolated cache folder.
CommandResult Ops(std::vector<std::string> args, const std::string& root = Fixtures()) {
  static TempDir cache;
  args.insert(args.begin(), {"--operators", root});
  return RunForgek(args, {"XDG_CACHE_HOME=" + cache.path()});
}

TEST(OpsValidate, ValidFixturePassesIncludingCompile) {
  CommandResult r = Ops({"ops", "validate", "tiny_scale"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "tiny_scale: ok\n");
}

TEST(OpsValidate, ASeedThatIsASearchSpaceCompilesEveryCorner) {
  TempDir tmp;
  std::filesystem::copy(Fixtures() + "/tiny_scale", tmp.file("tiny_scale"), std::filesystem::copy_options::recursive);
  std::string seed = ReadFile(tmp.file("tiny_scale/seed.cu"));
  seed.replace(seed.find("\"THREADS\": 128"), 14, "\"THREADS\": [128, 32, 1024, 256], \"UNROLL\": [1, 2, 4]");
  WriteFile(tmp.file("tiny_scale/seed.cu"), seed);
  CommandResult r = Ops({"--json", "ops", "validate", "tiny_scale"}, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  std::set<std::string> seed_instances;
  for (const nlohmann::json& c : j[0]["compiled"]) {
    if (c["file"].get<std::string>().find("seed.cu") == std::string::npos) continue;
    EXPECT_TRUE(c["ok"].get<bool>()) << c.dump();
    std::string options;
    for (const nlohmann::json& o : c["options"]) options += o.get<std::string>() + " ";
    seed_instances.insert(options);
  }
  // The first instance, then THREADS at 32 and 1024, UNROLL at 4 (UNROLL=1 is the first instance's).
  EXPECT_EQ(seed_instances, (std::set<std::string>{"-DTHREADS=128 -DUNROLL=1 ", "-DTHREADS=32 -DUNROLL=1 ",
                                                   "-DTHREADS=1024 -DUNROLL=1 ", "-DTHREADS=128 -DUNROLL=4 "}));
}

TEST(OpsValidate, AliasesResolve) {
  CommandResult r = Ops({"ops", "validate", "--no-compile", "scale"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "tiny_scale: ok\n");
}

TEST(OpsValidate, BrokenFixturesFailNamingFileAndField) {
  struct Case {
    const char* name;
    const char* field;
    const char* says;
  };
  const Case cases[] = {
      {"broken_missing_field", "flops: required field is missing", ""},
      {"broken_bad_expression", "tensors[1].shape[0]: ", "unexpected end of expression"},
      {"broken_missing_file", "seed: ", "no_such_seed.cu"},
      {"broken_wrong_dtype", "tensors[0].dtype: ", "unknown dtype 'float32'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CommandResult r = Ops({"ops", "validate", c.name});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_EQ(r.out, std::string(c.name) + ": 1 problem\n");
    std::string file = Fixtures() + "/" + c.name + "/operator.json:";
    EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.field), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

TEST(OpsValidate, AllOperatorsWhenNoneNamed) {
  CommandResult r = Ops({"--json", "ops", "validate", "--no-compile"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  std::map<std::string, bool> ok;
  for (const auto& v : j) ok[v["name"]] = v["ok"];
  EXPECT_EQ(ok.size(), 5u) << r.out;
  EXPECT_TRUE(ok["tiny_scale"]);
  EXPECT_FALSE(ok["broken_wrong_dtype"]);
  for (const auto& v : j) {
    if (v["name"] != "broken_wrong_dtype") continue;
    ASSERT_EQ(v["diagnostics"].size(), 1u);
    EXPECT_EQ(v["diagnostics"][0]["field"], "tensors[0].dtype");
    EXPECT_GT(v["diagnostics"][0]["line"].get<int>(), 0);
  }
}

TEST(OpsValidate, UnknownNameSuggestsCloseOnes) {
  CommandResult r = Ops({"ops", "validate", "--no-compile", "tiny_scael"});
  EXPECT_EQ(r.exit_code, 2);  // an unknown name is a usage error, as for run --op
  EXPECT_NE(r.err.find("did you mean tiny_scale"), std::string::npos) << r.err;
}

TEST(OpsValidate, BrokenKernelFilesAreReportedWithTheirPosition) {
  TempDir tmp;
  std::string src = Fixtures() + "/tiny_scale";
  std::filesystem::copy(src, tmp.file("tiny_scale"), std::filesystem::copy_options::recursive);
  // The seed names a kernel its source does not define, and the family does not compile.
  std::string seed = ReadFile(tmp.file("tiny_scale/seed.cu"));
  seed.replace(seed.find("\"kernel\": \"scale_seed\""), 22, "\"kernel\": \"scale_sed\"");
  WriteFile(tmp.file("tiny_scale/seed.cu"), seed);
  std::string family = ReadFile(tmp.file("tiny_scale/families/vectorised.cu"));
  family.replace(family.find("alpha * x[base + v]"), 19, "alpha * undeclared_thing");
  WriteFile(tmp.file("tiny_scale/families/vectorised.cu"), family);
  CommandResult r = Ops({"ops", "validate", "tiny_scale"}, tmp.path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(tmp.file("tiny_scale/seed.cu") + ":4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("launches[0].kernel: no 'extern \"C\" __global__' function named 'scale_sed'"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("families/vectorised.cu:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("undeclared_thing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-DTHREADS=128 -DVEC=4"), std::string::npos) << r.err;
}

TEST(OpsList, TableAndJson) {
  CommandResult r = Ops({"ops", "list"});
  EXPECT_EQ(r.exit_code, 1) << "the broken fixtures cannot be loaded";
  EXPECT_NE(r.out.find("NAME"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiny_scale  elementwise  2        kernel reference.cu  scale, tiny"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("broken_wrong_dtype: invalid operator"), std::string::npos) << r.err;

  TempDir tmp;
  std::filesystem::copy(Fixtures() + "/tiny_scale", tmp.file("tiny_scale"), std::filesystem::copy_options::recursive);
  r = Ops({"--json", "ops", "list"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "tiny_scale");
  EXPECT_EQ(j[0]["configs"], 2);
  EXPECT_EQ(j[0]["reference"]["kernel"], "reference.cu");
  EXPECT_EQ(j[0]["aliases"], nlohmann::json({"scale", "tiny"}));
}

TEST(OpsShow, ShapesFlopsAndBytesPerConfig) {
  CommandResult r = Ops({"--json", "ops", "show", "tiny"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "tiny_scale");
  ASSERT_EQ(j["configs"].size(), 2u);
  EXPECT_EQ(j["configs"][1]["name"], "large");
  EXPECT_EQ(j["configs"][1]["shapes"]["x"], nlohmann::json({1048576}));
  EXPECT_EQ(j["configs"][1]["flops"], 1048576);
  EXPECT_EQ(j["configs"][1]["bytes"], 8 * 1048576);
  EXPECT_EQ(j["tolerance"]["rel_l2"], 1e-6);

  r = Ops({"ops", "show", "tiny_scale"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("x[1048576] y[1048576]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1.049 MFLOP, 8.389 MB"), std::string::npos) << r.out;

  r = Ops({"ops", "show", "broken_wrong_dtype"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tensors[0].dtype"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace forgek
