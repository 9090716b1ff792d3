// The device library's expansion: includes become the headers' text once each, the candidate's
// lines keep their numbers, unknown names are located errors, and collapsing gives back the includes.
#include <gtest/gtest.h>

#include "forgek/core/device_library.h"
#include "forgek/core/hash.h"

namespace forgek {
namespace {

const DeviceLibrary kLibrary = {
    {"forgek/common.cuh", "// common: shared helpers\n#pragma once\n#define FK_DEVICE __device__\n"},
    {"forgek/reduce.cuh",
     "// reduce: warp sums\n// fk::warp_sum(x) - sum over a warp\n#pragma once\n#include <forgek/common.cuh>\n"
     "#include <cuda_bf16.h>\nFK_DEVICE float warp_sum(float x);\n"},
};

std::string Expand(const std::string& source, const DeviceLibrary& library = kLibrary) {
  std::string out;
  ExpandError err;
  EXPECT_TRUE(ExpandDeviceLibrary(source, &out, &err, library)) << err.message;
  return out;
}

TEST(DeviceLibrary, ASourceWithoutLibraryIncludesIsUnchanged) {
  const std::string src = "/* forgek {} */\n#include <cuda_bf16.h>\n// #include <forgek/nothing.cuh>\nint x;\n";
  EXPECT_EQ(Expand(src), src);
}

TEST(DeviceLibrary, IncludesBecomeTheHeadersOnceEachAndLinesKeepTheirNumbers) {
  const std::string src =
      "/* forgek {} */\n"
      "#include <forgek/reduce.cuh>\n"
      "#include \"forgek/common.cuh\"\n"
      "int own_line_4;\n";
  const std::string out = Expand(src);
  EXPECT_EQ(out,
            "/* forgek {} */\n"
            "// forgek device library: begin <forgek/reduce.cuh>\n"
            "// reduce: warp sums\n// fk::warp_sum(x) - sum over a warp\n#pragma once\n"
            "// forgek device library: begin <forgek/common.cuh>\n"
            "// common: shared helpers\n#pragma once\n#define FK_DEVICE __device__\n"
            "// forgek device library: end <forgek/common.cuh>\n"
            "#include <cuda_bf16.h>\nFK_DEVICE float warp_sum(float x);\n"
            "// forgek device library: end <forgek/reduce.cuh>\n"
            "#line 3\n"
            "// forgek device library: already expanded above <forgek/common.cuh>\n"
            "#line 4\n"
            "int own_line_4;\n");
  EXPECT_EQ(Expand(out), out) << "expanding is idempotent";
}

TEST(DeviceLibrary, ASplicedIncludeIsRenumberedAfterItsLastLine) {
  const std::string out = Expand("#include \\\n  <forgek/common.cuh>\nint line_3;\n");
  EXPECT_NE(out.find("#line 3\nint line_3;\n"), std::string::npos) << out;
}

TEST(DeviceLibrary, IncludesInCommentsAreLeftAlone) {
  const std::string src = "/*\n#include <forgek/common.cuh>\n*/\nint x;\n";
  EXPECT_EQ(Expand(src), src);
}

TEST(DeviceLibrary, AnUnknownHeaderIsALocatedErrorNamingWhatExists) {
  std::string out = "untouched";
  ExpandError err;
  EXPECT_FALSE(ExpandDeviceLibrary("int a;\n  #include <forgek/tma.cuh>\n", &out, &err, kLibrary));
  EXPECT_EQ(out, "untouched");
  EXPECT_EQ(err.line, 2);
  EXPECT_EQ(err.column, 3);
  EXPECT_NE(err.message.find("<forgek/tma.cuh>: forgek's device library has no such header"), std::string::npos)
      << err.message;
  EXPECT_NE(err.message.find("forgek/common.cuh, forgek/reduce.cuh"), std::string::npos) << err.message;
  EXPECT_EQ(ExpandedSource("#include <forgek/tma.cuh>\n", kLibrary), "#include <forgek/tma.cuh>\n");
}

TEST(DeviceLibrary, AnIncludeAddedToAnExpandedSourceDoesNotRepeatAHeader) {
  const std::string stored = Expand("#include <forgek/common.cuh>\nint a;\n");
  const std::string out = Expand(stored + "#include <forgek/reduce.cuh>\n");
  EXPECT_EQ(out.find("#define FK_DEVICE"), out.rfind("#define FK_DEVICE")) << out;
  EXPECT_NE(out.find("already expanded above <forgek/common.cuh>"), std::string::npos) << out;
}

TEST(DeviceLibrary, CollapsingGivesBackTheIncludesOfThisLibrary) {
  const std::string src = "/* forgek {} */\n#include <forgek/reduce.cuh>\n#include <forgek/common.cuh>\nint x;\n";
  const std::string out = Expand(src);
  EXPECT_EQ(CollapseDeviceLibrary(out, kLibrary), src);
  // Written with another version of a header, the block is shown as it is: that is the code that ran.
  DeviceLibrary edited = kLibrary;
  edited[0].text += "#define FK_NEW 1\n";
  EXPECT_EQ(CollapseDeviceLibrary(out, edited), out);
  EXPECT_EQ(CollapseDeviceLibrary("int x;\n", kLibrary), "int x;\n");
}

TEST(DeviceLibrary, TheApiIsEachHeadersOpeningComment) {
  const std::string api = DeviceLibraryApi(kLibrary);
  EXPECT_EQ(api,
            "#include <forgek/common.cuh>\n// common: shared helpers\n\n"
            "#include <forgek/reduce.cuh>\n// reduce: warp sums\n// fk::warp_sum(x) - sum over a warp\n\n");
}

TEST(DeviceLibrary, TheShippedLibraryExpandsEveryHeaderAndDocumentsIt) {
  const DeviceLibrary& shipped = ShippedDeviceLibrary();
  ASSERT_FALSE(shipped.empty());
  for (const DeviceHeader& h : shipped) {
    EXPECT_TRUE(IsDeviceLibraryName(h.name)) << h.name;
    std::string out;
    ExpandError err;
    EXPECT_TRUE(ExpandDeviceLibrary("#include <" + h.name + ">\n", &out, &err)) << h.name << ": " << err.message;
    EXPECT_EQ(out.find("#include <forgek/"), std::string::npos) << h.name << " left a library include";
    EXPECT_NE(DeviceLibraryApi({h}).find("\n//"), std::string::npos) << h.name << " opens with no API comment";
  }
}

TEST(DeviceLibrary, ACandidatesIdentityCoversTheLibraryCodeItIncludes) {
  const std::string src = "#include <forgek/" + ShippedDeviceLibrary().front().name.substr(7) + ">\nint x;\n";
  // The hash of the source as written and of its expansion are one identity...
  EXPECT_EQ(CandidateHash(src, {{"B", 1}}), CandidateHash(ExpandedSource(src), {{"B", 1}}));
  // ...and another text of the header would be another candidate.
  EXPECT_NE(CandidateHash(src, {{"B", 1}}), CandidateHash("#include <cuda_bf16.h>\nint x;\n", {{"B", 1}}));
  EXPECT_NE(ExpandedSource(src), src);
}

}  // namespace
}  // namespace forgek
