// The C generated from expressions (expr_c.h), compiled with the system's C compiler and run: it
// agrees with Expr::Eval on values and on errors, for every operator and function, on random sizes.
#include "forgek/core/expr_c.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>

#include "forgek/core/subprocess.h"
#include "test_util.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;

// Compiles and links `argv` (the compiler first); the compiler's output on failure.
bool Compile(const std::vector<std::string>& argv, std::string* log) {
  ProcessOutput r = RunProcess(argv, 300);
  *log = r.out + r.err;
  return r.started && r.exit_code == 0;
}

// Whether `cc` can build and run a program with the sanitizers, which turn any undefined behaviour
// of the generated code (a signed overflow the checks missed) into a failure.
bool SanitizersWork(const std::string& cc, const TempDir& dir) {
  WriteFile(dir.file("probe.c"), "int main(void) { return 0; }\n");
  std::string log;
  if (!Compile({cc, "-fsanitize=undefined,address", "-o", dir.file("probe"), dir.file("probe.c")}, &log)) return false;
  return RunProcess({dir.file("probe")}, 60).exit_code == 0;
}

// Every operator, every function, short-circuits guarding errors, literals at the edges of int64,
// and long chains (flat in the tree and in the C).
std::vector<std::string> Expressions() {
  std::vector<std::string> e = {
      "a + b", "a - b", "a * b", "a / b", "a % b", "-a", "!a", "- -a", "-(-a)", "!!a",
      "a < b", "a <= b", "a > b", "a >= b", "a == b", "a != b",
      "a && b", "a || b", "a && b && c", "a || b || c", "!a || b && c", "a < b && b < c || a == c",
      "b != 0 && a / b > 1", "a == 0 || b / a >= 0", "0 && a / 0", "1 || a % 0", "a && b / c",
      "ceil_div(a, b)", "ceil_div(a * b, c + 1)", "min(a, b)", "max(a, b)", "min(a, b, c)", "max(a, b, c, 7)",
      "pow2(a)", "pow2(a % 64)", "log2(a)", "log2(a) + log2(b)", "log2(pow2(a % 63))",
      "a / 0", "a % 0", "ceil_div(a, 0)", "a / -1", "a % -1", "ceil_div(a, -1)",
      "a * b + c", "a * b * c - a / (b - c)", "(a + b) * (a - c) % (b + 1)", "1000000007 * a % 998244353",
      "9223372036854775807 + a", "a - 9223372036854775807 - 1", "0 - a", "pow2(62) * 2 + a", "-9223372036854775807 - 1 + a",
      "min(a, b) <= max(b, c) && !(a == c)", "max(ceil_div(a, 128), min(b, 132)) * c",
      "(a > 0) * (b > 0) * ceil_div(a, b)", "((((a + b) * c) - a) / (b + 1)) % (c - 1)",
  };
  std::string sum = "a", conj = "a", mixed = "a";
  for (int i = 1; i < 200; ++i) {
    sum += " + " + std::to_string(i);
    conj += " && b + " + std::to_string(i);
    mixed += (i % 3 == 0 ? " * 2" : i % 3 == 1 ? " - b" : " / 3");
  }
  e.push_back(sum);
  e.push_back(conj);
  e.push_back(mixed);
  std::string nested = "a";
  for (int i = 0; i < 40; ++i) nested = "(" + nested + " + b) * (c - " + std::to_string(i) + ")";
  e.push_back(nested);
  return e;
}

// Bindings of a, b, c: the values around every boundary the checks have, then random ones.
std::vector<std::vector<int64_t>> Bindings3(size_t random_count) {
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> edges = {0, 1, -1, 2, -2, 3, 7, 62, 63, 64, 128, -128, 1000, kMin, kMin + 1, kMax, kMax - 1,
                                      int64_t{1} << 31, -(int64_t{1} << 31), int64_t{1} << 32, 3037000499, 3037000500,
                                      -3037000500, int64_t{1} << 62, -(int64_t{1} << 62)};
  std::vector<std::vector<int64_t>> out = {{0, 0, 0}, {kMin, -1, 0}, {kMin, -1, -1}, {kMax, 1, 1}, {kMin, 1, -1},
                                           {-7, 2, 3}, {7, -2, 3}, {-7, -2, -3}, {3037000500, 3037000500, 1},
                                           {-3037000500, 3037000500, 2}, {kMin, kMin, kMin}, {kMax, kMax, kMax}};
  std::mt19937_64 rng(2718);
  std::uniform_int_distribution<size_t> pick(0, edges.size() - 1);
  std::uniform_int_distribution<int64_t> small(-300, 300), any(kMin, kMax);
  std::uniform_int_distribution<int> kind(0, 3), shift(0, 62);
  auto draw = [&]() -> int64_t {
    switch (kind(rng)) {
      case 0: return edges[pick(rng)];
      case 1: return small(rng);
      case 2: return any(rng);
      default: return any(rng) >> shift(rng);  // every magnitude
    }
  };
  while (out.size() < random_count) out.push_back({draw(), draw(), draw()});
  return out;
}

