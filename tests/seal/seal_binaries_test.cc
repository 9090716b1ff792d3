// Seals keep their binaries: the store holds each sealed cubin by its SHA-256, export and verify
// use it without compiling, and a seal from before (no cubin kept) is rebuilt once and the rebuild
// kept, flagged, when it hashes to the sealed cubin.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "forgek/core/device_library.h"
#include "forgek/core/hash.h"
#include "forgek/core/params.h"
#include "forgek/seal/seal.h"
#include "forgek/knowledge/store.h"
#include "run/scripted_evaluator.h"
#include "softmax_seal_fixture.h"
#include "test_util.h"

namespace forgek {
namespace {

TEST(StoreCubins, KeepsBytesByTheirHashAndRefusesBytesThatDoNotMatch) {
  TempDir tmp;
  Store store;
  std::string err;
  ASSERT_TRUE(store.Open(tmp.file("store.db"), &err)) << err;
  const std::string bytes("\x7f" "ELF\0\x01binary with a NUL", 22);
  const std::string sha = Sha256Hex(bytes);
  ASSERT_TRUE(store.PutCubin(sha, bytes, "nvrtc 13.0", false, &err)) << err;
  ASSERT_TRUE(store.PutCubin(sha, bytes, "nvrtc 13.0", true, &err)) << "adding it again is a no-op: " << err;
  std::string got;
  bool found = false, rebuilt = true;
  ASSERT_TRUE(store.GetCubin(sha, &got, &found, &rebuilt, &err)) << err;
  EXPECT_TRUE(found);
  EXPECT_EQ(got, bytes) << "binary bytes, NUL included";
  EXPECT_FALSE(rebuilt) << "the first record stands";
  ASSERT_TRUE(store.GetCubin(Sha256Hex("other"), &got, &found, &rebuilt, &err)) << err;
  EXPECT_FALSE(found);
  EXPECT_FALSE(store.PutCubin(Sha256Hex("other"), bytes, "", false, &err));
  EXPECT_NE(err.find("does not hash to"), std::string::npos) << err;
  EXPECT_FALSE(store.PutCubin(Sha256Hex(""), "", "", false, &err)) << "no empty cubin";

  // A row edited behind forgek's back is not served as the sealed cubin.
  store.Close();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(tmp.file("store.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE cubins SET bytes = x'00112233'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  ASSERT_TRUE(store.Open(tmp.file("store.db"), &err)) << err;
  EXPECT_FALSE(store.GetCubin(sha, &got, &found, &rebuilt, &err));
  EXPECT_NE(err.find("damaged"), std::string::npos) << err;
}

class SealBinariesTest : public SoftmaxSealFixture {
 protected:
  // A seal of softmax_fp32 whose candidate is `source`, naming cubin `sha`, sealed elsewhere.
  SealRecord AddSeal(const std::string& id, const std::string& source, const std::string& sha) {
    AddCandidate("cand-" + id, source);
    SealRecord s = NewSeal(id, "cand-" + id);
    s.cubin_sha256 = sha;
    s.toolchain = "nvrtc 12.9 (another machine)";
    return StoreSeal(s);
  }

  static CompilerOptions OneThread() {
    CompilerOptions copts;
    copts.threads = 1;
    return copts;
  }
};

// A store copied to a machine that did not seal: the source cannot be compiled there (here: it
// does not compile at all), yet export and verify work from the kept cubin.
TEST_F(SealBinariesTest, ExportAndVerifyUseTheKeptCubinWithoutCompiling) {
  const std::string cubin = "the sealed cubin bytes";
  const std::string source = ReadFile(OperatorDir() + "/seed.cu") + "\n#error this machine cannot compile it\n";
  SealRecord s = AddSeal("bin0000kept", source, Sha256Hex(cubin));
  std::string err;
  ASSERT_TRUE(store_.PutCubin(s.cubin_sha256, cubin, "nvrtc 12.9", false, &err)) << err;
  Compiler compiler(OneThread());

  ASSERT_TRUE(ExportSeal(store_, s, op_, compiler, tmp_.file("export"), false, &err)) << err;
  EXPECT_EQ(ReadFile(tmp_.file("export/kernel.cubin")), cubin);
  nlohmann::json meta = nlohmann::json::parse(ReadFile(tmp_.file("export/seal.json")));
  EXPECT_EQ(meta.at("exported_with"), "the sealed cubins kept in the store");
  EXPECT_EQ(meta.at("exported_cubin_sha256"), s.cubin_sha256);
  EXPECT_FALSE(nlohmann::json::parse(ReadFile(tmp_.file("export/launch.json"))).at("configs").empty());

  ScriptedEvaluator evaluator([](const KernelUnderTest& k, const std::string&) {
    return k.params.count("THREADS") ? 8.0 : 10.0;
  });
  SealMeasurement m = MeasureSeal(evaluator, store_, compiler, op_, s);
  ASSERT_TRUE(m.error.empty()) << m.error;
  ASSERT_FALSE(evaluator.requests.empty());
  EXPECT_EQ(evaluator.requests[0].candidate.cubin, cubin) << "the sealed binary is what is measured";
  EXPECT_TRUE(m.verdict.holds) << m.verdict.reason;
}

// A seal from before stores kept binaries: its first export rebuilds it and keeps the rebuild,
// flagged, because it hashes to the sealed cubin; the next export compiles nothing.
TEST_F(SealBinariesTest, ASealWithoutAKeptCubinIsRebuiltOnceAndTheRebuildKept) {
  const std::string source = ReadFile(OperatorDir() + "/seed.cu");
  Compiler compiler(OneThread());
  Candidate parsed;
  Diagnostics diags;
  ASSERT_TRUE(ParseCandidate("seed.cu", source, &parsed, &diags)) << FormatDiagnostics(diags);
  CompileResult built = compiler.CompileNow({"kernel.cu", ExpandedSource(source), "sm90", ParamDefines({{"THREADS", 256}})});
  ASSERT_TRUE(built.ok) << built.Summary();
  SealRecord s = AddSeal("bin0000old", source, Sha256Hex(built.cubin));
  std::string err, bytes;
  bool found = true, rebuilt = false;
  ASSERT_TRUE(store_.GetCubin(s.cubin_sha256, &bytes, &found, &rebuilt, &err)) << err;
  ASSERT_FALSE(found) << "an older store keeps none";

  ASSERT_TRUE(ExportSeal(store_, s, op_, compiler, tmp_.file("first"), false, &err)) << err;
  EXPECT_NE(nlohmann::json::parse(ReadFile(tmp_.file("first/seal.json"))).at("exported_with").get<std::string>().find(
                "rebuilt by nvrtc"),
            std::string::npos);
  ASSERT_TRUE(store_.GetCubin(s.cubin_sha256, &bytes, &found, &rebuilt, &err)) << err;
  EXPECT_TRUE(found) << "the rebuild hashes to the sealed cubin: kept";
  EXPECT_TRUE(rebuilt) << "flagged as rebuilt";
  EXPECT_EQ(bytes, built.cubin);

  ASSERT_TRUE(ExportSeal(store_, s, op_, compiler, tmp_.file("second"), false, &err)) << err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(tmp_.file("second/seal.json"))).at("exported_with"),
            "the sealed cubins kept in the store");
  EXPECT_EQ(ReadFile(tmp_.file("second/kernel.cubin")), built.cubin);
}

// A seal whose kept cubin is missing and whose rebuild differs (another toolkit): export refuses
// unless --allow-rebuilt, and the differing rebuild is never kept as the sealed cubin.
TEST_F(SealBinariesTest, ARebuildThatDiffersIsRefusedWithoutAllowRebuiltAndNeverKept) {
  SealRecord s = AddSeal("bin0000differs", ReadFile(OperatorDir() + "/seed.cu"), Sha256Hex("sealed elsewhere"));
  Compiler compiler(OneThread());
  std::string err;
  EXPECT_FALSE(ExportSeal(store_, s, op_, compiler, tmp_.file("refused"), false, &err));
  EXPECT_NE(err.find("--allow-rebuilt"), std::string::npos) << err;
  EXPECT_NE(err.find("nvrtc 12.9 (another machine)"), std::string::npos) << "names the sealing toolchain: " << err;
  ASSERT_TRUE(ExportSeal(store_, s, op_, compiler, tmp_.file("allowed"), true, &err)) << err;
  std::string bytes;
  bool found = true;
  ASSERT_TRUE(store_.GetCubin(s.cubin_sha256, &bytes, &found, nullptr, &err)) << err;
  EXPECT_FALSE(found);
  ASSERT_TRUE(store_.GetCubin(Sha256Hex(ReadFile(tmp_.file("allowed/kernel.cubin"))), &bytes, &found, nullptr, &err));
  EXPECT_FALSE(found) << "a rebuild that is not the sealed cubin is not kept";
}

// A dispatch whose fallback refuses a suite config (a constraint, as rmsnorm's row-in-registers
// kernels have) exports: that kernel's launch.json lists the config under "refused" with the
// constraint, the table's kernel serves it. A single-kernel seal that refuses a config still fails,
// naming it.
TEST_F(SealBinariesTest, ADispatchKernelThatRefusesAConfigListsItAndTheExportGoesOn) {
  std::string narrow = ReadFile(OperatorDir() + "/seed.cu");
  const std::string params_line = "\"params\": {\"THREADS\": 256},";
  ASSERT_NE(narrow.find(params_line), std::string::npos);
  narrow.replace(narrow.find(params_line), params_line.size(), params_line + "\n  \"constraints\": [\"N <= 4096\"],");
  const std::string wide = ReadFile(OperatorDir() + "/seed.cu");
  Compiler compiler(OneThread());
  const ParamAssignment params = {{"THREADS", 256}};
  std::string err;
  std::vector<std::string> shas;
  for (const std::string& source : {narrow, wide}) {
    CompileResult built = compiler.CompileNow({"kernel.cu", ExpandedSource(source), "sm90", ParamDefines(params)});
    ASSERT_TRUE(built.ok) << built.Summary();
    shas.push_back(Sha256Hex(built.cubin));
    ASSERT_TRUE(store_.PutCubin(shas.back(), built.cubin, "nvrtc 13.0", false, &err)) << err;
  }
  AddCandidate("cand-narrow", narrow);
  AddCandidate("cand-wide", wide);
  const std::string wide_config = "4096x32768";
  ASSERT_TRUE(std::any_of(op_.configs.begin(), op_.configs.end(), [&](const ConfigSpec& c) { return c.name == wide_config; }));
  nlohmann::json kernels = {{{"candidate", "cand-narrow"}, {"params", params}, {"cubin_sha256", shas[0]}},
                            {{"candidate", "cand-wide"}, {"params", params}, {"cubin_sha256", shas[1]}}};
  SealRecord s = NewSeal("bin0000dispatch", "cand-narrow");
  s.params_json = ParamsJson(params);
  s.cubin_sha256 = shas[0];
  s.metadata_json = nlohmann::json{{"dispatch", {{"kernels", kernels},
                                                 {"table", {{{"config", wide_config}, {"kernel", 1}, {"why", "N > 4096"}}}},
                                                 {"fallback", 0}}}}
                        .dump();
  StoreSeal(s);
  ASSERT_TRUE(ExportSeal(store_, s, op_, compiler, tmp_.file("dispatch"), false, &err)) << err;
  for (const char* launch_path : {"dispatch/launch.json", "dispatch/kernels/0/launch.json"}) {
    SCOPED_TRACE(launch_path);
    nlohmann::json launch = nlohmann::json::parse(ReadFile(tmp_.file(launch_path)));
    ASSERT_EQ(launch.at("refused").size(), 1u);
    EXPECT_EQ(launch["refused"][0].at("config"), wide_config);
    EXPECT_EQ(launch["refused"][0].at("values").at("N"), 32768);
    EXPECT_NE(launch["refused"][0].at("why").get<std::string>().find("N <= 4096"), std::string::npos)
        << launch["refused"][0];
    EXPECT_EQ(launch.at("configs").size(), op_.configs.size() - 1);
    for (const nlohmann::json& c : launch["configs"]) EXPECT_NE(c.at("config"), wide_config);
  }
  nlohmann::json served = nlohmann::json::parse(ReadFile(tmp_.file("dispatch/kernels/1/launch.json")));
  EXPECT_EQ(served.at("configs").size(), op_.configs.size());
  EXPECT_FALSE(served.contains("refused"));

  SealRecord single = NewSeal("bin0000single", "cand-narrow");
  single.params_json = ParamsJson(params);
  single.cubin_sha256 = shas[0];
  StoreSeal(single);
  EXPECT_FALSE(ExportSeal(store_, single, op_, compiler, tmp_.file("single"), false, &err));
  EXPECT_NE(err.find("config " + wide_config), std::string::npos) << err;
  EXPECT_NE(err.find("N <= 4096"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(tmp_.file("single/launch.json"))) << "nothing half-written";
}

}  // namespace
}  // namespace forgek
