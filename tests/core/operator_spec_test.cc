// Tests of operator.json loading: the valid fixture, every class of mistake, located diagnostics.
#include "forgek/core/operator_spec.h"
#include "forgek/core/torch_helper.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "forgek/core/candidate.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string Fixtures() { return SourceDir() + "/tests/core/data/operators"; }

// The valid fixture's JSON (LoadText copies its kernel files beside it: they must be inside the folder).
Json ValidJson() { return Json::parse(ReadFile(Fixtures() + "/tiny_scale/operator.json")); }

// Writes `text` as <tmp>/<name>/operator.json and loads it.
struct Loaded {
  bool ok = false;
  OperatorSpec spec;
  Diagnostics diags;
  std::string text;
  std::string Report() const { return FormatDiagnostics(diags); }
  // The diagnostic naming `field`, or nullptr.
  const Diagnostic* Find(const std::string& field) const {
    for (const Diagnostic& d : diags)
      if (d.field == field) return &d;
    return nullptr;
  }
};

Loaded LoadText(const TempDir& tmp, const std::string& text, const std::string& name = "tiny_scale") {
  Loaded r;
  r.text = text;
  std::filesystem::copy(Fixtures() + "/tiny_scale", tmp.file(name),
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::skip_existing);
  WriteFile(tmp.file(name + "/operator.json"), text);
  r.ok = LoadOperator(tmp.file(name), &r.spec, &r.diags);
  return r;
}

Loaded LoadEdited(const std::function<void(Json&)>& edit) {
  TempDir tmp;
  Json j = ValidJson();
  edit(j);
  return LoadText(tmp, j.dump(2));
}

// Expects the load to fail with a diagnostic on `field` whose message contains `says`.
void ExpectError(const Loaded& r, const std::string& field, const std::string& says) {
  EXPECT_FALSE(r.ok);
  const Diagnostic* d = r.Find(field);
  ASSERT_NE(d, nullptr) << "no diagnostic on " << field << "; got:\n" << r.Report();
  EXPECT_NE(d->message.find(says), std::string::npos) << d->str();
  EXPECT_NE(d->file.find("operator.json"), std::string::npos) << d->str();
  EXPECT_GT(d->line, 0) << d->str();
}

TEST(OperatorSpec, LoadsTheValidFixture) {
  OperatorSpec op;
  Diagnostics diags;
  ASSERT_TRUE(LoadOperator(Fixtures() + "/tiny_scale", &op, &diags)) << FormatDiagnostics(diags);
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(op.name, "tiny_scale");
  EXPECT_EQ(op.aliases, (std::vector<std::string>{"scale", "tiny"}));
  EXPECT_EQ(op.category, "elementwise");
  EXPECT_EQ(op.params, (std::vector<std::string>{"N"}));
  ASSERT_EQ(op.configs.size(), 2u);
  EXPECT_EQ(op.configs[1].name, "large");
  EXPECT_EQ(op.configs[1].values.at("N"), 1048576);
  ASSERT_EQ(op.tensors.size(), 2u);
  EXPECT_EQ(op.tensors[0].dtype, DType::f32);
  EXPECT_EQ(op.tensors[0].init.dist, "normal");
  EXPECT_EQ(op.tensors[1].role, TensorRole::output);
  ASSERT_EQ(op.scalars.size(), 1u);
  EXPECT_EQ(op.scalars[0].value, 0.5);
  EXPECT_EQ(op.flops, "N");
  EXPECT_EQ(op.tolerance.rel_l2, 1e-6);
  EXPECT_EQ(op.reference.kernel, "reference.cu");
  EXPECT_TRUE(op.reference.library.empty());
  EXPECT_EQ(op.families, (std::vector<std::string>{"families/vectorised.cu"}));
  EXPECT_TRUE(fs::path(op.dir).is_absolute());
  EXPECT_EQ(op.path, op.dir + "/operator.json");
  EXPECT_EQ(op.FindConfig("small")->values.at("N"), 1000);
  EXPECT_EQ(op.FindConfig("nope"), nullptr);
  std::vector<int64_t> shape;
  Diagnostic d;
  ASSERT_TRUE(op.TensorShape(*op.FindTensor("y"), op.configs[0].values, &shape, &d));
  EXPECT_EQ(shape, (std::vector<int64_t>{1000}));
}

TEST(OperatorSpec, RangesLoadWithMultipleOfOneByDefault) {
  Loaded r = LoadEdited([](Json& j) {
    j["ranges"] = {{"N", {{"min", 1}, {"max", 1 << 24}}}};
  });
  ASSERT_TRUE(r.ok) << r.Report();
  ASSERT_EQ(r.spec.ranges.count("N"), 1u);
  EXPECT_EQ(r.spec.ranges.at("N").min, 1);
  EXPECT_EQ(r.spec.ranges.at("N").max, 1 << 24);
  EXPECT_EQ(r.spec.ranges.at("N").multiple_of, 1);
}

