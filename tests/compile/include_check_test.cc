// The #include pre-check: literal, relative names pass; paths to host files, '..' and names made
// by macros are located errors; comments and strings hide nothing and fake nothing.
#include <gtest/gtest.h>

#include "compile/include_check.h"

namespace forgek {
namespace {

std::vector<CompileMessage> Check(const std::string& source) { return CheckIncludes(source, "k.cu"); }

TEST(IncludeCheck, ToolkitHeadersByRelativeNamePass) {
  EXPECT_TRUE(Check("#include <cuda_bf16.h>\n#  include \"cuda/barrier\"\n#include <cuda.h>\n"
                    "#include <cub/block/block_reduce.cuh> // comment\n#pragma once\n#define X 1\n")
                  .empty());
}

TEST(IncludeCheck, AbsolutePathsAreRefusedWithLineAndColumn) {
  auto m = Check("int a;\n  #include \"/proc/self/environ\"\n#include </etc/passwd>\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].file, "k.cu");
  EXPECT_EQ(m[0].line, 2);
  EXPECT_EQ(m[0].column, 3);
  EXPECT_EQ(m[0].severity, "error");
  EXPECT_NE(m[0].message.find("#include \"/proc/self/environ\" names an absolute path"), std::string::npos)
      << m[0].message;
  EXPECT_EQ(m[1].line, 3);
  EXPECT_NE(m[1].message.find("#include </etc/passwd>"), std::string::npos) << m[1].message;
}

TEST(IncludeCheck, ClimbingOutAndBackslashesAreRefused) {
  auto m = Check("#include \"../../.env\"\n#include <cuda/../../../etc/x>\n#include \"a\\\\b.h\"\n#include \"..\"\n");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_NE(m[0].message.find("climbs out with '..'"), std::string::npos);
  EXPECT_NE(m[1].message.find("climbs out with '..'"), std::string::npos);
  EXPECT_NE(m[2].message.find("backslash"), std::string::npos);
  EXPECT_NE(m[3].message.find("climbs out"), std::string::npos);
  EXPECT_TRUE(Check("#include \"..hidden/a..b.h\"\n").empty()) << "'..' inside a name is no climb";
}

TEST(IncludeCheck, ANameMadeByAMacroIsRefused) {
  auto m = Check("#define H \"/proc/self/environ\"\n#include H\n#include_next MACRO(x)\n#include\n");
  ASSERT_EQ(m.size(), 3u);
  for (const CompileMessage& msg : m) EXPECT_NE(msg.message.find("literally"), std::string::npos) << msg.message;
  EXPECT_EQ(m[0].line, 2);
}

TEST(IncludeCheck, EveryIncludingDirectiveIsChecked) {
  auto m = Check("#include_next \"/a\"\n#import \"/b\"\n#embed \"/c\"\n# /* gap */ include \"/d\"\n");
  EXPECT_EQ(m.size(), 4u);
}

TEST(IncludeCheck, SplicedLinesAreJoinedAsThePreprocessorDoes) {
  auto m = Check("#inc\\\nlude \"/etc/\\\npasswd\"\nint x;\n#include \"/x\"\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].line, 1);
  EXPECT_EQ(m[1].line, 5) << "line numbers count physical lines";
}

TEST(IncludeCheck, CommentsAndStringsAreNoDirectives) {
  EXPECT_TRUE(Check("// #include \"/etc/passwd\"\n/* #include \"/etc/passwd\"\n#include \"/x\" */\n"
                    "const char* s = \"#include \\\"/etc/passwd\\\"\";\nint y; // \\\n#include \"/spliced-into-comment\"\n")
                  .empty());
  // A "//" inside a header name is no comment, and a comment after the name hides nothing.
  auto m = Check("#include \"//etc/passwd\"\n#include /* x */ \"/y\" // z\n");
  EXPECT_EQ(m.size(), 2u);
}

TEST(IncludeCheck, ControlCharactersAreNotEchoed) {
  auto m = Check(std::string("#include \"/a\x1b[2Jb\"\n"));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].message.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace forgek
