// Exporting a seal as C: a header and a source that plan and launch it with the CUDA driver API alone.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "forgek/core/atomic_file.h"
#include "forgek/core/candidate.h"
#include "forgek/core/device_library.h"
#include "forgek/core/expr_c.h"
#include "forgek/core/hash.h"
#include "forgek/core/json_parse.h"
#include "forgek/core/params.h"
#include "forgek/core/spec_limits.h"
#include "forgek/seal/incumbent.h"
#include "forgek/seal/seal.h"
#include "export_folder.h"

namespace forgek {
namespace fs = std::filesystem;
namespace {

// The bounds ResolveCandidate applies (src/core/candidate_resolve.cc): the generated plan refuses
// exactly the sizes forgek's own resolution refuses, so that a dispatch's fallback "accepts" a shape
// in the C where it does in forgek.
constexpr int64_t kMaxGrid[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
constexpr int64_t kMaxBlock[3] = {1024, 1024, 64};
constexpr int64_t kMaxCluster[3] = {16, 16, 16};
constexpr int64_t kMaxBlockThreads = 1024;
constexpr int64_t kMaxClusterBlocks = 16;
constexpr int64_t kMaxTensorMapBox = 256;
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int kMessageBytes = 512;

// One kernel the export embeds: an entry of the seal's dispatch table, or the seal's own kernel.
struct CKernel {
  int entry = 0;  // its number in the C (plan.kernel): the dispatch entry, 0 for a seal of one kernel
  std::string label;
  std::string candidate_hash;
  Candidate candidate;
  ParamAssignment params;
  size_t cubin = 0;  // index into CSeal::cubins
};

// A row of a dispatch table: a suite config's values and the kernel serving them.
struct CRow {
  std::string config, why;
  Bindings values;
  int kernel = -1;        // index into CSeal::kernels; -1: the expert reference
  std::string reference;  // its label, for a reference row
};

struct CSeal {
  const SealRecord* seal = nullptr;
  const OperatorSpec* op = nullptr;
  std::string prefix, upper;  // forgek_<op>, FORGEK_<OP>
  std::vector<CKernel> kernels;
  std::vector<std::string> cubins, cubin_shas;
  bool dispatch = false;
  std::vector<CRow> rows;
  int fallback = 0;              // index into kernels; -1: the expert reference
  std::string reference;         // the expert reference's label, where the rule can reach it
  bool rebuilt = false;          // a cubin was compiled now (the store kept none)
};

// ---------------------------------------------------------------------------------------------
// Text helpers.

std::string Lit(int64_t v) { return v == kInt64Min ? "INT64_MIN" : "INT64_C(" + std::to_string(v) + ")"; }

// Free text inside a /* */ comment: nothing that closes or opens a comment or forms a trigraph.
std::string CommentText(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i], next = i + 1 < text.size() ? text[i + 1] : '\0';
    if ((c == '*' && next == '/') || (c == '/' && next == '*') || (c == '?' && next == '?')) {
      out += c;
      out += ' ';
    } else {
      out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  return out;
}

// Words wrapped into comment lines of at most `width` characters, each starting with " * ".
std::string CommentBlock(const std::string& text, size_t width = 96) {
  std::string out, line;
  size_t pos = 0;
  const std::string clean = CommentText(text);
  while (pos < clean.size()) {
    size_t end = clean.find(' ', pos);
    if (end == std::string::npos) end = clean.size();
    const std::string word = clean.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += " * " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += " * " + line + "\n";
  return out;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A name of the operator (tensor, scalar, size) as a parameter of the generated functions: as it
// is, unless C or C++ reserves it, a standard header defines it as a macro, it is one of the
// function's own parameters, or it starts like the generated locals (fk_, v_).
std::string CParamName(const std::string& name) {
  static const std::set<std::string> kReserved = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "alignas",
      "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch", "char8_t", "char16_t", "char32_t",
      "class", "compl", "concept", "consteval", "constexpr", "constinit", "const_cast", "co_await", "co_return",
      "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export", "false", "friend", "mutable",
      "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
      "public", "reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this", "thread_local",
      "throw", "true", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq", "NULL", "EOF",
      "errno", "stdin", "stdout", "stderr", "assert", "offsetof",
      // The generated functions' own parameters and locals.
      "stream", "workspace", "workspace_bytes", "plan", "bytes", "status", "context", "current", "popped", "scratch",
      "pushed", "allocated", "functions", "r", "i", "l", "e", "id", "link"};
  const bool underscore_upper = name.size() > 1 && name[0] == '_' && (std::isupper(static_cast<unsigned char>(name[1])) || name[1] == '_');
  if (kReserved.count(name) || underscore_upper || name.rfind("fk_", 0) == 0 || name.rfind("v_", 0) == 0 ||
      name.rfind("FK_", 0) == 0 || name.rfind("INT", 0) == 0 || name.rfind("UINT", 0) == 0)
    return "arg_" + name;
  return name;
}

// The operator's name as a C identifier: letters, digits and underscores, lower case.
std::string CIdentifierOf(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  return out;
}

std::string Upper(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

const char* TensorMapDataType(DType t) {
  switch (t) {
    case DType::f64: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT64";
    case DType::f32: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    case DType::f16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case DType::bf16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case DType::i32: return "CU_TENSOR_MAP_DATA_TYPE_INT32";
    case DType::u32: return "CU_TENSOR_MAP_DATA_TYPE_UINT32";
    case DType::i64: return "CU_TENSOR_MAP_DATA_TYPE_INT64";
    default: return "CU_TENSOR_MAP_DATA_TYPE_UINT8";  // fp8 and 8-bit integers move as bytes, as in the worker
  }
}

bool TensorMapEnum(const std::string& field, const std::string& value, std::string* out, std::string* err) {
  static const std::map<std::string, std::map<std::string, std::string>> kEnums = {
      {"swizzle",
       {{"none", "CU_TENSOR_MAP_SWIZZLE_NONE"}, {"", "CU_TENSOR_MAP_SWIZZLE_NONE"}, {"32B", "CU_TENSOR_MAP_SWIZZLE_32B"},
        {"64B", "CU_TENSOR_MAP_SWIZZLE_64B"}, {"128B", "CU_TENSOR_MAP_SWIZZLE_128B"}}},
      {"l2_promotion",
       {{"none", "CU_TENSOR_MAP_L2_PROMOTION_NONE"}, {"", "CU_TENSOR_MAP_L2_PROMOTION_NONE"},
        {"64B", "CU_TENSOR_MAP_L2_PROMOTION_L2_64B"}, {"128B", "CU_TENSOR_MAP_L2_PROMOTION_L2_128B"},
        {"256B", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"}}},
      {"oob_fill",
       {{"none", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"}, {"", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"},
        {"nan", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"}}}};
  const auto& values = kEnums.at(field);
  auto it = values.find(value);
  if (it == values.end()) {
    *err = field + " '" + value + "' has no driver value";
    return false;
  }
  *out = it->second;
  return true;
}

// ---------------------------------------------------------------------------------------------
// The statements of one generated C function that evaluate manifest and operator expressions.

class FunctionBody {
 public:
  // `bound`: the names the expressions may read, each held in a local `v_<name>`.
  FunctionBody(std::set<std::string> bound, std::string indent) : bound_(std::move(bound)), indent_(std::move(indent)) {}

  // Statements evaluating `text` (the value at `field`) into a new variable, named in *var; an
  // evaluation error returns from the function with "field: 'text': message", as ResolveCandidate words it.
  bool Eval(const std::string& field, const std::string& text, std::string* var, std::string* err) {
    return EvalWithPrefix(field, field + ": '" + text + "': ", text, var, err);
  }

  // Eval, an evaluation error returning "`prefix`message".
  bool EvalWithPrefix(const std::string& field, const std::string& prefix, const std::string& text, std::string* var,
                      std::string* err) {
    Diagnostic d;
    std::unique_ptr<Expr> e = Expr::Parse(text, &d);
    if (!e) {
      *err = field + ": '" + text + "': " + d.message;
      return false;
    }
    ExprCContext ctx;
    ctx.name = [this](const std::string& name, std::string* c) {
      if (!bound_.count(name)) return false;
      *c = "v_" + name;
      return true;
    };
    ctx.on_error = [&](const std::string& message) { return Fail(prefix + message); };
    ctx.counter = &counter_;
    ctx.indent = "  ";
    std::string code;
    if (!EmitExprC(*e, ctx, &code, var, err)) {
      *err = field + ": " + *err;
      return false;
    }
    // EmitExprC indents by ctx.indent; this function's blocks may sit deeper.
    size_t pos = 0;
    while (pos < code.size()) {
      size_t end = code.find('\n', pos);
      code_ += indent_ + code.substr(pos + 2, end - pos - 2) + "\n";
      pos = end + 1;
    }
    return true;
  }

  // Eval, then the value must lie in [lo, hi] (bounds at int64's ends are not compared: always true).
  bool EvalIn(const std::string& field, const std::string& text, int64_t lo, int64_t hi, std::string* var,
              std::string* err) {
    if (!Eval(field, text, var, err)) return false;
    std::string cond;
    if (lo != kInt64Min) cond = *var + " < " + Lit(lo);
    if (hi != kInt64Max) cond += (cond.empty() ? "" : " || ") + *var + " > " + Lit(hi);
    if (!cond.empty())
      Line("if (" + cond + ") return " +
           FailValue(field + ": '" + text + "' is ", *var,
                     "; must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]") +
           ";");
    return true;
  }

  static std::string Fail(const std::string& message) {
    return "return fk_fail(plan, " + CStringLiteral(message) + ");";
  }
  // The call (no `return`) that fails with before + value + after.
  static std::string FailValue(const std::string& before, const std::string& value, const std::string& after) {
    return "fk_fail_value(plan, " + CStringLiteral(before) + ", " + value + ", " + CStringLiteral(after) + ")";
  }

  void Line(const std::string& text) { code_ += indent_ + text + "\n"; }
  void Open(const std::string& text) {
    Line(text);
    indent_ += "  ";
  }
  void Close(const std::string& text = "}") {
    indent_.resize(indent_.size() - 2);
    Line(text);
  }
  std::string Fresh(const std::string& what) { return "fk_" + what + std::to_string(counter_++); }
  const std::string& code() const { return code_; }

 private:
  std::set<std::string> bound_;
  std::string indent_;
  std::string code_;
  int counter_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The generated source.

class CWriter {
 public:
  explicit CWriter(const CSeal& s) : s_(s), op_(*s.op) {}

  bool Header(std::string* out, std::string* err);
  bool Source(std::string* out, std::string* err);

 private:
  std::string T(const std::string& suffix) const { return s_.prefix + suffix; }
  std::string E(const std::string& suffix) const { return s_.upper + suffix; }
  std::string Status() const { return T("_status"); }
  std::string Plan() const { return T("_launch_plan"); }

  size_t MaxOf(size_t (*count)(const CKernel&)) const {
    size_t n = 1;  // arrays of the plan keep at least one element: C has no empty arrays
    for (const CKernel& k : s_.kernels) n = std::max(n, count(k));
    return n;
  }
  size_t MaxLaunches() const { return MaxOf([](const CKernel& k) { return k.candidate.manifest.launches.size(); }); }
  size_t MaxWorkspaces() const { return MaxOf([](const CKernel& k) { return k.candidate.manifest.workspaces.size(); }); }
  size_t MaxTensorMaps() const { return MaxOf([](const CKernel& k) { return k.candidate.manifest.tensor_maps.size(); }); }
  size_t MaxArgs() const {
    return MaxOf([](const CKernel& k) {
      size_t n = 0;
      for (const LaunchSpec& l : k.candidate.manifest.launches) n = std::max(n, l.args.size());
      return n;
    });
  }
  int Entries() const {
    int n = 0;
    for (const CKernel& k : s_.kernels) n = std::max(n, k.entry + 1);
    return n;
  }

  // "int64_t M, int64_t N": the operator's sizes as parameters.
  std::string SizeParams() const {
    std::string out;
    for (const std::string& p : op_.params) out += (out.empty() ? "" : ", ") + std::string("int64_t ") + CParamName(p);
    return out;
  }
  std::string SizeArgs() const {
    std::string out;
    for (const std::string& p : op_.params) out += (out.empty() ? "" : ", ") + CParamName(p);
    return out;
  }
  std::string TensorParams() const {
    std::string out;
    for (const TensorSpec& t : op_.tensors)
      out += (t.role == TensorRole::input ? "const void* " : "void* ") + CParamName(t.name) + ", ";
    return out;
  }
  static std::string ScalarType(DType t) {
    return t == DType::f32 ? "float" : t == DType::i64 ? "int64_t" : "int32_t";
  }
  std::string ScalarParams() const {
    std::string out;
    for (const ScalarSpec& sc : op_.scalars) out += ScalarType(sc.dtype) + " " + CParamName(sc.name) + ", ";
    return out;
  }
  std::string TensorAndScalarArgs() const {
    std::string out;
    for (const TensorSpec& t : op_.tensors) out += CParamName(t.name) + ", ";
    for (const ScalarSpec& sc : op_.scalars) out += CParamName(sc.name) + ", ";
    return out;
  }
  std::string ShapeText(const TensorSpec& t) const {
    std::string out;
    for (const std::string& d : t.shape) out += (out.empty() ? "" : ", ") + d;
    return "[" + out + "]";
  }

  std::string HeaderComment() const;
  std::string HeaderTypes() const;
  std::string HeaderFunctions() const;
  std::string Cubins() const;
  std::string MessageHelpers() const;
  bool TensorCheck(std::string* out, std::string* err) const;
  bool KernelPlan(const CKernel& k, std::string* out, std::string* err) const;
  bool PlanWorkspaces(const CKernel& k, FunctionBody& f, std::vector<std::string>* ws_vars, std::string* err) const;
  bool PlanTensorMaps(const CKernel& k, FunctionBody& f, const std::vector<std::string>& ws_vars,
                      std::string* err) const;
  bool PlanLaunch(const CKernel& k, size_t i, FunctionBody& f, std::string* err) const;
  std::string PublicPlan() const;
  std::string ModuleCache() const;
  bool KernelLaunch(const CKernel& k, std::string* out, std::string* err) const;
  std::string PublicCall() const;

  const CSeal& s_;
  const OperatorSpec& op_;
};

std::string CWriter::HeaderComment() const {
  const SealRecord& seal = *s_.seal;
  std::string c = "/* " + s_.prefix + ".h: seal " + CommentText(seal.id) + " of operator " + CommentText(op_.name) +
                  ", exported by forgek " FORGEK_VERSION " as C.\n";
  c += " * Generated from the knowledge store (`forgek seal export " + CommentText(seal.id.substr(0, 12)) +
       " DIR --lang c`): export again rather than edit.\n *\n";
  c += CommentBlock(op_.description);
  c += " *\n";
  c += CommentBlock("Sealed on " + seal.device + " (" + seal.arch + ") with " + seal.toolchain +
                    (seal.driver.empty() ? "" : ", driver " + seal.driver) + ", " + seal.created_at + ". The cubins are " +
                    (s_.rebuilt ? "rebuilt by nvrtc " + Compiler::NvrtcVersion() + " from the sealed sources"
                                : "the sealed ones the store keeps") +
                    "; they load on GPUs of that architecture only.");
  c += " *\n * Kernels (plan.kernel):\n";
  for (const CKernel& k : s_.kernels)
    c += CommentBlock(std::to_string(k.entry) + ": " + k.label + ", candidate " + k.candidate_hash.substr(0, 12) +
                      ", params " + ParamsJson(k.params) + ".");
  if (s_.dispatch) {
    c += " *\n" + CommentBlock("A dispatch seal. Which kernel serves given sizes follows the seal's one rule (forgek's "
                               "docs/seal-format.md): the table row whose values equal the sizes; else the fallback "
                               "where its manifest accepts them; else the expert reference, which this export does "
                               "not hold (" + s_.reference + "): such sizes return " + E("_UNSUPPORTED_SIZE") +
                               " with a message that says so. The table:");
    for (const CRow& r : s_.rows)
      c += CommentBlock("  " + r.config + ": " +
                        (r.kernel < 0 ? "the expert reference" : "kernel " + std::to_string(s_.kernels[r.kernel].entry)) +
                        " (" + r.why + ")");
    c += CommentBlock("  otherwise: " + (s_.fallback < 0 ? std::string("the expert reference")
                                                          : "kernel " + std::to_string(s_.kernels[s_.fallback].entry) +
                                                                " where it accepts the sizes, else the expert reference"));
  }
  c += " *\n * Tensors (device pointers, row-major, outermost dimension first, in the operator's order):\n";
  for (const TensorSpec& t : op_.tensors)
    c += CommentBlock("  " + CParamName(t.name) + ": " + DTypeName(t.dtype) + " " + ShapeText(t) + ", " +
                      TensorRoleName(t.role));
  if (!op_.scalars.empty()) {
    c += " * Scalars (forgek checked the seal with the values shown):\n";
    for (const ScalarSpec& sc : op_.scalars) {
      char value[64];
      std::snprintf(value, sizeof value, "%.9g", sc.value);
      c += CommentBlock("  " + CParamName(sc.name) + ": " + DTypeName(sc.dtype) + ", " + value);
    }
  }
  std::string sizes;
  for (const std::string& p : op_.params) sizes += (sizes.empty() ? "" : ", ") + CParamName(p);
  c += CommentBlock("Sizes: " + sizes + " (int64_t). Any sizes are accepted where a kernel's manifest accepts them; "
                    "the suite forgek measured: " +
                    [&] {
                      std::string configs;
                      for (const ConfigSpec& cfg : op_.configs) configs += (configs.empty() ? "" : ", ") + cfg.name;
                      return configs;
                    }() + ".");
  c += " *\n";
  c += CommentBlock("Needs the CUDA driver API alone (cuda.h and libcuda, CUDA 12.0 or newer for cuLaunchKernelEx, "
                    "cuTensorMapEncodeTiled and cuCtxGetId), the C standard library, and POSIX threads: one "
                    "pthread mutex guards the module cache. Build it as C11 or C++17: `cc -std=c11 -c " +
                    s_.prefix + ".c -I/usr/local/cuda/include`, and link with -lcuda -lpthread.");
  c += " */\n";
  return c;
}

std::string CWriter::HeaderTypes() const {
  const std::string st = Status();
  std::string c;
  c += "typedef enum " + st + " {\n";
  c += "  " + E("_OK") + " = 0,\n";
  c += "  /* No kernel of this export takes these sizes: a tensor dimension below 1, a constraint of the\n"
       "     manifest that does not hold, a launch beyond the driver's limits, an expression that\n"
       "     overflows or divides by zero, or the seal's rule gives them to the expert reference, which is\n"
       "     not exported. The message names the constraint or the manifest's field, and the sizes. */\n";
  c += "  " + E("_UNSUPPORTED_SIZE") + " = 1,\n";
  c += "  /* A NULL tensor or plan, or a workspace smaller than " + T("_workspace_bytes") + " says. */\n";
  c += "  " + E("_INVALID_ARGUMENT") + " = 2,\n";
  c += "  /* A driver call failed: the message names it, " + T("_last_cuda_result") + " gives its CUresult. */\n";
  c += "  " + E("_CUDA_ERROR") + " = 3,\n";
  c += "  /* Host memory for the module cache could not be allocated, or its mutex failed. */\n";
  c += "  " + E("_SYSTEM_ERROR") + " = 4\n";
  c += "} " + st + ";\n\n";
  c += "/* The bounds of a plan's arrays over the exported kernels. */\n";
  c += "#define " + E("_KERNELS") + " " + std::to_string(Entries()) + "\n";
  c += "#define " + E("_MAX_LAUNCHES") + " " + std::to_string(MaxLaunches()) + "\n";
  c += "#define " + E("_MAX_ARGS") + " " + std::to_string(std::max<size_t>(1, MaxArgs())) + "\n";
  c += "#define " + E("_MAX_WORKSPACES") + " " + std::to_string(MaxWorkspaces()) + "\n";
  c += "#define " + E("_MAX_TENSOR_MAPS") + " " + std::to_string(MaxTensorMaps()) + "\n";
  c += "#define " + E("_SIZES") + " " + std::to_string(op_.params.size()) + "\n";
  c += "#define " + E("_MESSAGE_BYTES") + " " + std::to_string(kMessageBytes) + "\n\n";
  c += "/* One kernel launch of a plan, in launch order. */\n";
  c += "typedef struct " + T("_launch") + " {\n"
       "  const char* kernel;  /* the function's name in its cubin */\n"
       "  int index;           /* the launch's index in the kernel's manifest (launches[index]) */\n"
       "  unsigned int grid[3], block[3], cluster[3];\n"
       "  unsigned int dynamic_smem_bytes;\n"
       "  int num_args;\n"
       "  /* The values of the integer arguments, in argument order (an i32 one fits in 32 bits; an f32\n"
       "     expression's value before it is converted); 0 where an argument is a pointer, a tensor map,\n"
       "     a scalar or a float literal. */\n"
       "  int64_t args[" + E("_MAX_ARGS") + "];\n"
       "} " + T("_launch") + ";\n\n";
  c += "/* A scratch buffer, carved from the one workspace at `offset` (a multiple of 256 bytes). */\n";
  c += "typedef struct " + T("_workspace") + " {\n"
       "  const char* name;\n"
       "  size_t offset, bytes;\n"
       "  int zero;  /* cleared before every launch sequence; else it holds whatever was there */\n"
       "} " + T("_workspace") + ";\n\n";
  c += "/* A TMA descriptor's sizes, as cuTensorMapEncodeTiled takes them (innermost dimension first). */\n";
  c += "typedef struct " + T("_tensor_map") + " {\n"
       "  const char* name;\n"
       "  cuuint32_t rank;\n"
       "  cuuint64_t dims[5];\n"
       "  cuuint64_t strides[4];  /* bytes, of every dimension but the innermost */\n"
       "  cuuint32_t box[5];\n"
       "} " + T("_tensor_map") + ";\n\n";
  c += "/* Every expression of the serving kernel's manifest evaluated for one set of sizes. */\n";
  c += "typedef struct " + Plan() + " {\n"
       "  int64_t sizes[" + E("_SIZES") + "];  /* in the operator's order */\n"
       "  int kernel;                /* which kernel serves the sizes (the list at the top); -1 when none */\n"
       "  const char* kernel_label;\n"
       "  int num_launches;\n"
       "  " + T("_launch") + " launches[" + E("_MAX_LAUNCHES") + "];\n"
       "  int num_workspaces;\n"
       "  " + T("_workspace") + " workspaces[" + E("_MAX_WORKSPACES") + "];\n"
       "  size_t workspace_bytes;    /* the one workspace the launches need, every buffer included */\n"
       "  int num_tensor_maps;\n"
       "  " + T("_tensor_map") + " tensor_maps[" + E("_MAX_TENSOR_MAPS") + "];\n"
       "  char message[" + E("_MESSAGE_BYTES") + "];  /* why, when the status is not OK */\n"
       "} " + Plan() + ";\n\n";
  return c;
}

std::string CWriter::HeaderFunctions() const {
  const std::string st = Status();
  std::string c;
  c += "/* The launch plan of these sizes: the kernel that serves them and every expression of its manifest\n"
       "   evaluated (grid, block, cluster, shared memory, arguments, workspaces, tensor maps), its\n"
       "   constraints and the driver's limits checked. Makes no CUDA call and keeps no state: callable\n"
       "   without a GPU, from any thread. " + E("_UNSUPPORTED_SIZE") + " with plan->message when no kernel\n"
       "   takes the sizes. */\n";
  c += st + " " + T("_plan") + "(" + SizeParams() + ", " + Plan() + "* plan);\n\n";
  c += "/* The workspace bytes " + s_.prefix + " needs for these sizes (0 when none). */\n";
  c += st + " " + T("_workspace_bytes") + "(" + SizeParams() + ", size_t* bytes);\n\n";
  c += "/* Runs the operator on `stream` (NULL: the legacy default stream of the current context): checks\n"
       "   the sizes, loads the kernel's module into the stream's context on first use (once per context,\n"
       "   thread-safe), encodes the tensor maps, clears the workspaces that need it and launches every\n"
       "   kernel of the plan, asynchronously. Tensors are device pointers (const: read only).\n"
       "   `workspace`: device memory of at least " + T("_workspace_bytes") + "() bytes, 256-byte aligned;\n"
       "   or NULL, and the call takes it from the stream's memory pool (cuMemAllocAsync) and frees it\n"
       "   after the launches (cuMemFreeAsync), both ordered on `stream`. */\n";
  c += st + " " + s_.prefix + "(CUstream stream, " + TensorParams() + ScalarParams() + SizeParams() +
       ", void* workspace, size_t workspace_bytes);\n\n";
  c += "/* Why the calling thread's last " + s_.prefix + "() or " + T("_workspace_bytes") +
       "() failed (\"\" after\n   a success). */\n";
  c += "const char* " + T("_last_error") + "(void);\n";
  c += "/* The CUresult of the calling thread's last failed driver call (CUDA_SUCCESS when none). */\n";
  c += "CUresult " + T("_last_cuda_result") + "(void);\n";
  c += "/* \"OK\", \"UNSUPPORTED_SIZE\", ... */\n";
  c += "const char* " + T("_status_name") + "(" + st + " status);\n";
  c += "/* Unloads the modules this export loaded into `context` (NULL: the current one). Call it before\n"
       "   destroying a context that ran the operator, while no other thread runs it there. */\n";
  c += st + " " + T("_unload") + "(CUcontext context);\n";
  return c;
}

bool CWriter::Header(std::string* out, std::string*) {
  const std::string guard = E("_H");
  *out = HeaderComment() + "#ifndef " + guard + "\n#define " + guard +
         "\n\n#include <stddef.h>\n#include <stdint.h>\n\n#include <cuda.h>\n\n"
         "#if CUDA_VERSION < 12000\n#error \"" + s_.prefix +
         " needs cuda.h of CUDA 12.0 or newer (cuLaunchKernelEx, cuTensorMapEncodeTiled, cuCtxGetId)\"\n#endif\n\n"
         "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n" +
         HeaderTypes() + HeaderFunctions() + "\n#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif  /* " +
         guard + " */\n";
  return true;
}

std::string CWriter::Cubins() const {
  std::string c = "/* The cubins, byte for byte as the seal names them (SHA-256 in each comment). 64-byte aligned:\n"
                  "   cuModuleLoadData reads the ELF in place. */\n";
  for (size_t i = 0; i < s_.cubins.size(); ++i) {
    const std::string& bytes = s_.cubins[i];
    c += "/* SHA-256 " + s_.cubin_shas[i] + " */\n";
    c += "FK_ALIGNED static const unsigned char fk_cubin_" + std::to_string(i) + "[" + std::to_string(bytes.size()) +
         "] = {\n";
    char hex[8];
    for (size_t b = 0; b < bytes.size(); ++b) {
      if (b % 20 == 0) c += "  ";
      std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(bytes[b]));
      c += hex;
      if (b + 1 < bytes.size()) c += b % 20 == 19 ? ",\n" : ",";
    }
    c += "\n};\n";
  }
  c += "static const unsigned char* const fk_cubins[" + std::to_string(s_.cubins.size()) + "] = {";
  for (size_t i = 0; i < s_.cubins.size(); ++i) c += (i ? ", " : "") + std::string("fk_cubin_") + std::to_string(i);
  c += "};\n\n";
  return c;
}

std::string CWriter::MessageHelpers() const {
  const std::string st = Status(), plan = Plan();
  std::string c;
  c += "/* Appends `text` to the string in `buf` (of `size` bytes), cut at the end of the buffer. */\n"
       "static void fk_append(char* buf, size_t size, const char* text) {\n"
       "  size_t used = strlen(buf);\n"
       "  while (*text != '\\0' && used + 1 < size) buf[used++] = *text++;\n"
       "  buf[used] = '\\0';\n"
       "}\n\n"
       "static void fk_append_int(char* buf, size_t size, int64_t value) {\n"
       "  char digits[32];\n"
       "  snprintf(digits, sizeof digits, \"%lld\", (long long)value);\n"
       "  fk_append(buf, size, digits);\n"
       "}\n\n";
  c += "/* \" (sizes M=..., N=...)\" after a plan's message. */\n";
  c += "static void fk_append_sizes(" + plan + "* plan) {\n";
  for (size_t i = 0; i < op_.params.size(); ++i) {
    c += "  fk_append(plan->message, sizeof plan->message, " +
         CStringLiteral((i ? ", " : " (sizes ") + op_.params[i] + "=") + ");\n";
    c += "  fk_append_int(plan->message, sizeof plan->message, plan->sizes[" + std::to_string(i) + "]);\n";
  }
  c += "  fk_append(plan->message, sizeof plan->message, \")\");\n}\n\n";
  c += "static " + st + " fk_fail(" + plan + "* plan, const char* text) {\n"
       "  plan->message[0] = '\\0';\n"
       "  fk_append(plan->message, sizeof plan->message, text);\n"
       "  fk_append_sizes(plan);\n"
       "  return " + E("_UNSUPPORTED_SIZE") + ";\n}\n\n";
  c += "static " + st + " fk_fail_value(" + plan + "* plan, const char* before, int64_t value, const char* after) {\n"
       "  plan->message[0] = '\\0';\n"
       "  fk_append(plan->message, sizeof plan->message, before);\n"
       "  fk_append_int(plan->message, sizeof plan->message, value);\n"
       "  fk_append(plan->message, sizeof plan->message, after);\n"
       "  fk_append_sizes(plan);\n"
       "  return " + E("_UNSUPPORTED_SIZE") + ";\n}\n\n";
  c += "/* a * b into *out for a, b >= 0; 0 when it overflows int64. */\n"
       "static int fk_mul(int64_t a, int64_t b, int64_t* out) {\n"
       "  if (a != 0 && b > INT64_MAX / a) return 0;\n"
       "  *out = a * b;\n"
       "  return 1;\n}\n\n";
  return c;
}

// The operator's tensors under the sizes: every dimension at least 1 and every tensor's bytes
// within int64 (the operator's own rule for its shapes, docs/expressions.md "Where values must lie").
bool CWriter::TensorCheck(std::string* out, std::string* err) const {
  std::set<std::string> bound(op_.params.begin(), op_.params.end());
  FunctionBody f(bound, "  ");
  for (const std::string& p : op_.params) f.Line("int64_t v_" + p + " = " + CParamName(p) + ";");
  for (const std::string& p : op_.params) f.Line("(void)v_" + p + ";");
  for (size_t t = 0; t < op_.tensors.size(); ++t) {
    const TensorSpec& spec = op_.tensors[t];
    f.Open("{  /* tensors[" + std::to_string(t) + "] " + CommentText(spec.name) + " */");
    const std::string bytes = f.Fresh("bytes");
    f.Line("int64_t " + bytes + " = " + Lit(DTypeBytes(spec.dtype)) + ";");
    for (size_t d = 0; d < spec.shape.size(); ++d) {
      const std::string field = "tensors[" + std::to_string(t) + "].shape[" + std::to_string(d) + "]";
      std::string v;
      if (!f.Eval(field, spec.shape[d], &v, err)) return false;
      f.Line("if (" + v + " < 1) return " +
             FunctionBody::FailValue(field + ": tensor '" + spec.name + "' dimension '" + spec.shape[d] + "' is ", v,
                                     "; a tensor's dimensions must be at least 1") +
             ";");
      f.Line("if (!fk_mul(" + bytes + ", " + v + ", &" + bytes + ")) " +
             FunctionBody::Fail(field + ": tensor '" + spec.name + "' would hold more than 2^63 bytes"));
    }
    f.Close();
  }
  *out = "/* The operator's tensors under the sizes. */\nstatic " + Status() + " fk_check_tensors(" + SizeParams() +
         ", " + Plan() + "* plan) {\n" + f.code() + "  return " + E("_OK") + ";\n}\n\n";
  return true;
}

bool CWriter::PlanWorkspaces(const CKernel& k, FunctionBody& f, std::vector<std::string>* ws_vars,
                             std::string* err) const {
  const CandidateManifest& m = k.candidate.manifest;
  f.Line("plan->num_workspaces = " + std::to_string(m.workspaces.size()) + ";");
  if (m.workspaces.empty()) return true;
  const std::string offset = f.Fresh("offset");
  f.Line("int64_t " + offset + " = 0;");
  for (size_t i = 0; i < m.workspaces.size(); ++i) {
    const WorkspaceSpec& w = m.workspaces[i];
    const std::string field = "workspaces[" + std::to_string(i) + "].bytes";
    std::string v;
    if (!f.EvalIn(field, w.bytes, 0, kInt64Max, &v, err)) return false;
    // pow2(62) bytes would pass as a number but no GPU holds it, and offsets derived from it overflow.
    f.Line("if (" + v + " > " + Lit(kMaxWorkspaceBytes) + ") return " +
           FunctionBody::FailValue(field + ": workspace '" + w.name + "': '" + w.bytes + "' is ", v,
                                   " bytes; a workspace may hold at most " + std::to_string(kMaxWorkspaceBytes) +
                                       " (2^40, 1 TiB)") +
           ";");
    const std::string at = "plan->workspaces[" + std::to_string(i) + "]";
    f.Line(at + ".name = " + CStringLiteral(w.name) + ";");
    f.Line(at + ".offset = (size_t)" + offset + ";");
    f.Line(at + ".bytes = (size_t)" + v + ";");
    f.Line(at + ".zero = " + std::string(w.zero ? "1" : "0") + ";");
    f.Line(offset + " += (" + v + " + 255) / 256 * 256;");
    ws_vars->push_back(v);
  }
  f.Line("plan->workspace_bytes = (size_t)" + offset + ";");
  return true;
}

// Each map's shape (given, or its tensor's) and box, the view checked against the buffer it views
// (CheckTensorMapExtent of ResolveCandidate), then the driver's form: innermost first, byte strides.
bool CWriter::PlanTensorMaps(const CKernel& k, FunctionBody& f, const std::vector<std::string>& ws_vars,
                             std::string* err) const {
  const CandidateManifest& m = k.candidate.manifest;
  f.Line("plan->num_tensor_maps = " + std::to_string(m.tensor_maps.size()) + ";");
  for (size_t i = 0; i < m.tensor_maps.size(); ++i) {
    const TensorMapSpec& t = m.tensor_maps[i];
    const std::string path = "tensor_maps[" + std::to_string(i) + "]";
    f.Open("{  /* " + path + " " + CommentText(t.name) + " over " + CommentText(t.tensor) + " */");
    const TensorSpec* tensor = op_.FindTensor(t.tensor);
    int ws = -1;
    for (size_t w = 0; w < m.workspaces.size(); ++w)
      if (m.workspaces[w].name == t.tensor) ws = static_cast<int>(w);
    if (!tensor && ws < 0) {
      *err = path + ".tensor: '" + t.tensor + "' is neither a tensor nor a workspace";
      return false;
    }
    if (!tensor && t.shape.empty()) {
      *err = path + ".shape: a tensor map over workspace '" + t.tensor + "' needs a shape";
      return false;
    }
    std::vector<std::string> shape, box;
    if (!t.shape.empty()) {
      for (size_t d = 0; d < t.shape.size(); ++d) {
        std::string v;
        if (!f.EvalIn(path + ".shape[" + std::to_string(d) + "]", t.shape[d], 1, kInt64Max, &v, err)) return false;
        shape.push_back(v);
      }
    } else {
      for (size_t d = 0; d < tensor->shape.size(); ++d) {
        std::string v;
        const size_t index = static_cast<size_t>(tensor - op_.tensors.data());
        if (!f.Eval("tensors[" + std::to_string(index) + "].shape[" + std::to_string(d) + "]", tensor->shape[d], &v,
                    err))
          return false;
        shape.push_back(v);
      }
    }
    for (size_t d = 0; d < t.box.size(); ++d) {
      std::string v;
      if (!f.EvalIn(path + ".box[" + std::to_string(d) + "]", t.box[d], 1, kMaxTensorMapBox, &v, err)) return false;
      box.push_back(v);
    }
    const size_t rank = shape.size();
    if (box.size() != rank || rank < 1 || rank > 5) {
      *err = path + ": a shape of rank " + std::to_string(rank) + " with a box of rank " + std::to_string(box.size()) +
             " (need equal ranks, 1 to 5)";
      return false;
    }
    const int64_t elem = tensor ? DTypeBytes(tensor->dtype) : 4;  // a workspace is viewed as fp32, as in the worker
    const std::string buffer = f.Fresh("buffer"), extent = f.Fresh("extent");
    const std::string what = tensor ? "tensor '" + t.tensor + "'" : "workspace '" + t.tensor + "'";
    const std::string field = path + (t.shape.empty() ? ".tensor" : ".shape");
    if (tensor) {
      f.Line("int64_t " + buffer + " = " + Lit(elem) + ";");
      for (size_t d = 0; d < tensor->shape.size(); ++d) {
        std::string v;
        const size_t index = static_cast<size_t>(tensor - op_.tensors.data());
        if (!f.Eval("tensors[" + std::to_string(index) + "].shape[" + std::to_string(d) + "]", tensor->shape[d], &v,
                    err))
          return false;
        f.Line("if (" + v + " < 0 || !fk_mul(" + buffer + ", " + v + ", &" + buffer + ")) " +
               FunctionBody::Fail(field + ": " + what +
                                  " has no valid size under these sizes (a negative dimension, or more than 2^63 bytes)"));
      }
    } else {
      f.Line("int64_t " + buffer + " = " + ws_vars.at(static_cast<size_t>(ws)) + ";");
    }
    f.Line("int64_t " + extent + " = " + Lit(elem) + ";");
    std::string views;
    for (size_t d = 0; d < rank; ++d) views += (d ? " x " : "") + (t.shape.empty() ? tensor->shape[d] : t.shape[d]);
    const std::string head = "tensor map '" + t.name + "' views " + views + " elements of " + std::to_string(elem) + " bytes";
    std::string overflow;
    for (size_t d = 0; d < rank; ++d) overflow += (d ? " || " : "") + ("!fk_mul(" + extent + ", " + shape[d] + ", &" + extent + ")");
    f.Line("if (" + overflow + ") " +
           FunctionBody::Fail(field + ": " + head + ", more than 2^63 bytes, beyond what " + what +
                              " holds; TMA would reach memory beyond it"));
    f.Line("if (" + extent + " > " + buffer + ") return " +
           FunctionBody::FailValue(field + ": " + head + " (", extent,
                                   " bytes), more than " + what + " holds; TMA would reach memory beyond it") +
           ";");
    const std::string at = "plan->tensor_maps[" + std::to_string(i) + "]";
    f.Line(at + ".name = " + CStringLiteral(t.name) + ";");
    f.Line(at + ".rank = " + std::to_string(rank) + ";");
    const std::string stride = f.Fresh("stride");
    f.Line("int64_t " + stride + " = " + Lit(elem) + ";");
    for (size_t d = 0; d < rank; ++d) {
      const std::string& dim = shape[rank - 1 - d];
      f.Line(at + ".dims[" + std::to_string(d) + "] = (cuuint64_t)" + dim + ";");
      f.Line(at + ".box[" + std::to_string(d) + "] = (cuuint32_t)" + box[rank - 1 - d] + ";");
      if (d + 1 < rank) {
        // Below the extent checked above: no overflow.
        f.Line(stride + " *= " + dim + ";");
        f.Line(at + ".strides[" + std::to_string(d) + "] = (cuuint64_t)" + stride + ";");
      }
    }
    f.Line("(void)" + stride + ";");
    f.Close();
  }
  return true;
}

// One launch: skipped where its `when` is 0 (its other fields then unevaluated), else every field
// evaluated and bounded as ResolveLaunch and ResolveArg do.
bool CWriter::PlanLaunch(const CKernel& k, size_t i, FunctionBody& f, std::string* err) const {
  const LaunchSpec& l = k.candidate.manifest.launches[i];
  const std::string path = "launches[" + std::to_string(i) + "]";
  f.Open("{  /* " + path + " " + CommentText(l.kernel) + " */");
  if (!l.when.empty()) {
    std::string when;
    if (!f.Eval(path + ".when", l.when, &when, err)) return false;
    f.Open("if (" + when + " != 0) {");
  }
  const std::string at = "plan->launches[plan->num_launches]";
  f.Line(at + ".kernel = " + CStringLiteral(l.kernel) + ";");
  f.Line(at + ".index = " + std::to_string(i) + ";");
  f.Line(at + ".num_args = " + std::to_string(l.args.size()) + ";");
  struct Dims {
    const char* name;
    const std::vector<std::string>* exprs;
    const int64_t* max;
  };
  const Dims all[] = {{"grid", &l.grid, kMaxGrid}, {"block", &l.block, kMaxBlock}, {"cluster", &l.cluster, kMaxCluster}};
  std::map<std::string, std::vector<std::string>> values;
  for (const Dims& dims : all) {
    for (size_t d = 0; d < 3; ++d) {
      std::string v = "1";
      if (d < dims.exprs->size() &&
          !f.EvalIn(path + "." + dims.name + "[" + std::to_string(d) + "]", (*dims.exprs)[d], 1, dims.max[d], &v, err))
        return false;
      values[dims.name].push_back(v);
      f.Line(at + "." + dims.name + "[" + std::to_string(d) + "] = (unsigned int)" + v + ";");
    }
  }
  const auto& block = values["block"];
  const auto& cluster = values["cluster"];
  const auto& grid = values["grid"];
  // Each factor is within its bound above: the products cannot overflow.
  f.Line("if (" + block[0] + " * " + block[1] + " * " + block[2] + " > " + Lit(kMaxBlockThreads) + ") return " +
         FunctionBody::FailValue(path + ".block: a block of ", block[0] + " * " + block[1] + " * " + block[2],
                                 " threads exceeds 1024") +
         ";");
  f.Line("if (" + cluster[0] + " * " + cluster[1] + " * " + cluster[2] + " > " + Lit(kMaxClusterBlocks) + ") return " +
         FunctionBody::FailValue(path + ".cluster: a cluster of ", cluster[0] + " * " + cluster[1] + " * " + cluster[2],
                                 " blocks exceeds 16") +
         ";");
  for (size_t d = 0; d < 3; ++d) {
    if (cluster[d] == "1") continue;
    f.Line("if (" + grid[d] + " % " + cluster[d] + " != 0) return " +
           FunctionBody::FailValue(path + ".grid: grid dimension " + std::to_string(d) + " (", grid[d],
                                   ") is not a multiple of the cluster dimension") +
           ";");
  }
  std::string smem;
  if (!f.EvalIn(path + ".smem", l.smem, 0, kInt32Max, &smem, err)) return false;
  f.Line("if (" + smem + " > " + Lit(kMaxDynamicSmemBytes) + ") return " +
         FunctionBody::FailValue(path + ".smem: ", smem,
                                 " bytes of dynamic shared memory exceed the " + std::to_string(kMaxDynamicSmemBytes) +
                                     " (227 KiB) a block may opt in to on sm90 and sm100") +
         ";");
  f.Line(at + ".dynamic_smem_bytes = (unsigned int)" + smem + ";");
  const CandidateManifest& m = k.candidate.manifest;
  for (size_t a = 0; a < l.args.size(); ++a) {
    const std::string& arg = l.args[a];
    const std::string field = path + ".args[" + std::to_string(a) + "]";
    const std::string slot = at + ".args[" + std::to_string(a) + "]";
    bool pointer = op_.FindTensor(arg) != nullptr;
    for (const WorkspaceSpec& w : m.workspaces) pointer = pointer || w.name == arg;
    for (const TensorMapSpec& t : m.tensor_maps) pointer = pointer || t.name == arg;
    for (const ScalarSpec& sc : op_.scalars) pointer = pointer || sc.name == arg;
    if (pointer) {
      f.Line(slot + " = 0;");
      continue;
    }
    std::string v;
    if (arg.rfind("i64:", 0) == 0) {
      if (!f.Eval(field, arg.substr(4), &v, err)) return false;
    } else if (arg.rfind("f32:", 0) == 0) {
      const std::string rest = arg.substr(4);
      char* end = nullptr;
      const double d = std::strtod(rest.c_str(), &end);
      if (!rest.empty() && end == rest.c_str() + rest.size()) {
        if (!std::isfinite(static_cast<float>(d))) {
          *err = field + ": '" + rest + "' is not a finite float";
          return false;
        }
        f.Line(slot + " = 0;");  // a literal: written into the launch code
        continue;
      }
      if (!f.Eval(field, rest, &v, err)) return false;
    } else if (!f.EvalIn(field, arg, kInt32Min, kInt32Max, &v, err)) {
      return false;
    }
    f.Line(slot + " = " + v + ";");
  }
  f.Line("++plan->num_launches;");
  if (!l.when.empty()) f.Close();
  f.Close();
  return true;
}

bool CWriter::KernelPlan(const CKernel& k, std::string* out, std::string* err) const {
  const CandidateManifest& m = k.candidate.manifest;
  std::set<std::string> bound(op_.params.begin(), op_.params.end());
  for (const auto& [name, value] : k.params) bound.insert(name);
  for (const auto& [name, text] : m.lets) bound.insert(name);
  FunctionBody f(bound, "  ");
  for (const std::string& p : op_.params) f.Line("int64_t v_" + p + " = " + CParamName(p) + ";");
  for (const auto& [name, value] : k.params) f.Line("int64_t v_" + name + " = " + Lit(value) + ";");
  for (const std::string& p : op_.params) f.Line("(void)v_" + p + ";");
  for (const auto& [name, value] : k.params) f.Line("(void)v_" + name + ";");
  for (const auto& [name, text] : m.lets) {
    f.Line("/* let " + CommentText(name) + " = " + CommentText(text) + " */");
    std::string v;
    // Worded as ResolveCandidate words them: "let NAME = TEXT: message".
    if (!f.EvalWithPrefix("let." + name, "let " + name + " = " + text + ": ", text, &v, err)) return false;
    f.Line("int64_t v_" + name + " = " + v + ";");
    f.Line("(void)v_" + name + ";");
  }
  for (size_t i = 0; i < m.constraints.size(); ++i) {
    const std::string& c = m.constraints[i];
    std::string v;
    if (!f.EvalWithPrefix("constraints[" + std::to_string(i) + "]", "constraint '" + c + "': ", c, &v, err)) return false;
    f.Line("if (" + v + " == 0) " + FunctionBody::Fail("constraint '" + c + "' does not hold"));
  }
  std::vector<std::string> ws_vars;
  if (!PlanWorkspaces(k, f, &ws_vars, err) || !PlanTensorMaps(k, f, ws_vars, err)) return false;
  f.Line("plan->num_launches = 0;");
  for (size_t i = 0; i < m.launches.size(); ++i)
    if (!PlanLaunch(k, i, f, err)) return false;
  f.Line("if (plan->num_launches == 0) " + FunctionBody::Fail("launches: no launch runs: the 'when' of every launch is 0"));
  *out = "/* Kernel " + std::to_string(k.entry) + ": " + CommentText(k.label) + ", params " +
         CommentText(ParamsJson(k.params)) + ". */\nstatic " + Status() + " fk_plan_" + std::to_string(k.entry) + "(" +
         SizeParams() + ", " + Plan() + "* plan) {\n" + f.code() + "  return " + E("_OK") + ";\n}\n\n";
  return true;
}

std::string CWriter::PublicPlan() const {
  const std::string st = Status(), plan = Plan();
  std::string c;
  c += "/* Plans kernel `kernel` from a clean plan. */\n";
  c += "static " + st + " fk_plan_kernel(int kernel, " + SizeParams() + ", " + plan + "* plan) {\n";
  c += "  plan->kernel = kernel;\n  plan->num_launches = 0;\n  plan->num_workspaces = 0;\n"
       "  plan->num_tensor_maps = 0;\n  plan->workspace_bytes = 0;\n";
  c += "  switch (kernel) {\n";
  for (const CKernel& k : s_.kernels) {
    c += "    case " + std::to_string(k.entry) + ":\n";
    c += "      plan->kernel_label = " + CStringLiteral(k.label) + ";\n";
    c += "      return fk_plan_" + std::to_string(k.entry) + "(" + SizeArgs() + ", plan);\n";
  }
  c += "    default:\n      plan->kernel = -1;\n      return fk_fail(plan, \"no such kernel\");\n  }\n}\n\n";
  const bool refer = s_.dispatch && s_.fallback >= 0;
  if (refer) {
    c += "/* Puts `before` in front of the plan's message. */\n"
         "static " + st + " fk_refer(" + plan + "* plan, const char* before) {\n"
         "  char why[" + E("_MESSAGE_BYTES") + "];\n"
         "  memcpy(why, plan->message, sizeof why);\n"
         "  plan->kernel = -1;\n"
         "  plan->message[0] = '\\0';\n"
         "  fk_append(plan->message, sizeof plan->message, before);\n"
         "  fk_append(plan->message, sizeof plan->message, why);\n"
         "  return " + E("_UNSUPPORTED_SIZE") + ";\n}\n\n";
  }
  c += st + " " + T("_plan") + "(" + SizeParams() + ", " + plan + "* plan) {\n";
  c += "  " + st + " status;\n";
  c += "  if (plan == NULL) return " + E("_INVALID_ARGUMENT") + ";\n";
  c += "  memset(plan, 0, sizeof *plan);\n  plan->kernel = -1;\n  plan->kernel_label = \"\";\n";
  for (size_t i = 0; i < op_.params.size(); ++i)
    c += "  plan->sizes[" + std::to_string(i) + "] = " + CParamName(op_.params[i]) + ";\n";
  c += "  status = fk_check_tensors(" + SizeArgs() + ", plan);\n";
  c += "  if (status != " + E("_OK") + ") return status;\n";
  if (!s_.dispatch) {
    c += "  return fk_plan_kernel(0, " + SizeArgs() + ", plan);\n}\n\n";
    return c;
  }
  c += "  /* The seal's rule: the table row whose values equal the sizes; else the fallback where it\n"
       "     accepts them; else the expert reference. */\n";
  for (const CRow& r : s_.rows) {
    std::string cond;
    for (const std::string& p : op_.params)
      cond += (cond.empty() ? "" : " && ") + CParamName(p) + " == " + Lit(r.values.at(p));
    c += "  if (" + cond + ") {  /* config " + CommentText(r.config) + ": " + CommentText(r.why) + " */\n";
    if (r.kernel >= 0) {
      c += "    return fk_plan_kernel(" + std::to_string(s_.kernels[r.kernel].entry) + ", " + SizeArgs() + ", plan);\n";
    } else {
      c += "    return fk_fail(plan, " +
           CStringLiteral("the seal serves these sizes (config " + r.config + ") with the expert reference (" +
                          r.reference + "), which a C export does not hold") +
           ");\n";
    }
    c += "  }\n";
  }
  if (s_.fallback < 0) {
    c += "  return fk_fail(plan, " +
         CStringLiteral("the seal's rule gives sizes outside its table to the expert reference (" + s_.reference +
                        "), which a C export does not hold") +
         ");\n}\n\n";
    return c;
  }
  const CKernel& fb = s_.kernels[s_.fallback];
  c += "  status = fk_plan_kernel(" + std::to_string(fb.entry) + ", " + SizeArgs() + ", plan);\n";
  c += "  if (status != " + E("_UNSUPPORTED_SIZE") + ") return status;\n";
  c += "  return fk_refer(plan, " +
       CStringLiteral("the seal's fallback, kernel " + std::to_string(fb.entry) +
                      ", does not accept these sizes, so its rule gives them to the expert reference (" + s_.reference +
                      "), which a C export does not hold: ") +
       ");\n}\n\n";
  return c;
}

std::string CWriter::ModuleCache() const {
  const std::string st = Status(), plan = Plan();
  // Function slots: every launch of every kernel, kernel by kernel.
  std::vector<int> cubin_of(static_cast<size_t>(Entries()), -1), first_slot(static_cast<size_t>(Entries()), 0);
  std::vector<std::string> slot_names;
  for (const CKernel& k : s_.kernels) {
    cubin_of[static_cast<size_t>(k.entry)] = static_cast<int>(k.cubin);
    first_slot[static_cast<size_t>(k.entry)] = static_cast<int>(slot_names.size());
    for (const LaunchSpec& l : k.candidate.manifest.launches) slot_names.push_back(l.kernel);
  }
  auto ints = [](const std::vector<int>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out;
  };
  std::string c;
  c += "/* Per kernel (-1: an entry this export does not hold): its cubin, its first function slot. */\n";
  c += "static const int fk_kernel_cubin[" + E("_KERNELS") + "] = {" + ints(cubin_of) + "};\n";
  c += "static const int fk_kernel_slot[" + E("_KERNELS") + "] = {" + ints(first_slot) + "};\n";
  c += "#define FK_SLOTS " + std::to_string(slot_names.size()) + "\n";
  c += "/* Per slot (a launch of a kernel's manifest): the function's name. */\n";
  c += "static const char* const fk_slot_function[FK_SLOTS] = {";
  for (size_t i = 0; i < slot_names.size(); ++i) c += (i ? ", " : "") + CStringLiteral(slot_names[i]);
  c += "};\n#define FK_CUBINS " + std::to_string(s_.cubins.size()) + "\n\n";
  c += "/* What one CUDA context holds of this export, found by the context's unique id (a handle can be\n"
       "   reused after its context is destroyed; an id is not). */\n"
       "typedef struct fk_context_modules {\n"
       "  unsigned long long context_id;\n"
       "  CUmodule modules[FK_CUBINS];\n"
       "  CUfunction functions[FK_SLOTS];\n"
       "  unsigned int smem_allowed[FK_SLOTS];  /* the dynamic shared memory each function may use so far */\n"
       "  int non_portable_cluster[FK_SLOTS];\n"
       "  struct fk_context_modules* next;\n"
       "} fk_context_modules;\n\n"
       "static pthread_mutex_t fk_mutex = PTHREAD_MUTEX_INITIALIZER;\n"
       "static fk_context_modules* fk_contexts = NULL;\n\n"
       "static FK_THREAD_LOCAL char fk_last_error[" + E("_MESSAGE_BYTES") + "];\n"
       "static FK_THREAD_LOCAL CUresult fk_last_cuda = CUDA_SUCCESS;\n\n";
  c += "static " + st + " fk_error(" + st + " status, const char* text) {\n"
       "  fk_last_error[0] = '\\0';\n"
       "  fk_append(fk_last_error, sizeof fk_last_error, text);\n"
       "  return status;\n}\n\n";
  c += "/* \"call (what): CUDA_ERROR_...: its description\" as the thread's last error. */\n"
       "static " + st + " fk_cuda_error(CUresult result, const char* call, const char* what) {\n"
       "  const char* name = NULL;\n"
       "  const char* text = NULL;\n"
       "  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || name == NULL) name = \"an unknown CUresult\";\n"
       "  if (cuGetErrorString(result, &text) != CUDA_SUCCESS || text == NULL) text = \"\";\n"
       "  fk_last_cuda = result;\n"
       "  fk_last_error[0] = '\\0';\n"
       "  fk_append(fk_last_error, sizeof fk_last_error, call);\n"
       "  fk_append(fk_last_error, sizeof fk_last_error, \" (\");\n"
       "  fk_append(fk_last_error, sizeof fk_last_error, what);\n"
       "  fk_append(fk_last_error, sizeof fk_last_error, \"): \");\n"
       "  fk_append(fk_last_error, sizeof fk_last_error, name);\n"
       "  fk_append(fk_last_error, sizeof fk_last_error, \": \");\n"
       "  fk_append(fk_last_error, sizeof fk_last_error, text);\n"
       "  return " + E("_CUDA_ERROR") + ";\n}\n\n";
  c += "/* The functions of the plan's launches in context `context` (current), its module loaded on first\n"
       "   use and each function's attributes raised to what the launch needs. One mutex guards the cache:\n"
       "   a module is loaded once per context however many threads call at once, and an attribute only\n"
       "   grows, so no thread's launch can find it lowered by another. */\n";
  c += "static " + st + " fk_functions(const " + plan + "* plan, CUcontext context, CUfunction* functions) {\n"
       "  unsigned long long id = 0;\n"
       "  fk_context_modules* e = NULL;\n"
       "  " + st + " status = " + E("_OK") + ";\n"
       "  CUresult r;\n"
       "  int i;\n"
       "  const int cubin = fk_kernel_cubin[plan->kernel];\n"
       "  r = cuCtxGetId(context, &id);\n"
       "  if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuCtxGetId\", \"the stream's context\");\n"
       "  if (pthread_mutex_lock(&fk_mutex) != 0) return fk_error(" + E("_SYSTEM_ERROR") +
       ", \"pthread_mutex_lock failed\");\n"
       "  for (e = fk_contexts; e != NULL && e->context_id != id; e = e->next) {\n  }\n"
       "  if (e == NULL) {\n"
       "    e = (fk_context_modules*)calloc(1, sizeof *e);\n"
       "    if (e == NULL) {\n"
       "      status = fk_error(" + E("_SYSTEM_ERROR") + ", \"out of host memory for the module cache\");\n"
       "      goto done;\n"
       "    }\n"
       "    e->context_id = id;\n"
       "    e->next = fk_contexts;\n"
       "    fk_contexts = e;\n"
       "  }\n"
       "  if (e->modules[cubin] == NULL) {\n"
       "    r = cuModuleLoadData(&e->modules[cubin], fk_cubins[cubin]);\n"
       "    if (r != CUDA_SUCCESS) {\n"
       "      e->modules[cubin] = NULL;\n"
       "      status = fk_cuda_error(r, \"cuModuleLoadData\", plan->kernel_label);\n"
       "      goto done;\n"
       "    }\n"
       "  }\n"
       "  for (i = 0; i < plan->num_launches; ++i) {\n"
       "    const " + T("_launch") + "* l = &plan->launches[i];\n"
       "    const int slot = fk_kernel_slot[plan->kernel] + l->index;\n"
       "    if (e->functions[slot] == NULL) {\n"
       "      r = cuModuleGetFunction(&e->functions[slot], e->modules[cubin], fk_slot_function[slot]);\n"
       "      if (r != CUDA_SUCCESS) {\n"
       "        e->functions[slot] = NULL;\n"
       "        status = fk_cuda_error(r, \"cuModuleGetFunction\", l->kernel);\n"
       "        goto done;\n"
       "      }\n"
       "    }\n"
       "    if (l->dynamic_smem_bytes > 48 * 1024 && l->dynamic_smem_bytes > e->smem_allowed[slot]) {\n"
       "      r = cuFuncSetAttribute(e->functions[slot], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,\n"
       "                             (int)l->dynamic_smem_bytes);\n"
       "      if (r != CUDA_SUCCESS) {\n"
       "        status = fk_cuda_error(r, \"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)\", l->kernel);\n"
       "        goto done;\n"
       "      }\n"
       "      e->smem_allowed[slot] = l->dynamic_smem_bytes;\n"
       "    }\n"
       "    if (l->cluster[0] * l->cluster[1] * l->cluster[2] > 8 && !e->non_portable_cluster[slot]) {\n"
       "      r = cuFuncSetAttribute(e->functions[slot], CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);\n"
       "      if (r != CUDA_SUCCESS) {\n"
       "        status = fk_cuda_error(r, \"cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)\", l->kernel);\n"
       "        goto done;\n"
       "      }\n"
       "      e->non_portable_cluster[slot] = 1;\n"
       "    }\n"
       "    functions[i] = e->functions[slot];\n"
       "  }\n"
       "done:\n"
       "  pthread_mutex_unlock(&fk_mutex);\n"
       "  return status;\n}\n\n";
  c += "static " + st + " fk_launch_one(const " + T("_launch") +
       "* l, CUfunction function, CUstream stream, void** args) {\n"
       "  CUlaunchConfig config;\n"
       "  CUlaunchAttribute cluster;\n"
       "  CUresult r;\n"
       "  memset(&config, 0, sizeof config);\n"
       "  memset(&cluster, 0, sizeof cluster);\n"
       "  config.gridDimX = l->grid[0];\n  config.gridDimY = l->grid[1];\n  config.gridDimZ = l->grid[2];\n"
       "  config.blockDimX = l->block[0];\n  config.blockDimY = l->block[1];\n  config.blockDimZ = l->block[2];\n"
       "  config.sharedMemBytes = l->dynamic_smem_bytes;\n"
       "  config.hStream = stream;\n"
       "  if (l->cluster[0] * l->cluster[1] * l->cluster[2] > 1) {\n"
       "    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;\n"
       "    cluster.value.clusterDim.x = l->cluster[0];\n"
       "    cluster.value.clusterDim.y = l->cluster[1];\n"
       "    cluster.value.clusterDim.z = l->cluster[2];\n"
       "    config.attrs = &cluster;\n"
       "    config.numAttrs = 1;\n"
       "  }\n"
       "  r = cuLaunchKernelEx(&config, function, args, NULL);\n"
       "  if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuLaunchKernelEx\", l->kernel);\n"
       "  return " + E("_OK") + ";\n}\n\n";
  c += "static " + st + " fk_zero_workspaces(const " + plan + "* plan, CUdeviceptr workspace, CUstream stream) {\n"
       "  int i;\n"
       "  for (i = 0; i < plan->num_workspaces; ++i) {\n"
       "    const " + T("_workspace") + "* w = &plan->workspaces[i];\n"
       "    CUresult r;\n"
       "    if (!w->zero || w->bytes == 0) continue;\n"
       "    r = cuMemsetD8Async(workspace + w->offset, 0, w->bytes, stream);\n"
       "    if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuMemsetD8Async\", w->name);\n"
       "  }\n"
       "  return " + E("_OK") + ";\n}\n\n";
  return c;
}

// The launches of one kernel: tensor maps encoded from the plan, then per launch its arguments in
// manifest order (pointers, maps and scalars by address, integers narrowed as the manifest says).
bool CWriter::KernelLaunch(const CKernel& k, std::string* out, std::string* err) const {
  const CandidateManifest& m = k.candidate.manifest;
  const std::string st = Status();
  std::string c = "static " + st + " fk_launch_" + std::to_string(k.entry) + "(const " + Plan() +
                  "* plan, const CUfunction* functions, CUstream stream, " + TensorParams() + ScalarParams() +
                  "CUdeviceptr workspace) {\n";
  for (size_t t = 0; t < op_.tensors.size(); ++t)
    c += "  CUdeviceptr fk_t" + std::to_string(t) + " = (CUdeviceptr)(uintptr_t)" + CParamName(op_.tensors[t].name) +
         ";\n";
  for (size_t w = 0; w < m.workspaces.size(); ++w)
    c += "  CUdeviceptr fk_w" + std::to_string(w) + " = workspace + plan->workspaces[" + std::to_string(w) +
         "].offset;\n";
  if (!m.tensor_maps.empty()) {
    c += "  static const cuuint32_t fk_ones[5] = {1, 1, 1, 1, 1};\n";
    c += "  CUtensorMap fk_maps[" + std::to_string(m.tensor_maps.size()) + "];\n";
    c += "  CUresult r;\n";
  }
  c += "  int i;\n";
  for (size_t t = 0; t < op_.tensors.size(); ++t) c += "  (void)fk_t" + std::to_string(t) + ";\n";
  for (size_t w = 0; w < m.workspaces.size(); ++w) c += "  (void)fk_w" + std::to_string(w) + ";\n";
  for (const ScalarSpec& sc : op_.scalars) c += "  (void)" + CParamName(sc.name) + ";\n";
  c += "  (void)workspace;\n";
  for (size_t i = 0; i < m.tensor_maps.size(); ++i) {
    const TensorMapSpec& t = m.tensor_maps[i];
    std::string address, dtype, swizzle, l2, oob;
    if (const TensorSpec* tensor = op_.FindTensor(t.tensor)) {
      address = "fk_t" + std::to_string(tensor - op_.tensors.data());
      dtype = TensorMapDataType(tensor->dtype);
    } else {
      for (size_t w = 0; w < m.workspaces.size(); ++w)
        if (m.workspaces[w].name == t.tensor) address = "fk_w" + std::to_string(w);
      dtype = "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    }
    const std::string path = "tensor_maps[" + std::to_string(i) + "]";
    if (!TensorMapEnum("swizzle", t.swizzle, &swizzle, err) || !TensorMapEnum("l2_promotion", t.l2_promotion, &l2, err) ||
        !TensorMapEnum("oob_fill", t.oob_fill, &oob, err)) {
      *err = path + ": " + *err;
      return false;
    }
    const std::string map = "plan->tensor_maps[" + std::to_string(i) + "]";
    c += "  r = cuTensorMapEncodeTiled(&fk_maps[" + std::to_string(i) + "], " + dtype + ", " + map +
         ".rank, (void*)(uintptr_t)" + address + ", " + map + ".dims, " + map + ".strides, " + map + ".box, fk_ones,\n" +
         "                              CU_TENSOR_MAP_INTERLEAVE_NONE, " + swizzle + ", " + l2 + ", " + oob + ");\n";
    c += "  if (r != CUDA_SUCCESS)\n    return fk_cuda_error(r, \"cuTensorMapEncodeTiled\", " +
         CStringLiteral("tensor map '" + t.name + "' over '" + t.tensor +
                        "' (TMA needs a 16-byte aligned address and strides that are multiples of 16 bytes)") +
         ");\n";
  }
  c += "  for (i = 0; i < plan->num_launches; ++i) {\n";
  c += "    const " + T("_launch") + "* l = &plan->launches[i];\n";
  c += "    " + st + " status = " + E("_OK") + ";\n";
  c += "    switch (l->index) {\n";
  for (size_t li = 0; li < m.launches.size(); ++li) {
    const LaunchSpec& l = m.launches[li];
    c += "      case " + std::to_string(li) + ": {  /* " + CommentText(l.kernel) + " */\n";
    std::vector<std::string> slots;
    for (size_t a = 0; a < l.args.size(); ++a) {
      const std::string& arg = l.args[a];
      const std::string value = "fk_a" + std::to_string(a);
      const std::string stored = "l->args[" + std::to_string(a) + "]";
      std::string slot;
      if (const TensorSpec* tensor = op_.FindTensor(arg)) {
        slot = "&fk_t" + std::to_string(tensor - op_.tensors.data());
      } else if (auto w = std::find_if(m.workspaces.begin(), m.workspaces.end(),
                                       [&](const WorkspaceSpec& ws) { return ws.name == arg; });
                 w != m.workspaces.end()) {
        slot = "&fk_w" + std::to_string(w - m.workspaces.begin());
      } else if (auto t = std::find_if(m.tensor_maps.begin(), m.tensor_maps.end(),
                                       [&](const TensorMapSpec& tm) { return tm.name == arg; });
                 t != m.tensor_maps.end()) {
        slot = "&fk_maps[" + std::to_string(t - m.tensor_maps.begin()) + "]";
      } else if (auto sc = std::find_if(op_.scalars.begin(), op_.scalars.end(),
                                        [&](const ScalarSpec& s) { return s.name == arg; });
                 sc != op_.scalars.end()) {
        slot = "&" + CParamName(sc->name);
      } else if (arg.rfind("i64:", 0) == 0) {
        c += "        int64_t " + value + " = " + stored + ";\n";
        slot = "&" + value;
      } else if (arg.rfind("f32:", 0) == 0) {
        const std::string rest = arg.substr(4);
        char* end = nullptr;
        const double d = std::strtod(rest.c_str(), &end);
        if (!rest.empty() && end == rest.c_str() + rest.size()) {
          // The literal as the worker reads it: strtod, then rounded to float.
          char text[64];
          std::snprintf(text, sizeof text, "%.17g", d);
          c += "        float " + value + " = (float)(" + text + ");\n";
        } else {
          c += "        float " + value + " = (float)" + stored + ";\n";
        }
        slot = "&" + value;
      } else {
        c += "        int32_t " + value + " = (int32_t)" + stored + ";\n";
        slot = "&" + value;
      }
      slots.push_back(slot);
    }
    if (slots.empty()) {
      c += "        status = fk_launch_one(l, functions[i], stream, NULL);\n";
    } else {
      c += "        void* fk_args[" + std::to_string(slots.size()) + "];\n";
      for (size_t a = 0; a < slots.size(); ++a)
        c += "        fk_args[" + std::to_string(a) + "] = (void*)" + slots[a] + ";\n";
      c += "        status = fk_launch_one(l, functions[i], stream, fk_args);\n";
    }
    c += "        break;\n      }\n";
  }
  c += "      default:\n        status = fk_error(" + E("_SYSTEM_ERROR") + ", \"a plan of another kernel\");\n";
  c += "    }\n    if (status != " + E("_OK") + ") return status;\n  }\n  return " + E("_OK") + ";\n}\n\n";
  *out = c;
  return true;
}

std::string CWriter::PublicCall() const {
  const std::string st = Status();
  std::string c;
  c += st + " " + T("_workspace_bytes") + "(" + SizeParams() + ", size_t* bytes) {\n"
       "  " + Plan() + " plan;\n"
       "  " + st + " status;\n"
       "  fk_last_error[0] = '\\0';\n"
       "  if (bytes == NULL) return fk_error(" + E("_INVALID_ARGUMENT") + ", \"bytes is NULL\");\n"
       "  *bytes = 0;\n"
       "  status = " + T("_plan") + "(" + SizeArgs() + ", &plan);\n"
       "  if (status != " + E("_OK") + ") return fk_error(status, plan.message);\n"
       "  *bytes = plan.workspace_bytes;\n"
       "  return " + E("_OK") + ";\n}\n\n";
  c += st + " " + s_.prefix + "(CUstream stream, " + TensorParams() + ScalarParams() + SizeParams() +
       ", void* workspace, size_t workspace_bytes) {\n";
  c += "  " + Plan() + " plan;\n"
       "  CUfunction functions[" + E("_MAX_LAUNCHES") + "];\n"
       "  CUcontext context = NULL, current = NULL, popped = NULL;\n"
       "  CUdeviceptr scratch = (CUdeviceptr)(uintptr_t)workspace;\n"
       "  int pushed = 0, allocated = 0;\n"
       "  CUresult r;\n"
       "  " + st + " status;\n"
       "  fk_last_error[0] = '\\0';\n"
       "  fk_last_cuda = CUDA_SUCCESS;\n"
       "  status = " + T("_plan") + "(" + SizeArgs() + ", &plan);\n"
       "  if (status != " + E("_OK") + ") return fk_error(status, plan.message);\n";
  for (const TensorSpec& t : op_.tensors)
    c += "  if (" + CParamName(t.name) + " == NULL) return fk_error(" + E("_INVALID_ARGUMENT") + ", " +
         CStringLiteral("tensor '" + t.name + "' is NULL") + ");\n";
  c += "  if (workspace != NULL && workspace_bytes < plan.workspace_bytes) {\n"
       "    fk_error(" + E("_INVALID_ARGUMENT") + ", \"the workspace holds \");\n"
       "    fk_append_int(fk_last_error, sizeof fk_last_error, (int64_t)workspace_bytes);\n"
       "    fk_append(fk_last_error, sizeof fk_last_error, \" bytes; these sizes need \");\n"
       "    fk_append_int(fk_last_error, sizeof fk_last_error, (int64_t)plan.workspace_bytes);\n"
       "    fk_append(fk_last_error, sizeof fk_last_error, " +
       CStringLiteral(" (" + T("_workspace_bytes") + ")") + ");\n"
       "    return " + E("_INVALID_ARGUMENT") + ";\n  }\n";
  c += "  r = cuStreamGetCtx(stream, &context);\n"
       "  if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuStreamGetCtx\", \"the stream's context\");\n"
       "  r = cuCtxGetCurrent(&current);\n"
       "  if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuCtxGetCurrent\", \"the calling thread\");\n"
       "  if (context != current) {\n"
       "    r = cuCtxPushCurrent(context);\n"
       "    if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuCtxPushCurrent\", \"the stream's context\");\n"
       "    pushed = 1;\n"
       "  }\n"
       "  status = fk_functions(&plan, context, functions);\n"
       "  if (status == " + E("_OK") + " && plan.workspace_bytes > 0 && workspace == NULL) {\n"
       "    r = cuMemAllocAsync(&scratch, plan.workspace_bytes, stream);\n"
       "    if (r != CUDA_SUCCESS) status = fk_cuda_error(r, \"cuMemAllocAsync\", \"the workspace\");\n"
       "    else allocated = 1;\n"
       "  }\n"
       "  if (status == " + E("_OK") + ") status = fk_zero_workspaces(&plan, scratch, stream);\n"
       "  if (status == " + E("_OK") + ") {\n"
       "    switch (plan.kernel) {\n";
  for (const CKernel& k : s_.kernels)
    c += "      case " + std::to_string(k.entry) + ":\n        status = fk_launch_" + std::to_string(k.entry) +
         "(&plan, functions, stream, " + TensorAndScalarArgs() + "scratch);\n        break;\n";
  c += "      default:\n        status = fk_error(" + E("_SYSTEM_ERROR") + ", \"a plan of no exported kernel\");\n"
       "    }\n  }\n"
       "  if (allocated) {\n"
       "    r = cuMemFreeAsync(scratch, stream);\n"
       "    if (r != CUDA_SUCCESS && status == " + E("_OK") + ") status = fk_cuda_error(r, \"cuMemFreeAsync\", \"the workspace\");\n"
       "  }\n"
       "  if (pushed) cuCtxPopCurrent(&popped);\n"
       "  return status;\n}\n\n";
  c += "const char* " + T("_last_error") + "(void) { return fk_last_error; }\n\n";
  c += "CUresult " + T("_last_cuda_result") + "(void) { return fk_last_cuda; }\n\n";
  c += "const char* " + T("_status_name") + "(" + st + " status) {\n  switch (status) {\n";
  for (const char* name : {"OK", "UNSUPPORTED_SIZE", "INVALID_ARGUMENT", "CUDA_ERROR", "SYSTEM_ERROR"})
    c += "    case " + E("_" + std::string(name)) + ": return \"" + name + "\";\n";
  c += "  }\n  return \"an unknown status\";\n}\n\n";
  c += st + " " + T("_unload") + "(CUcontext context) {\n"
       "  unsigned long long id = 0;\n"
       "  fk_context_modules** link;\n"
       "  fk_context_modules* e = NULL;\n"
       "  CUcontext popped = NULL;\n"
       "  CUresult r;\n"
       "  " + st + " status = " + E("_OK") + ";\n"
       "  int i;\n"
       "  if (context == NULL) {\n"
       "    r = cuCtxGetCurrent(&context);\n"
       "    if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuCtxGetCurrent\", \"the calling thread\");\n"
       "    if (context == NULL) return " + E("_OK") + ";  /* no context: nothing loaded in it */\n"
       "  }\n"
       "  r = cuCtxGetId(context, &id);\n"
       "  if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuCtxGetId\", \"the context\");\n"
       "  if (pthread_mutex_lock(&fk_mutex) != 0) return fk_error(" + E("_SYSTEM_ERROR") +
       ", \"pthread_mutex_lock failed\");\n"
       "  for (link = &fk_contexts; *link != NULL; link = &(*link)->next) {\n"
       "    if ((*link)->context_id != id) continue;\n"
       "    e = *link;\n"
       "    *link = e->next;\n"
       "    break;\n"
       "  }\n"
       "  pthread_mutex_unlock(&fk_mutex);\n"
       "  if (e == NULL) return " + E("_OK") + ";\n"
       "  r = cuCtxPushCurrent(context);\n"
       "  if (r == CUDA_SUCCESS) {\n"
       "    for (i = 0; i < FK_CUBINS; ++i) {\n"
       "      if (e->modules[i] == NULL) continue;\n"
       "      r = cuModuleUnload(e->modules[i]);\n"
       "      if (r != CUDA_SUCCESS && status == " + E("_OK") + ") status = fk_cuda_error(r, \"cuModuleUnload\", \"a cubin\");\n"
       "    }\n"
       "    cuCtxPopCurrent(&popped);\n"
       "  } else {\n"
       "    status = fk_cuda_error(r, \"cuCtxPushCurrent\", \"the context\");\n"
       "  }\n"
       "  free(e);\n"
       "  return status;\n}\n";
  return c;
}

bool CWriter::Source(std::string* out, std::string* err) {
  std::string c = "/* " + s_.prefix + ".c: seal " + CommentText(s_.seal->id) + " of " + CommentText(op_.name) +
                   " as C, generated by forgek " FORGEK_VERSION "; see " + s_.prefix +
                   ".h. The launch plan is C generated\n   from the manifests' expressions (int64, every overflow and "
                   "division by zero an unsupported size). */\n";
  c += "#include \"" + s_.prefix + ".h\"\n\n#include <pthread.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include "
       "<string.h>\n\n";
  c += "#if defined(__cplusplus)\n#define FK_THREAD_LOCAL thread_local\n#define FK_ALIGNED alignas(64)\n#else\n"
       "#define FK_THREAD_LOCAL _Thread_local\n#define FK_ALIGNED _Alignas(64)\n#endif\n\n";
  c += Cubins();
  c += MessageHelpers();
  std::string part;
  if (!TensorCheck(&part, err)) return false;
  c += part;
  for (const CKernel& k : s_.kernels) {
    if (!KernelPlan(k, &part, err)) {
      *err = "kernel " + std::to_string(k.entry) + " (" + k.label + "): " + *err;
      return false;
    }
    c += part;
  }
  c += PublicPlan();
  c += ModuleCache();
  for (const CKernel& k : s_.kernels) {
    if (!KernelLaunch(k, &part, err)) {
      *err = "kernel " + std::to_string(k.entry) + " (" + k.label + "): " + *err;
      return false;
    }
    c += part;
  }
  c += PublicCall();
  *out = std::move(c);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Loading the seal's kernels from the store.

// One kernel of the seal as the export embeds it: its stored candidate, checked against the
// operator, and its sealed cubin (the store's; else rebuilt, which must hash to `sealed_sha` unless
// `allow_rebuilt`, as ExportSeal requires).
bool LoadKernel(Store& store, Compiler& compiler, const SealRecord& seal, const OperatorSpec& op, const std::string& what,
                const std::string& candidate_hash, const std::string& params_json, const std::string& sealed_sha,
                bool allow_rebuilt, CKernel* k, std::string* cubin, bool* rebuilt, std::string* err) {
  CandidateRecord record;
  bool found = false;
  if (!store.GetCandidate(candidate_hash, &record, &found, err)) return false;
  if (!found) {
    *err = what + " names candidate " + candidate_hash + " which the store does not hold";
    return false;
  }
  Diagnostics diags;
  if (!ParseCandidate("kernel.cu", record.source, &k->candidate, &diags)) {
    *err = what + ": the sealed source does not parse: " + FormatDiagnostics(diags);
    return false;
  }
  if (!ValidateCandidate(k->candidate, op, &diags)) {
    *err = what + ": its manifest does not fit operator " + op.name + " as it is now: " + FormatDiagnostics(diags);
    return false;
  }
  std::string why;
  if (!ParseParamsJson(params_json, &k->params, &why)) {
    *err = what + ": params: " + why;
    return false;
  }
  k->candidate_hash = candidate_hash;
  bool stored = false;
  if (!sealed_sha.empty() && !store.GetCubin(sealed_sha, cubin, &stored, nullptr, err)) return false;
  *rebuilt = !stored;
  if (stored) return true;
  CompileResult compiled = compiler.CompileNow(
      {"kernel.cu", ExpandedSource(record.source), seal.arch, ParamDefines(k->params)});
  if (!compiled.ok) {
    *err = what + ": the store keeps no cubin of it and its source no longer compiles: " + compiled.Summary();
    return false;
  }
  if (!sealed_sha.empty() && Sha256Hex(compiled.cubin) != sealed_sha && !allow_rebuilt) {
    *err = what + ": the store keeps no cubin of it and the rebuilt one (nvrtc " + Compiler::NvrtcVersion() +
           ") differs from the sealed one (" + seal.toolchain + "); pass --allow-rebuilt to export it anyway";
    return false;
  }
  if (!sealed_sha.empty()) KeepRebuiltCubin(store, sealed_sha, compiled.cubin, what);
  *cubin = std::move(compiled.cubin);
  return true;
}

// Adds kernel `k` with `bytes` to the export, its cubin shared with any kernel of the same bytes.
void AddKernel(CSeal* s, CKernel k, const std::string& bytes) {
  const std::string sha = Sha256Hex(bytes);
  auto it = std::find(s->cubin_shas.begin(), s->cubin_shas.end(), sha);
  if (it == s->cubin_shas.end()) {
    s->cubin_shas.push_back(sha);
    s->cubins.push_back(bytes);
    it = s->cubin_shas.end() - 1;
  }
  k.cubin = static_cast<size_t>(it - s->cubin_shas.begin());
  s->kernels.push_back(std::move(k));
}

// A dispatch seal's table (metadata.dispatch, docs/seal-format.md) into the export: each kernel
// entry loaded, each row's config given its values, the fallback (when the table names none: the
// seal's own kernel, as ServeOutsideTable serves it).
bool LoadDispatch(Store& store, Compiler& compiler, const nlohmann::json& d, bool allow_rebuilt, CSeal* s,
                  std::string* err) {
  const SealRecord& seal = *s->seal;
  const std::string where = "seal " + seal.id + " metadata dispatch";
  if (!d.is_object() || !d.contains("kernels") || !d["kernels"].is_array() || !d.contains("table") ||
      !d["table"].is_array()) {
    *err = where + ": expected an object with arrays \"kernels\" and \"table\"";
    return false;
  }
  const nlohmann::json& entries = d["kernels"];
  std::vector<int> kernel_of(entries.size(), -1);
  std::vector<std::string> reference_of(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const nlohmann::json& e = entries[i];
    const std::string at = where + ".kernels[" + std::to_string(i) + "]";
    if (e.is_object() && e.contains("reference")) {
      reference_of[i] = e["reference"].is_string() ? e["reference"].get<std::string>() : "the expert reference";
      s->reference = reference_of[i];
      continue;
    }
    if (!e.is_object() || !e.contains("candidate") || !e["candidate"].is_string() || !e.contains("params") ||
        !e["params"].is_object()) {
      *err = at + ": needs \"candidate\" (a hash) and \"params\" (an object), or \"reference\"";
      return false;
    }
    auto text = [&](const char* field) {
      auto it = e.find(field);
      return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    CKernel k;
    k.entry = static_cast<int>(i);
    k.label = text("label").empty() ? "kernel " + std::to_string(i) : text("label");
    std::string bytes;
    bool rebuilt = false;
    if (!LoadKernel(store, compiler, seal, *s->op, at, e["candidate"].get<std::string>(), e["params"].dump(),
                    text("cubin_sha256"), allow_rebuilt, &k, &bytes, &rebuilt, err))
      return false;
    s->rebuilt = s->rebuilt || rebuilt;
    kernel_of[i] = static_cast<int>(s->kernels.size());
    AddKernel(s, std::move(k), bytes);
  }
  for (size_t i = 0; i < d["table"].size(); ++i) {
    const nlohmann::json& row = d["table"][i];
    const std::string at = where + ".table[" + std::to_string(i) + "]";
    if (!row.is_object() || !row.contains("config") || !row["config"].is_string() || !row.contains("kernel") ||
        !row["kernel"].is_number_unsigned() || row["kernel"].get<size_t>() >= entries.size()) {
      *err = at + ": needs \"config\" (a name) and \"kernel\" (an index into kernels)";
      return false;
    }
    CRow r;
    r.config = row["config"].get<std::string>();
    r.why = row.contains("why") && row["why"].is_string() ? row["why"].get<std::string>() : "";
    const ConfigSpec* config = s->op->FindConfig(r.config);
    if (!config) {
      *err = at + ".config: '" + r.config + "' is not a config of operator " + s->op->name +
             " as it is now; a C export needs its values";
      return false;
    }
    r.values = config->values;
    const size_t entry = row["kernel"].get<size_t>();
    r.kernel = kernel_of[entry];
    r.reference = reference_of[entry];
    s->rows.push_back(std::move(r));
  }
  if (d.contains("fallback")) {
    const nlohmann::json& f = d["fallback"];
    if (!f.is_number_unsigned() || f.get<size_t>() >= entries.size()) {
      *err = where + ".fallback: needs an index into kernels";
      return false;
    }
    s->fallback = kernel_of[f.get<size_t>()];
    if (s->fallback < 0) s->reference = reference_of[f.get<size_t>()];
    return true;
  }
  // A table written before fallbacks were recorded: the seal's own kernel is the fallback.
  CKernel own;
  own.entry = static_cast<int>(entries.size());
  own.label = "seal " + seal.id.substr(0, 12) + " (its own kernel: the table names no fallback)";
  std::string bytes;
  bool rebuilt = false;
  if (!LoadKernel(store, compiler, seal, *s->op, "seal " + seal.id, seal.candidate_hash, seal.params_json,
                  seal.cubin_sha256, allow_rebuilt, &own, &bytes, &rebuilt, err))
    return false;
  s->rebuilt = s->rebuilt || rebuilt;
  s->fallback = static_cast<int>(s->kernels.size());
  AddKernel(s, std::move(own), bytes);
  return true;
}

// Every name the generated functions take (tensors, scalars, sizes) must be a distinct C identifier.
bool CheckNames(const OperatorSpec& op, std::string* err) {
  std::set<std::string> seen;
  auto add = [&](const std::string& what, const std::string& name) {
    if (!IsIdentifier(name)) {
      *err = "operator " + op.name + ": " + what + " '" + name + "' is not a C identifier";
      return false;
    }
    if (!seen.insert(CParamName(name)).second) {
      *err = "operator " + op.name + ": " + what + " '" + name + "' has the C name of another parameter";
      return false;
    }
    return true;
  };
  for (const TensorSpec& t : op.tensors)
    if (!add("tensor", t.name)) return false;
  for (const ScalarSpec& sc : op.scalars)
    if (!add("scalar", sc.name)) return false;
  for (const std::string& p : op.params)
    if (!add("param", p)) return false;
  if (op.params.empty()) {
    *err = "operator " + op.name + " has no params: nothing to plan";
    return false;
  }
  return true;
}

}  // namespace

std::string CExportName(const std::string& operator_name) { return "forgek_" + CIdentifierOf(operator_name); }

bool ExportSealC(Store& store, const SealRecord& seal, const OperatorSpec& op, Compiler& compiler,
                 const std::string& dir, bool allow_rebuilt, std::string* err) {
  CSeal s;
  s.seal = &seal;
  s.op = &op;
  s.prefix = CExportName(op.name);
  s.upper = Upper(s.prefix);
  s.reference = op.reference.library.empty() ? op.reference.kernel : op.reference.library;
  if (!CheckNames(op, err)) return false;
  nlohmann::json metadata = ParseJsonLenient(seal.metadata_json.empty() ? "{}" : seal.metadata_json);
  s.dispatch = metadata.is_object() && metadata.contains("dispatch");
  if (s.dispatch) {
    if (!LoadDispatch(store, compiler, metadata["dispatch"], allow_rebuilt, &s, err)) return false;
  } else {
    CKernel k;
    k.label = "seal " + seal.id.substr(0, 12);
    std::string bytes;
    if (!LoadKernel(store, compiler, seal, op, "seal " + seal.id, seal.candidate_hash, seal.params_json,
                    seal.cubin_sha256, allow_rebuilt, &k, &bytes, &s.rebuilt, err))
      return false;
    AddKernel(&s, std::move(k), bytes);
  }
  CWriter writer(s);
  std::string header, source;
  if (!writer.Header(&header, err) || !writer.Source(&source, err)) {
    *err = "seal " + seal.id + ": " + *err;
    return false;
  }
  return WriteFolderAtomically(
      dir,
      [&](const fs::path& tmp, std::string* fill_err) {
        return WriteFileAtomic((tmp / (s.prefix + ".h")).string(), header, fill_err) &&
               WriteFileAtomic((tmp / (s.prefix + ".c")).string(), source, fill_err);
      },
      err);
}

}  // namespace forgek