TEST(OperatorSpec, AYardstickNamesAnEntryOfTorchOps) {
  Loaded r = LoadEdited([](Json& j) { j["yardstick"] = {{"torch_ops", "softmax_fp32"}}; });
  ASSERT_TRUE(r.ok) << r.Report();
  EXPECT_EQ(r.spec.yardstick_torch_ops, "softmax_fp32");
  EXPECT_EQ(YardstickOf(r.spec), "torch_ops:softmax_fp32");
  Loaded none = LoadEdited([](Json&) {});
  ASSERT_TRUE(none.ok) << none.Report();
  EXPECT_EQ(YardstickOf(none.spec), "") << "a CUDA golden and no yardstick: nothing to time";
  ExpectError(LoadEdited([](Json& j) { j["yardstick"] = "softmax_fp32"; }), "yardstick", "expected {\"torch_ops\"");
  ExpectError(LoadEdited([](Json& j) { j["yardstick"] = Json::object(); }), "yardstick.torch_ops", "");
  ExpectError(LoadEdited([](Json& j) { j["yardstick"] = {{"torch_ops", "os.system('x')"}}; }), "yardstick.torch_ops",
              "is not a function name of scripts/torch_ops.py");
  ExpectError(LoadEdited([](Json& j) { j["yardstick"] = {{"torch_ops", "a"}, {"expr", "b"}}; }), "yardstick.expr", "");
}

TEST(OperatorSpec, BrokenFixturesNameFileFieldAndLine) {
  struct Case {
    const char* dir;
    const char* field;
    const char* says;
  };
  const Case cases[] = {
      {"broken_missing_field", "flops", "required field is missing"},
      {"broken_bad_expression", "tensors[1].shape[0]", "unexpected end of expression"},
      {"broken_missing_file", "seed", "no_such_seed.cu"},
      {"broken_wrong_dtype", "tensors[0].dtype", "unknown dtype 'float32'"},
  };
  for (const Case& c : cases) {
    OperatorSpec op;
    op.name = "untouched";
    Diagnostics diags;
    EXPECT_FALSE(LoadOperator(Fixtures() + "/" + c.dir, &op, &diags)) << c.dir;
    EXPECT_EQ(op.name, "untouched") << "a failed load must leave the output alone";
    ASSERT_EQ(diags.size(), 1u) << c.dir << ":\n" << FormatDiagnostics(diags);
    EXPECT_EQ(diags[0].field, c.field);
    EXPECT_EQ(diags[0].file, Fixtures() + "/" + c.dir + "/operator.json");
    EXPECT_NE(diags[0].message.find(c.says), std::string::npos) << diags[0].str();
    EXPECT_GT(diags[0].line, 0);
  }
}

TEST(OperatorSpec, LocatesTheOffendingValue) {
  OperatorSpec op;
  Diagnostics diags;
  ASSERT_FALSE(LoadOperator(Fixtures() + "/broken_wrong_dtype", &op, &diags));
  std::string text = ReadFile(Fixtures() + "/broken_wrong_dtype/operator.json");
  // The line holding "float32", the column of its opening quote.
  int line = 1;
  size_t at = text.find("\"float32\"");
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  size_t line_start = text.rfind('\n', at) + 1;
  EXPECT_EQ(diags[0].line, line);
  EXPECT_EQ(diags[0].column, static_cast<int>(at - line_start) + 1);

  // Expression errors point inside the string: "N *" ends at column of the closing quote.
  diags.clear();
  ASSERT_FALSE(LoadOperator(Fixtures() + "/broken_bad_expression", &op, &diags));
  text = ReadFile(Fixtures() + "/broken_bad_expression/operator.json");
  at = text.find("\"N *\"");
  line_start = text.rfind('\n', at) + 1;
  EXPECT_EQ(diags[0].column, static_cast<int>(at - line_start) + 1 + 1 + 3);  // quote, then past "N *"
}

TEST(OperatorSpec, JsonSyntaxErrorHasLineAndColumn) {
  TempDir tmp;
  Loaded r = LoadText(tmp, "{\n  \"name\": \"tiny_scale\",\n  \"params\": [\"N\",]\n}\n");
  ASSERT_FALSE(r.ok);
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags[0].line, 3);
  EXPECT_EQ(r.diags[0].column, 18);  // the ']' after the trailing comma
  EXPECT_NE(r.diags[0].message.find("invalid JSON"), std::string::npos) << r.diags[0].str();
  EXPECT_EQ(r.diags[0].message.find("json.exception"), std::string::npos) << r.diags[0].str();
}