// One C function per expression, then a main that reads "a b c" lines and prints, per line and
// expression, "ok VALUE" or "err MESSAGE".
std::string Program(const std::vector<std::string>& exprs, std::string* err) {
  std::string c = "#include <stdint.h>\n#include <stdio.h>\n\n";
  for (size_t i = 0; i < exprs.size(); ++i) {
    Diagnostic d;
    std::unique_ptr<Expr> e = Expr::Parse(exprs[i], &d);
    if (!e) {
      *err = exprs[i] + ": " + d.message;
      return "";
    }
    int counter = 0;
    ExprCContext ctx;
    ctx.name = [](const std::string& name, std::string* out) {
      if (name != "a" && name != "b" && name != "c") return false;
      *out = name;
      return true;
    };
    ctx.on_error = [](const std::string& message) { return "*err = " + CStringLiteral(message) + "; return 0;"; };
    ctx.counter = &counter;
    std::string code, var;
    if (!EmitExprC(*e, ctx, &code, &var, err)) return "";
    c += "static int expr_" + std::to_string(i) +
         "(int64_t a, int64_t b, int64_t c, int64_t* out, const char** err) {\n"
         "  (void)a;\n  (void)b;\n  (void)c;\n  (void)err;\n" +
         code + "  *out = " + var + ";\n  return 1;\n}\n\n";
  }
  c += "typedef int (*expr_fn)(int64_t, int64_t, int64_t, int64_t*, const char**);\n";
  c += "static const expr_fn exprs[] = {";
  for (size_t i = 0; i < exprs.size(); ++i) c += (i ? ", " : "") + std::string("expr_") + std::to_string(i);
  c += "};\n\n"
       "int main(void) {\n"
       "  long long a, b, c;\n"
       "  while (scanf(\"%lld %lld %lld\", &a, &b, &c) == 3) {\n"
       "    size_t i;\n"
       "    for (i = 0; i < sizeof exprs / sizeof exprs[0]; ++i) {\n"
       "      int64_t v = 0;\n"
       "      const char* why = \"\";\n"
       "      if (exprs[i]((int64_t)a, (int64_t)b, (int64_t)c, &v, &why)) printf(\"ok %lld\\n\", (long long)v);\n"
       "      else printf(\"err %s\\n\", why);\n"
       "    }\n"
       "  }\n"
       "  return 0;\n"
       "}\n";
  return c;
}

