// The worker protocol: line framing, round trips of every message, malformed input.
#include "forgek/protocol/worker_protocol.h"

#include <gtest/gtest.h>

namespace forgek {
namespace {

using nlohmann::json;

TEST(WorkerProtocol, EncodeDecodeLineRoundTrip) {
  std::string line = EncodeLine({{"id", 7}, {"type", "hello"}});
  ASSERT_EQ(line.back(), '\n');
  json j;
  std::string err;
  ASSERT_TRUE(DecodeMessageLine(line.substr(0, line.size() - 1), &j, &err)) << err;
  EXPECT_EQ(j["id"], 7);
  EXPECT_EQ(j["type"], "hello");
}

TEST(WorkerProtocol, MalformedLinesAreRejectedWithAReason) {
  json j;
  std::string err;
  EXPECT_FALSE(DecodeMessageLine("{not json", &j, &err));
  EXPECT_NE(err.find("not JSON"), std::string::npos) << err;
  EXPECT_FALSE(DecodeMessageLine("[1,2]", &j, &err));
  EXPECT_NE(err.find("not a JSON object"), std::string::npos) << err;
  EXPECT_FALSE(DecodeMessageLine(R"({"type":"hello"})", &j, &err));
  EXPECT_NE(err.find("\"id\""), std::string::npos) << err;
  EXPECT_FALSE(DecodeMessageLine(R"({"id":"1","type":"hello"})", &j, &err));
  EXPECT_FALSE(DecodeMessageLine(R"({"id":1,"type":3})", &j, &err));
  EXPECT_NE(err.find("\"type\""), std::string::npos) << err;
}

EvaluateCommand SampleCommand() {
  EvaluateCommand c;
  c.config.op = "gemm_bf16";
  c.config.name = "4096^3";
  c.config.values = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  WireTensor a;
  a.name = "A";
  a.dtype = DType::bf16;
  a.shape = {4096, 4096};
  a.init.dist = "uniform";
  a.init.lo = -2;
  a.init.hi = 3;
  WireTensor out;
  out.name = "C";
  out.role = TensorRole::output;
  out.dtype = DType::bf16;
  out.shape = {4096, 4096};
  c.config.tensors = {a, out};
  c.config.scalars = {ScalarSpec{"eps", DType::f32, 1e-5}};
  c.config.tolerance.rel_l2 = 0.01;
  c.config.tolerance.max_abs = 1;
  c.golden.label = "golden";
  c.golden.cubin_b64 = Base64Encode(std::string("\x7f" "ELF\0\1", 6));
  ResolvedLaunch l;
  l.kernel = "gemm";
  l.grid[0] = 32, l.grid[1] = 16;
  l.block[0] = 384;
  l.cluster[1] = 2;
  l.smem = 200000;
  l.args = {{ResolvedArg::Kind::tensor_map, "tmA", 0, 0}, {ResolvedArg::Kind::tensor, "C", 0, 0},
            {ResolvedArg::Kind::i32, "M", 4096, 0}, {ResolvedArg::Kind::f32, "f32:0.5", 0, 0.5f}};
  c.golden.launch.launches = {l};
  c.golden.launch.workspaces = {{"counters", 1024}};
  c.golden.launch.workspace_zero = {true};
  c.golden.launch.tensor_maps = {{"tmA", "A", {4096, 4096}, {128, 64}, "128B", "256B", "none"}};
  c.candidate = c.golden;
  c.candidate.label = "candidate";
  c.incumbent.label = "reference";
  c.incumbent.library = "cublas.gemm_bf16";
  c.seeds = {1, 0xFFFFFFFFFFFFFFFFull};
  c.policy.stop.max_noise = 0.05;
  c.policy.graph_below_us = 7;
  return c;
}

TEST(WorkerProtocol, EvaluateCommandRoundTrip) {
  EvaluateCommand c = SampleCommand();
  json j = json::parse(ToJson(c).dump());  // through text, as on the wire
  EvaluateCommand back;
  std::string err;
  ASSERT_TRUE(FromJson(j, &back, &err)) << err;
  EXPECT_EQ(back.config.name, "4096^3");
  EXPECT_EQ(back.config.values.at("K"), 4096);
  ASSERT_EQ(back.config.tensors.size(), 2u);
  EXPECT_EQ(back.config.tensors[0].dtype, DType::bf16);
  EXPECT_EQ(back.config.tensors[0].init.dist, "uniform");
  EXPECT_DOUBLE_EQ(back.config.tensors[0].init.hi, 3);
  EXPECT_EQ(back.config.tensors[1].role, TensorRole::output);
  EXPECT_EQ(back.config.tensors[1].bytes(), 4096ll * 4096 * 2);
  EXPECT_DOUBLE_EQ(back.config.scalars.at(0).value, 1e-5);
  EXPECT_DOUBLE_EQ(back.config.tolerance.rel_l2, 0.01);
  EXPECT_EQ(back.seeds, c.seeds);
  EXPECT_DOUBLE_EQ(back.policy.stop.max_noise, 0.05);
  EXPECT_DOUBLE_EQ(back.policy.graph_below_us, 7);
  std::string cubin;
  ASSERT_TRUE(Base64Decode(back.golden.cubin_b64, &cubin));
  EXPECT_EQ(cubin, std::string("\x7f" "ELF\0\1", 6));
  const ResolvedLaunch& l = back.candidate.launch.launches.at(0);
  EXPECT_EQ(l.kernel, "gemm");
  EXPECT_EQ(l.grid[0], 32);
  EXPECT_EQ(l.grid[1], 16);
  EXPECT_EQ(l.cluster[1], 2);
  EXPECT_EQ(l.smem, 200000);
  ASSERT_EQ(l.args.size(), 4u);
  EXPECT_EQ(l.args[0].kind, ResolvedArg::Kind::tensor_map);
  EXPECT_EQ(l.args[2].i, 4096);
  EXPECT_FLOAT_EQ(l.args[3].f, 0.5f);
  EXPECT_TRUE(back.candidate.launch.workspace_zero.at(0));
  EXPECT_EQ(back.candidate.launch.tensor_maps.at(0).box, (std::vector<int64_t>{128, 64}));
  EXPECT_EQ(back.candidate.launch.tensor_maps.at(0).swizzle, "128B");
  EXPECT_EQ(back.incumbent.library, "cublas.gemm_bf16");
}

TEST(WorkerProtocol, PartitionInitRoundTrip) {
  EvaluateCommand c = SampleCommand();
  WireTensor sizes;
  sizes.name = "group_sizes";
  sizes.dtype = DType::i32;
  sizes.shape = {8};
  sizes.init.dist = "partition";
  sizes.init.total = 16384;
  sizes.init.multiple = 8;
  sizes.init.part_min = 256;
  c.config.tensors.push_back(sizes);
  EvaluateCommand back;
  std::string err;
  ASSERT_TRUE(FromJson(json::parse(ToJson(c).dump()), &back, &err)) << err;
  ASSERT_EQ(back.config.tensors.size(), 3u);
  const InitSpec& init = back.config.tensors[2].init;
  EXPECT_EQ(init.dist, "partition");
  EXPECT_EQ(init.total, 16384);
  EXPECT_EQ(init.multiple, 8);
  EXPECT_EQ(init.part_min, 256);
}

TEST(WorkerProtocol, BadEvaluateNamesTheField) {
  json j = ToJson(SampleCommand());
  j["config"]["tensors"][1]["dtype"] = "f128";
  EvaluateCommand back;
  std::string err;
  EXPECT_FALSE(FromJson(j, &back, &err));
  EXPECT_NE(err.find("tensors[1].dtype"), std::string::npos) << err;

  j = ToJson(SampleCommand());
  j["golden"]["launch"]["launches"][0]["grid"] = {1, 2};
  EXPECT_FALSE(FromJson(j, &back, &err));
  EXPECT_NE(err.find("launches[0].grid"), std::string::npos) << err;

  j = ToJson(SampleCommand());
  j["seeds"] = json::array();
  EXPECT_FALSE(FromJson(j, &back, &err));
  EXPECT_NE(err.find("seeds"), std::string::npos) << err;

  j = ToJson(SampleCommand());
  j["candidate"].erase("cubin_b64");
  EXPECT_FALSE(FromJson(j, &back, &err));
  EXPECT_NE(err.find("exactly one of"), std::string::npos) << err;
}

// Every decoding error is one line: the offending member's path from the message's root, then why.
std::string DecodeError(const json& j) {
  EvaluateCommand back;
  std::string err;
  EXPECT_FALSE(FromJson(j, &back, &err)) << j.dump();
  return err;
}

TEST(WorkerProtocol, MistypedUnknownAndOutOfRangeMembersNameTheirPath) {
  json j = ToJson(SampleCommand());
  j["config"]["tensors"][0]["shape"] = "4096x4096";
  EXPECT_EQ(DecodeError(j), "config.tensors[0].shape: expected an array, not string");
  j = ToJson(SampleCommand());
  j["config"]["tensors"][0]["shape"][1] = "64";
  EXPECT_EQ(DecodeError(j), "config.tensors[0].shape[1]: type must be number, but is string");
  j = ToJson(SampleCommand());
  j["config"]["tensors"][0]["shape"][1] = -64;
  EXPECT_EQ(DecodeError(j), "config.tensors[0].shape: negative dimension");
  j = ToJson(SampleCommand());
  j["config"]["tensors"][1]["role"] = "scratch";
  EXPECT_EQ(DecodeError(j), "config.tensors[1].role: unknown role 'scratch'");
  j = ToJson(SampleCommand());
  j["config"]["scalars"][0]["dtype"] = 4;
  EXPECT_EQ(DecodeError(j), "config.scalars[0].dtype: type must be string, but is number");
  j = ToJson(SampleCommand());
  j["golden"]["launch"]["launches"][0]["args"][1]["kind"] = "pointer";
  EXPECT_EQ(DecodeError(j), "golden.launch.launches[0].args[1].kind: unknown kind 'pointer'");
  j = ToJson(SampleCommand());
  j["candidate"]["launch"]["workspaces"][0].erase("bytes");
  EXPECT_EQ(DecodeError(j), "candidate.launch.workspaces[0].bytes: missing");
  j = ToJson(SampleCommand());
  j["policy"]["max_noise"] = "low";
  EXPECT_EQ(DecodeError(j), "policy.max_noise: type must be number, but is string");
  j = ToJson(SampleCommand());
  j["golden"] = 3;
  EXPECT_EQ(DecodeError(j), "golden: expected an object, not number");
  j = ToJson(SampleCommand());
  j["config"].erase("name");
  EXPECT_EQ(DecodeError(j), "config.name: missing");
  j = ToJson(SampleCommand());
  j["candidate"].erase("launch");
  EXPECT_EQ(DecodeError(j), "candidate.launch: missing");
  j = ToJson(SampleCommand());
  j["incumbent"]["cubin_b64"] = j["golden"]["cubin_b64"];
  EXPECT_EQ(DecodeError(j), "incumbent: a kernel needs exactly one of library, cubin_b64, torch_file");

  ProbeResult p;
  std::string err;
  EXPECT_FALSE(FromJson(json{{"ok", true}, {"devices", json::array()}}, &p, &err));
  EXPECT_EQ(err, "driver_version: missing");
  EXPECT_FALSE(FromJson(json{{"ok", "yes"}}, &p, &err));
  EXPECT_EQ(err, "ok: type must be boolean, but is string");
}

TEST(WorkerProtocol, UnknownMembersAreIgnored) {
  // A reply is read from the whole message line: the envelope's id, type and ok sit beside it.
  json j = ToJson(EvaluateReply{});
  j.update({{"id", 3}, {"type", "reply"}, {"ok", true}, {"from_a_newer_worker", {1, 2}}});
  EvaluateReply back;
  std::string err;
  ASSERT_TRUE(FromJson(j, &back, &err)) << err;
  EXPECT_EQ(back.status, ReplyStatus::ok);
}

TEST(WorkerProtocol, UnsetMembersStayOffTheWire) {
  // The supervisor reads "error" only when present (StringField's fallback says the worker gave none).
  json reply = ToJson(EvaluateReply{});
  for (const char* key :
       {"error", "cuda_error", "failed_kernel", "audit_detail", "candidate_timing", "incumbent_timing", "paired"})
    EXPECT_FALSE(reply.contains(key)) << key;
  EXPECT_EQ(ToJson(SampleCommand().incumbent).dump(), R"({"label":"reference","library":"cublas.gemm_bf16"})");
  EvaluateCommand c = SampleCommand();
  c.incumbent = WireKernel{};
  EXPECT_FALSE(ToJson(c).contains("incumbent"));
  EXPECT_FALSE(ToJson(ProfileReply{}).contains("metrics_error"));
}

// Every reply status travels under one spelling; one the supervisor does not know is a protocol
// error that names it, never a guess.
TEST(WorkerProtocol, ReplyStatusesTravelByNameAndAnUnknownOneIsRefused) {
  for (ReplyStatus s : {ReplyStatus::ok, ReplyStatus::launch_error, ReplyStatus::crash, ReplyStatus::unsupported,
                        ReplyStatus::error}) {
    EvaluateReply r, back;
    r.status = s;
    const json j = ToJson(r);
    EXPECT_EQ(j["status"], ReplyStatusName(s));
    std::string err;
    ASSERT_TRUE(FromJson(j, &back, &err)) << err;
    EXPECT_EQ(back.status, s);
  }
  json j = ToJson(EvaluateReply{});
  j["status"] = "on_fire";
  EvaluateReply back;
  std::string err;
  EXPECT_FALSE(FromJson(j, &back, &err));
  EXPECT_EQ(err, "status: unknown status 'on_fire'");
}

TEST(WorkerProtocol, ReplyAndProbeRoundTrip) {
  EvaluateReply r;
  r.status = ReplyStatus::crash;
  r.cuda_error = "CUDA_ERROR_ILLEGAL_ADDRESS";
  r.failed_kernel = "candidate";
  r.correctness.ok = false;
  r.correctness.rel_l2 = 0.5;
  r.correctness.detail = "C[0, 1] = nan";
  r.timed = true;
  r.candidate.median_us = 12.5;
  r.candidate.samples = 40;
  r.incumbent.median_us = 13;
  r.incumbent.samples = 40;
  r.paired = {1.04, 0.003, 40};
  r.audit_ok = false;
  EvaluateReply back;
  std::string err;
  ASSERT_TRUE(FromJson(json::parse(ToJson(r).dump()), &back, &err)) << err;
  EXPECT_EQ(back.status, ReplyStatus::crash);
  EXPECT_EQ(back.cuda_error, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(back.failed_kernel, "candidate");
  EXPECT_DOUBLE_EQ(back.correctness.rel_l2, 0.5);
  EXPECT_EQ(back.correctness.detail, "C[0, 1] = nan");
  EXPECT_DOUBLE_EQ(back.candidate.median_us, 12.5);
  EXPECT_EQ(back.incumbent.samples, 40);
  EXPECT_DOUBLE_EQ(back.paired.median, 1.04);
  EXPECT_DOUBLE_EQ(back.paired.rel_noise, 0.003);
  EXPECT_EQ(back.paired.pairs, 40);
  EXPECT_FALSE(back.audit_ok);

  ProbeResult p;
  p.ok = true;
  p.driver_version = 13000;
  p.devices.push_back({0, "NVIDIA H200", "9.0", 132, 62914560, 150000000000, 1980, 3201, 6144});
  json pj = ToJson(p);
  EXPECT_EQ(pj["devices"][0]["l2_bytes"], 62914560);
  EXPECT_EQ(pj["devices"][0]["cc"], "9.0");
  ProbeResult pback;
  ASSERT_TRUE(FromJson(pj, &pback, &err)) << err;
  EXPECT_EQ(pback.devices.at(0).sms, 132);
  ProbeResult none;
  none.error = "no NVIDIA driver: libcuda.so.1 not found";
  EXPECT_EQ(ToJson(none).dump(), R"({"error":"no NVIDIA driver: libcuda.so.1 not found","ok":false})");
}

TEST(WorkerProtocol, Base64KnownVectorsAndRejects) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  std::string out;
  ASSERT_TRUE(Base64Decode("Zm9vYg==", &out));
  EXPECT_EQ(out, "foob");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  ASSERT_TRUE(Base64Decode(Base64Encode(all), &out));
  EXPECT_EQ(out, all);
  EXPECT_FALSE(Base64Decode("Zm9", &out));
  EXPECT_FALSE(Base64Decode("Zm=v", &out));
  EXPECT_FALSE(Base64Decode("Zm9*", &out));
}

}  // namespace
}  // namespace forgek