TEST(OperatorSpec, MissingFolderOrFile) {
  OperatorSpec op;
  Diagnostics diags;
  EXPECT_FALSE(LoadOperator("/nonexistent/forgek/op", &op, &diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].file, "/nonexistent/forgek/op/operator.json");
}

TEST(OperatorSpec, EveryFieldIsChecked) {
  struct Case {
    const char* what;
    std::function<void(Json&)> edit;
    const char* field;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"name differs from folder", [](Json& j) { j["name"] = "other"; j.erase("aliases"); }, "name", "folder"},
      {"bad name", [](Json& j) { j["name"] = "Tiny-Scale"; }, "name", "not a valid operator name"},
      {"name not a string", [](Json& j) { j["name"] = 5; }, "name", "expected a string, got an integer"},
      {"bad alias", [](Json& j) { j["aliases"] = {"ok", "Not OK"}; }, "aliases[1]", "not a valid alias"},
      {"duplicate alias", [](Json& j) { j["aliases"] = {"a", "a"}; }, "aliases[1]", "twice"},
      {"unknown category", [](Json& j) { j["category"] = "elementwize"; }, "category", "did you mean 'elementwise'"},
      {"empty description", [](Json& j) { j["description"] = ""; }, "description", "empty"},
      {"params not identifiers", [](Json& j) { j["params"] = {"N", "2x"}; }, "params[1]", "not an identifier"},
      {"no configs", [](Json& j) { j["configs"] = Json::array(); }, "configs", "at least one"},
      {"config lacks a param", [](Json& j) { j["configs"][0]["values"] = Json::object(); }, "configs[0].values",
       "no value for param 'N'"},
      {"config has an extra param", [](Json& j) { j["configs"][1]["values"]["Q"] = 3; }, "configs[1].values.Q",
       "not a declared param"},
      {"config value not integer", [](Json& j) { j["configs"][0]["values"]["N"] = 10.5; }, "configs[0].values.N",
       "expected an integer"},
      {"duplicate config", [](Json& j) { j["configs"][1]["name"] = "small"; }, "configs[1].name", "twice"},
      {"ranges not an object", [](Json& j) { j["ranges"] = Json::array(); }, "ranges", "expected an object"},
      {"range of an unknown param", [](Json& j) { j["ranges"] = {{"Q", {{"min", 1}, {"max", 2}}}}; }, "ranges.Q",
       "not a declared param"},
      {"range without max", [](Json& j) { j["ranges"] = {{"N", {{"min", 1}}}}; }, "ranges.N.max", "missing"},
      {"range below 1", [](Json& j) { j["ranges"] = {{"N", {{"min", 0}, {"max", 1 << 22}}}}; }, "ranges.N.min",
       "at least 1"},
      {"range upside down", [](Json& j) { j["ranges"] = {{"N", {{"min", 9}, {"max", 2}}}}; }, "ranges.N.max",
       "below min"},
      {"range with no multiple", [](Json& j) { j["ranges"] = {{"N", {{"min", 5}, {"max", 7}, {"multiple_of", 8}}}}; },
       "ranges.N", "holds no multiple of 8"},
      {"range excludes a config", [](Json& j) { j["ranges"] = {{"N", {{"min", 1}, {"max", 2}}}}; }, "ranges.N",
       "excludes N="},
      {"range with an unknown field", [](Json& j) { j["ranges"] = {{"N", {{"min", 1}, {"max", 1 << 24}, {"step", 2}}}}; },
       "ranges.N.step", "unknown"},
      {"duplicate tensor", [](Json& j) { j["tensors"][1]["name"] = "x"; }, "tensors[1].name", "already the name"},
      {"tensor named like a param", [](Json& j) { j["tensors"][1]["name"] = "N"; }, "tensors[1].name",
       "already the name of a param"},
      {"bad role", [](Json& j) { j["tensors"][1]["role"] = "result"; }, "tensors[1].role", "unknown role"},
      {"no outputs", [](Json& j) { j["tensors"][1]["role"] = "input"; }, "tensors", "no tensor has role output"},
      {"shape not positive", [](Json& j) { j["tensors"][1]["shape"] = {"N - 1000"}; }, "tensors[1].shape[0]",
       "is 0 under config 'small'; must be positive"},
      {"shape names an unknown", [](Json& j) { j["tensors"][1]["shape"] = {"M"}; }, "tensors[1].shape[0]",
       "unknown name 'M'"},
      {"shape divides by zero", [](Json& j) { j["tensors"][1]["shape"] = {"N / (N - 1000)"}; },
       "tensors[1].shape[0]", "under config 'small': division by zero"},
      {"shape empty", [](Json& j) { j["tensors"][1]["shape"] = Json::array(); }, "tensors[1].shape",
       "at least one dimension"},
      {"tensor too big", [](Json& j) { j["tensors"][1]["shape"] = {"N*N*N", "N*N*N"}; }, "tensors[1].shape",
       "overflows"},
      {"output with init", [](Json& j) { j["tensors"][1]["init"] = {{"dist", "normal"}}; }, "tensors[1].init",
       "output tensor is not initialised"},
      {"unknown dist", [](Json& j) { j["tensors"][0]["init"]["dist"] = "gauss"; }, "tensors[0].init.dist",
       "unknown distribution"},
      {"std not positive", [](Json& j) { j["tensors"][0]["init"]["std"] = 0; }, "tensors[0].init.std", "positive"},
      {"uniform empty", [](Json& j) { j["tensors"][0]["init"] = {{"dist", "uniform"}, {"lo", 1}, {"hi", 1}}; },
       "tensors[0].init.hi", "greater than lo"},
      {"normal on integers", [](Json& j) { j["tensors"][0]["dtype"] = "i32"; }, "tensors[0].init.dist",
       "floating-point"},
      {"int_range hi expression", [](Json& j) {
         j["tensors"][0]["dtype"] = "i32";
         j["tensors"][0]["init"] = {{"dist", "int_range"}, {"lo", 0}, {"hi", "N - 1000"}};
       }, "tensors[0].init.hi", "must exceed lo"},
      {"unknown init field", [](Json& j) { j["tensors"][0]["init"]["stddev"] = 1; }, "tensors[0].init.stddev",
       "unknown field"},
      {"scalar dtype", [](Json& j) { j["scalars"][0]["dtype"] = "f16"; }, "scalars[0].dtype", "f32, i32 or i64"},
      {"i32 scalar not integer", [](Json& j) { j["scalars"][0]["dtype"] = "i32"; }, "scalars[0].value",
       "integer"},
      {"flops negative", [](Json& j) { j["flops"] = "0 - N"; }, "flops", "must be at least 0"},
      {"bytes unknown name", [](Json& j) { j["bytes"] = "4*NN"; }, "bytes", "did you mean 'N'"},
      {"bytes wrong type", [](Json& j) { j["bytes"] = Json::array(); }, "bytes", "expected an expression"},
      {"tolerance without why", [](Json& j) { j["tolerance"].erase("why"); }, "tolerance.why", "missing"},
      {"tolerance loose", [](Json& j) { j["tolerance"]["rel_l2"] = 1.0; }, "tolerance.rel_l2", "below 1"},
      {"tolerance negative", [](Json& j) { j["tolerance"]["max_abs"] = -1; }, "tolerance.max_abs", "finite"},
      {"tolerance without rel_l2", [](Json& j) { j["tolerance"].erase("rel_l2"); }, "tolerance.rel_l2", "missing"},
      {"bad check", [](Json& j) { j["tolerance"]["check"] = "fuzzy"; }, "tolerance.check", "unknown check"},
      {"golden missing", [](Json& j) { j["golden"] = "nope.cu"; }, "golden", "does not exist"},
      {"reference with both", [](Json& j) { j["reference"]["library"] = "cublas.gemm_bf16"; }, "reference",
       "exactly one"},
      {"reference with neither", [](Json& j) { j["reference"] = Json::object(); }, "reference", "exactly one"},
      {"reference kernel missing", [](Json& j) { j["reference"]["kernel"] = "nope.cu"; }, "reference.kernel",
       "does not exist"},
      {"family missing", [](Json& j) { j["families"].push_back("families/nope.cu"); }, "families[1]",
       "does not exist"},
      {"family twice", [](Json& j) { j["families"].push_back(j["families"][0]); }, "families[1]", "twice"},
      {"unknown top-level field", [](Json& j) { j["familes"] = Json::array(); }, "familes", "did you mean 'families'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ExpectError(LoadEdited(c.edit), c.field, c.says);
  }
}