TEST(ExprC, GeneratedCodeAgreesWithEvalOnRandomSizesAndErrors) {
  const std::string cc = FindInPath("cc"), cxx = FindInPath("c++");
  ASSERT_FALSE(cc.empty()) << "no `cc` in PATH: the generated C cannot be checked";
  ASSERT_FALSE(cxx.empty()) << "no `c++` in PATH";
  TempDir dir;
  const std::vector<std::string> exprs = Expressions();
  std::string err;
  const std::string program = Program(exprs, &err);
  ASSERT_TRUE(err.empty()) << err;
  WriteFile(dir.file("exprs.c"), program);

  std::string log;
  // As C++ too: the short-circuit gotos must cross no initialisation.
  ASSERT_TRUE(Compile({cxx, "-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-x", "c++", "-fsyntax-only",
                       dir.file("exprs.c")},
                      &log))
      << log;
  std::vector<std::string> argv = {cc, "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-O2"};
  if (SanitizersWork(cc, dir)) {
    for (const char* f : {"-fsanitize=undefined,address", "-fno-sanitize-recover=all"}) argv.push_back(f);
  }
  for (const std::string& a : {std::string("-o"), dir.file("exprs"), dir.file("exprs.c")}) argv.push_back(a);
  ASSERT_TRUE(Compile(argv, &log)) << log;

  const std::vector<std::vector<int64_t>> bindings = Bindings3(400);
  std::string input;
  for (const auto& b : bindings) input += std::to_string(b[0]) + " " + std::to_string(b[1]) + " " + std::to_string(b[2]) + "\n";
  ProcessOptions opts;
  opts.timeout_s = 120;
  opts.stdin_data = input;
  ProcessRun run = RunProcess({dir.file("exprs")}, opts);
  ASSERT_EQ(run.exit_code, 0) << run.err;

  std::stringstream lines(run.out);
  std::vector<std::unique_ptr<Expr>> parsed;
  for (const std::string& text : exprs) {
    Diagnostic d;
    parsed.push_back(Expr::Parse(text, &d));
  }
  int compared = 0, errors = 0;
  for (const auto& b : bindings) {
    const forgek::Bindings vars = {{"a", b[0]}, {"b", b[1]}, {"c", b[2]}};
    for (size_t i = 0; i < exprs.size(); ++i) {
      std::string line;
      ASSERT_TRUE(std::getline(lines, line)) << "the program stopped early";
      int64_t want = 0;
      Diagnostic d;
      const bool ok = parsed[i]->Eval(vars, &want, &d);
      SCOPED_TRACE(exprs[i].substr(0, 80) + " with a=" + std::to_string(b[0]) + " b=" + std::to_string(b[1]) +
                   " c=" + std::to_string(b[2]));
      if (ok) {
        EXPECT_EQ(line, "ok " + std::to_string(want));
      } else {
        ASSERT_EQ(line.rfind("err ", 0), 0u) << line << "; Eval: " << d.message;
        const std::string message = line.substr(4);
        EXPECT_FALSE(message.empty());
        EXPECT_EQ(d.message.rfind(message, 0), 0u) << "C: " << message << "; Eval: " << d.message;
        ++errors;
      }
      ++compared;
    }
  }
  std::string rest;
  EXPECT_FALSE(std::getline(lines, rest)) << "more output than expected: " << rest;
  EXPECT_GT(errors, compared / 20) << "the bindings reach the errors too";
  EXPECT_LT(errors, compared / 2) << "and mostly values";
}

TEST(ExprC, AnUnboundNameIsAnErrorOfTheGeneration) {
  Diagnostic d;
  std::unique_ptr<Expr> e = Expr::Parse("M + ceil_div(N, BN)", &d);
  ASSERT_TRUE(e);
  int counter = 0;
  ExprCContext ctx;
  ctx.name = [](const std::string& name, std::string* out) {
    *out = "v_" + name;
    return name != "BN";
  };
  ctx.on_error = [](const std::string&) { return std::string("return 0;"); };
  ctx.counter = &counter;
  std::string code, var, err;
  EXPECT_FALSE(EmitExprC(*e, ctx, &code, &var, &err));
  EXPECT_EQ(err, "'M + ceil_div(N, BN)': unknown name 'BN'");
  EXPECT_TRUE(code.empty()) << "nothing is appended on failure: " << code;
}

TEST(ExprC, StringLiteralsRoundTripThroughTheCompiler) {
  const std::string cc = FindInPath("cc");
  ASSERT_FALSE(cc.empty());
  const std::string text = std::string("quote \" backslash \\ newline \n tab \t trigraph ?" "?= ?" "?/ bytes \x01") + "7 " +
                           "\xc3\xa9 " + std::string(1, '\0') + " nul";
  TempDir dir;
  WriteFile(dir.file("lit.c"), "#include <stdio.h>\nstatic const char text[] = " + CStringLiteral(text) +
                                   ";\nint main(void) {\n  size_t i;\n  for (i = 0; i + 1 < sizeof text; ++i) "
                                   "printf(\"%02x\", (unsigned char)text[i]);\n  return 0;\n}\n");
  std::string log;
  ASSERT_TRUE(Compile({cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", dir.file("lit"), dir.file("lit.c")}, &log))
      << log;
  ProcessOutput run = RunProcess({dir.file("lit")}, 60);
  std::string want;
  for (unsigned char c : text) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x", c);
    want += buf;
  }
  EXPECT_EQ(run.out, want);
}

}  // namespace
}  // namespace forgek