// tiny_scale with a third tensor, `sizes` (8 parts of N), initialised by `init`.
Loaded LoadWithPartition(Json init, const std::string& dtype = "i32") {
  return LoadEdited([&](Json& j) {
    j["tensors"].push_back({{"name", "sizes"}, {"role", "input"}, {"dtype", dtype}, {"shape", {"8"}}, {"init", init}});
  });
}

// Text fields: NUL would cut what `ops show` prints, ESC drives the terminal. Newline and tab are
// text in a description; a config name is one line.
TEST(OperatorSpec, ControlCharactersInTextAreRefusedWithTheField) {
  ExpectError(LoadEdited([](Json& j) { j["description"] = std::string("before\0after", 12); }), "description",
              "holds NUL at byte 6");
  ExpectError(LoadEdited([](Json& j) { j["configs"][0]["name"] = "\x1b[2J"; }), "configs[0].name",
              "holds ESC at byte 0");
  ExpectError(LoadEdited([](Json& j) { j["configs"][0]["name"] = "a\nb"; }), "configs[0].name", "one line");
  ExpectError(LoadEdited([](Json& j) { j["aliases"] = {"ok", "x\x07"}; }), "aliases[1]",
              "the control character 0x07 at byte 1");
  ExpectError(LoadEdited([](Json& j) { j["tolerance"]["why"] = "bell\x07"; }), "tolerance.why", "control character");
  Loaded lines = LoadEdited([](Json& j) { j["description"] = "line one\n\tline two"; });
  EXPECT_TRUE(lines.ok) << lines.Report();
}

// The files an operator names stay inside its folder and are regular files; the message says
// what the path is when it is not one.
TEST(OperatorSpec, FilesAreRegularAndInsideTheFolder) {
  ExpectError(LoadEdited([](Json& j) { j["golden"] = "../../../../etc/passwd"; }), "golden",
              "is not inside the operator folder");
  ExpectError(LoadEdited([](Json& j) { j["seed"] = "/dev/urandom"; }), "seed", "is not inside the operator folder");
  ExpectError(LoadEdited([](Json& j) { j["seed"] = "families/../../x/seed.cu"; }), "seed", "not inside");
  ExpectError(LoadEdited([](Json& j) { j["families"] = {"families"}; }), "families[0]", "is a folder, not a file");
  {
    TempDir tmp;
    std::filesystem::create_directories(tmp.file("tiny_scale"));
    std::filesystem::create_symlink("/dev/zero", tmp.file("tiny_scale/zero.cu"));
    std::filesystem::create_symlink("loop.cu", tmp.file("tiny_scale/loop.cu"));
    ASSERT_EQ(mkfifo(tmp.file("tiny_scale/s.fifo").c_str(), 0600), 0);
    Json j = ValidJson();
    j["reference"]["kernel"] = "zero.cu";
    j["seed"] = "s.fifo";
    j["golden"] = "loop.cu";
    Loaded r = LoadText(tmp, j.dump(2));
    ExpectError(r, "reference.kernel", "file 'zero.cu' in " + tmp.file("tiny_scale") + " is a device, not a regular file");
    ExpectError(r, "seed", "is a FIFO, not a regular file");
    ExpectError(r, "golden", "is a symbolic link loop");
  }
  // A UTF-8 byte order mark before the JSON is accepted (editors write one; it carries nothing).
  {
    TempDir tmp;
    Loaded bom = LoadText(tmp, "\xEF\xBB\xBF" + ValidJson().dump(2));
    EXPECT_TRUE(bom.ok) << bom.Report();
  }
  // A path that goes down and back up without leaving the folder is fine.
  Loaded fine = LoadEdited([](Json& j) { j["seed"] = "families/../seed.cu"; });
  EXPECT_TRUE(fine.ok) << fine.Report();
}

// "seed": {"kernel", "params"} names one instance of a kernel file; its shape is checked at load,
// its values against the file's domains by LoadSeed, each error naming operator.json's field.
TEST(OperatorSpec, ASeedMayBeOneInstanceOfAFamily) {
  TempDir tmp;
  Json j = ValidJson();
  j["seed"] = {{"kernel", "families/vectorised.cu"}, {"params", {{"VEC", 2}, {"THREADS", 256}}}};
  Loaded r = LoadText(tmp, j.dump(2));
  ASSERT_TRUE(r.ok) << r.Report();
  EXPECT_EQ(r.spec.seed, "families/vectorised.cu");
  EXPECT_EQ(r.spec.seed_params, (std::map<std::string, int64_t>{{"THREADS", 256}, {"VEC", 2}}));
  EXPECT_EQ(r.spec.SeedText(), "families/vectorised.cu at THREADS=256, VEC=2");
  Candidate seed;
  Diagnostics diags;
  ASSERT_TRUE(LoadSeed(r.spec, &seed, &diags)) << FormatDiagnostics(diags);
  EXPECT_FALSE(seed.manifest.IsFamily()) << "both domains narrowed to the seed's values";
  for (const ParamSpec& p : seed.manifest.params)
    EXPECT_EQ(p.values, std::vector<int64_t>{r.spec.seed_params.at(p.name)}) << p.name;
  EXPECT_EQ(seed.source, ReadFile(tmp.file("tiny_scale/families/vectorised.cu"))) << "the file's own text";

  // Pinning one param leaves the other's domain: the seed is then a search space.
  j["seed"]["params"] = {{"VEC", 4}};
  Loaded partial = LoadText(tmp, j.dump(2));
  ASSERT_TRUE(partial.ok) << partial.Report();
  ASSERT_TRUE(LoadSeed(partial.spec, &seed, &diags)) << FormatDiagnostics(diags);
  EXPECT_TRUE(seed.manifest.IsFamily());

  // A value outside the file's domain, or a param it does not have, is refused naming the field.
  j["seed"]["params"] = {{"VEC", 8}, {"WARPS", 4}};
  Loaded outside = LoadText(tmp, j.dump(2));
  ASSERT_TRUE(outside.ok) << outside.Report();
  diags.clear();
  EXPECT_FALSE(LoadSeed(outside.spec, &seed, &diags));
  ASSERT_EQ(diags.size(), 2u) << FormatDiagnostics(diags);
  EXPECT_EQ(diags[0].field, "seed.params.VEC");
  EXPECT_NE(diags[0].message.find("8 is not in families/vectorised.cu's domain of VEC [4, 2, 1]: an instance is one its "
                                  "file declares"),
            std::string::npos)
      << diags[0].str();
  EXPECT_NE(diags[0].file.find("operator.json"), std::string::npos);
  EXPECT_EQ(diags[1].field, "seed.params.WARPS");
  EXPECT_NE(diags[1].message.find("has no param 'WARPS'; its params are VEC, THREADS"), std::string::npos)
      << diags[1].str();

  // A plain file name loads as before.
  Loaded plain = LoadEdited([](Json&) {});
  ASSERT_TRUE(plain.ok);
  EXPECT_TRUE(plain.spec.seed_params.empty());
  EXPECT_EQ(plain.spec.SeedText(), "seed.cu");
}

// "reference": {"kernel", "params"}: the expert reference as one instance of a file that a seed may
// share (attention_decode_paged_bf16's split_kv.cu is both).
TEST(OperatorSpec, AReferenceKernelMayBeOneInstanceOfAFamily) {
  TempDir tmp;
  Json j = ValidJson();
  j["reference"] = {{"kernel", "families/vectorised.cu"}, {"params", {{"VEC", 4}, {"THREADS", 128}}}};
  j["seed"] = "families/vectorised.cu";
  Loaded r = LoadText(tmp, j.dump(2));
  ASSERT_TRUE(r.ok) << r.Report();
  EXPECT_EQ(r.spec.reference.params, (std::map<std::string, int64_t>{{"THREADS", 128}, {"VEC", 4}}));
  EXPECT_EQ(ReferenceText(r.spec.reference), "kernel families/vectorised.cu at THREADS=128, VEC=4");
  Candidate reference, seed;
  Diagnostics diags;
  ASSERT_TRUE(LoadReferenceKernel(r.spec, &reference, &diags)) << FormatDiagnostics(diags);
  EXPECT_FALSE(reference.manifest.IsFamily());
  ASSERT_TRUE(LoadSeed(r.spec, &seed, &diags)) << FormatDiagnostics(diags);
  EXPECT_TRUE(seed.manifest.IsFamily()) << "the seed is the file's whole search space";

  j["reference"]["params"] = {{"THREADS", 512}};
  Loaded outside = LoadText(tmp, j.dump(2));
  ASSERT_TRUE(outside.ok) << outside.Report();
  diags.clear();
  EXPECT_FALSE(LoadReferenceKernel(outside.spec, &reference, &diags));
  ASSERT_EQ(diags.size(), 1u) << FormatDiagnostics(diags);
  EXPECT_EQ(diags[0].field, "reference.params.THREADS");

  ExpectError(LoadEdited([](Json& j2) { j2["reference"] = {{"library", "cublas.gemm_bf16"}, {"params", {{"VEC", 4}}}}; }),
              "reference.params", "a library reference takes none");
  ExpectError(LoadEdited([](Json& j2) { j2["reference"] = {{"kernel", "reference.cu"}, {"params", "VEC=4"}}; }),
              "reference.params", "expected an object of param values");
  Loaded library = LoadEdited([](Json& j2) { j2["reference"] = {{"library", "cublas.gemm_bf16"}}; });
  ASSERT_TRUE(library.ok) << library.Report();
  diags.clear();
  EXPECT_FALSE(LoadReferenceKernel(library.spec, &reference, &diags));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("is a library call, not a kernel"), std::string::npos) << diags[0].str();
}

TEST(OperatorSpec, AMalformedSeedIsRefusedNamingTheField) {
  ExpectError(LoadEdited([](Json& j) { j["seed"] = 3; }), "seed", "expected \"file.cu\" or {\"kernel\"");
  ExpectError(LoadEdited([](Json& j) { j["seed"] = {{"params", {{"VEC", 2}}}}; }), "seed.kernel", "");
  ExpectError(LoadEdited([](Json& j) { j["seed"] = {{"kernel", "families/vectorised.cu"}}; }), "seed.params", "");
  ExpectError(LoadEdited([](Json& j) { j["seed"] = {{"kernel", "families/vectorised.cu"}, {"params", Json::object()}}; }),
              "seed.params", "an empty object");
  ExpectError(LoadEdited([](Json& j) { j["seed"] = {{"kernel", "families/vectorised.cu"}, {"params", {1, 2}}}; }),
              "seed.params", "expected an object of param values");
  ExpectError(LoadEdited([](Json& j) { j["seed"] = {{"kernel", "families/vectorised.cu"}, {"params", {{"VEC", "2"}}}}; }),
              "seed.params.VEC", "");
  ExpectError(LoadEdited([](Json& j) {
                j["seed"] = {{"kernel", "families/vectorised.cu"}, {"params", {{"VEC", 2}}}, {"parms", 1}};
              }),
              "seed.parms", "");
  ExpectError(LoadEdited([](Json& j) { j["seed"] = {{"kernel", "../x.cu"}, {"params", {{"VEC", 2}}}}; }), "seed.kernel",
              "not inside the operator folder");
}

TEST(OperatorSpec, PartitionInitLoads) {
  Loaded r = LoadWithPartition({{"dist", "partition"}, {"total", "N"}, {"multiple", 8}, {"min", 16}});
  ASSERT_TRUE(r.ok) << r.Report();
  const InitSpec& init = r.spec.tensors[2].init;
  EXPECT_EQ(init.dist, "partition");
  EXPECT_EQ(init.total_expr, "N");
  EXPECT_EQ(init.multiple, 8);
  EXPECT_EQ(init.part_min, 16);
  Loaded defaults = LoadWithPartition({{"dist", "partition"}, {"total", 1000}});
  ASSERT_TRUE(defaults.ok) << defaults.Report();
  EXPECT_EQ(defaults.spec.tensors[2].init.multiple, 1);
  EXPECT_EQ(defaults.spec.tensors[2].init.part_min, 0);
}

TEST(OperatorSpec, PartitionInitErrorsNameTheField) {
  const Json base = {{"dist", "partition"}, {"total", "N"}, {"multiple", 8}};
  auto with = [&](const char* key, Json value) {
    Json j = base;
    j[key] = std::move(value);
    return j;
  };
  ExpectError(LoadWithPartition(with("total", "N + 1")), "tensors[2].init.total",
              "under config 'small': total 1001 is not a multiple of 8");
  ExpectError(LoadWithPartition(with("total", "M")), "tensors[2].init.total", "unknown name 'M'");
  ExpectError(LoadWithPartition(with("total", "N - 2000")), "tensors[2].init.total", "must be at least 0");
  ExpectError(LoadWithPartition(with("multiple", 0)), "tensors[2].init.multiple", "at least 1");
  ExpectError(LoadWithPartition(with("multiple", 2.5)), "tensors[2].init.multiple", "integer");
  ExpectError(LoadWithPartition(with("min", 200)), "tensors[2].init.total", "8 parts of at least 200 exceed total 1000");
  ExpectError(LoadWithPartition(with("minimum", 1)), "tensors[2].init.minimum", "unknown field");
  ExpectError(LoadWithPartition(base, "f32"), "tensors[2].init.dist", "partition needs an integer dtype");
  ExpectError(LoadWithPartition(base, "u8"), "tensors[2].init.total", "does not fit u8");
  Json no_total = base;
  no_total.erase("total");
  ExpectError(LoadWithPartition(no_total), "tensors[2].init.total", "missing");
}

TEST(OperatorSpec, LooseToleranceIsAllowedForDistributionChecks) {
  Loaded r = LoadEdited([](Json& j) {
    j["tolerance"]["rel_l2"] = 2.0;
    j["tolerance"]["check"] = "distribution";
  });
  EXPECT_TRUE(r.ok) << r.Report();
  EXPECT_EQ(r.spec.tolerance.check, "distribution");
}

TEST(OperatorSpec, ExactToleranceNeedsNoBounds) {
  Loaded r = LoadEdited([](Json& j) { j["tolerance"] = {{"exact", true}, {"why", "integer outputs"}}; });
  EXPECT_TRUE(r.ok) << r.Report();
  EXPECT_TRUE(r.spec.tolerance.exact);
}

TEST(OperatorSpec, NumberOverflowIsLocated) {
  TempDir tmp;
  std::string text = ValidJson().dump(2);
  size_t at = text.find("\"max_abs\": 1e-06");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 16, "\"max_abs\": 1e999");
  Loaded r = LoadText(tmp, text);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_NE(r.diags[0].message.find("1e999"), std::string::npos) << r.diags[0].str();
  EXPECT_EQ(r.diags[0].column, static_cast<int>(at + 11 - text.rfind('\n', at)));
}

TEST(OperatorSpec, DuplicateKeysAreReported) {
  TempDir tmp;
  std::string text = ValidJson().dump(2);
  text.replace(text.find("\"flops\""), 7, "\"bytes\": \"N\",\n  \"flops\"");
  Loaded r = LoadText(tmp, text);
  ExpectError(r, "bytes", "appears twice");
}

TEST(OperatorSpec, ReportsEveryProblemAtOnce) {
  Loaded r = LoadEdited([](Json& j) {
    j["category"] = "nope";
    j["tensors"][0]["dtype"] = "float";
    j.erase("flops");
    j["tolerance"]["rel_l2"] = 5;
    j["seed"] = "missing.cu";
  });
  EXPECT_FALSE(r.ok);
  for (const char* field : {"category", "tensors[0].dtype", "flops", "tolerance.rel_l2", "seed"})
    EXPECT_NE(r.Find(field), nullptr) << field << " not reported:\n" << r.Report();
}

TEST(OperatorSpec, ListsAndResolvesOperators) {
  std::vector<std::string> dirs = ListOperatorDirs(Fixtures());
  ASSERT_GE(dirs.size(), 5u);
  for (size_t i = 1; i < dirs.size(); ++i)
    EXPECT_LT(fs::path(dirs[i - 1]).filename(), fs::path(dirs[i]).filename());
  EXPECT_TRUE(ListOperatorDirs("/nonexistent/forgek").empty());

  std::string dir, err;
  ASSERT_TRUE(ResolveOperator(Fixtures(), "tiny_scale", &dir, &err)) << err;
  EXPECT_EQ(fs::path(dir).filename(), "tiny_scale");
  ASSERT_TRUE(ResolveOperator(Fixtures(), "scale", &dir, &err)) << err;
  EXPECT_EQ(fs::path(dir).filename(), "tiny_scale");
  EXPECT_FALSE(ResolveOperator(Fixtures(), "tiny_scael", &dir, &err));
  EXPECT_NE(err.find("unknown operator 'tiny_scael'"), std::string::npos) << err;
  EXPECT_NE(err.find("did you mean tiny_scale"), std::string::npos) << err;
  EXPECT_FALSE(ResolveOperator(Fixtures(), "zzzzzzzzzzzz", &dir, &err));
  EXPECT_NE(err.find("known operators"), std::string::npos) << err;
}

TEST(DType, NamesSizesAndKinds) {
  DType t;
  ASSERT_TRUE(ParseDType("bf16", &t));
  EXPECT_EQ(t, DType::bf16);
  EXPECT_EQ(DTypeBytes(t), 2);
  EXPECT_TRUE(DTypeIsFloat(t));
  EXPECT_FALSE(ParseDType("float32", &t));
  EXPECT_FALSE(ParseDType("", &t));
  EXPECT_FALSE(ParseDType("BF16", &t));
  const std::pair<DType, int> sizes[] = {{DType::f64, 8}, {DType::f32, 4},  {DType::f16, 2},  {DType::bf16, 2},
                                         {DType::e4m3, 1}, {DType::e5m2, 1}, {DType::i8, 1},   {DType::u8, 1},
                                         {DType::i32, 4}, {DType::u32, 4},  {DType::i64, 8}};
  for (auto [type, bytes] : sizes) {
    DType back;
    ASSERT_TRUE(ParseDType(DTypeName(type), &back)) << DTypeName(type);
    EXPECT_EQ(back, type);
    EXPECT_EQ(DTypeBytes(type), bytes) << DTypeName(type);
  }
  EXPECT_FALSE(DTypeIsFloat(DType::i32));
  EXPECT_FALSE(DTypeIsFloat(DType::u8));
  EXPECT_TRUE(DTypeIsFloat(DType::e4m3));
}

// num_sms is the device's SM count (docs/expressions.md): an operator param of that name would hide
// it, and an operator's shapes, FLOP and byte formulas are the same on every device, so they cannot
// read it.
TEST(OperatorSpec, AParamNamedNumSmsIsRefusedAsReserved) {
  Loaded r = LoadEdited([](Json& j) { j["params"].push_back("num_sms"); });
  ExpectError(r, "params[1]", "'num_sms' is reserved");
}

TEST(OperatorSpec, AShapeCannotReadNumSms) {
  Loaded r = LoadEdited([](Json& j) { j["tensors"][0]["shape"][0] = "N*num_sms"; });
  ExpectError(r, "tensors[0].shape[0]", "num_sms");
}

}  // namespace
}  // namespace forgek
