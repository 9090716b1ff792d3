// `seal export --lang torch`: the C export inside a Python package that registers torch.ops.forgek.<op>.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "forgek/core/atomic_file.h"
#include "forgek/core/expr.h"
#include "forgek/seal/seal.h"
#include "export_folder.h"
#include "seal_export_torch.h"

namespace forgek {
namespace {

namespace fs = std::filesystem;
using TreeNode = Expr::TreeNode;

// Every occurrence of `from` in `text` replaced by `to`: the package's fixed Python is written with
// @NAME@ placeholders, which keeps it readable here as the Python it becomes.
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Python's keywords and the module names the generated functions read, which an argument must not shadow.
bool Reserved(const std::string& s) {
  static const std::set<std::string> kReserved = {
      "False", "None",   "True",  "and",    "as",   "assert", "async", "await",  "break", "class",  "continue",
      "def",   "del",    "elif",  "else",   "except", "finally", "for", "from",  "global", "if",   "import",
      "in",    "is",     "lambda", "nonlocal", "not", "or",   "pass",  "raise",  "return", "try",  "while",
      "with",  "yield",  "torch", "ctypes", "os",   "min",    "max",   "int",    "match", "case",  "type"};
  return kReserved.count(s) > 0 || s.rfind("_", 0) == 0;
}

// A name of the operator as a Python argument: as it is unless Python or the generated code claims
// it (then with a trailing underscore). False when it is no identifier at all.
bool PyName(const std::string& name, std::string* out, std::string* err) {
  if (!IsIdentifier(name)) {
    *err = "the name '" + name + "' is no Python identifier, so the torch export cannot name its argument";
    return false;
  }
  *out = Reserved(name) ? name + "_" : name;
  return true;
}

// `text` as a Python string literal: double quotes, backslashes and control characters escaped;
// UTF-8 kept (the files are UTF-8, Python's default for source).
std::string PyString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Free text inside a """ docstring: no backslash escapes, no closing quotes, control characters as spaces.
std::string DocText(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c < 0x20 && c != '\n') out += ' ';
    else out += static_cast<char>(c);
  }
  return out;
}

// Words wrapped into lines of at most `width` characters, each starting with `indent`.
std::string Wrap(const std::string& text, const std::string& indent, size_t width = 96) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

const char* TorchDType(DType t) {
  switch (t) {
    case DType::f64: return "torch.float64";
    case DType::f32: return "torch.float32";
    case DType::f16: return "torch.float16";
    case DType::bf16: return "torch.bfloat16";
    case DType::e4m3: return "torch.float8_e4m3fn";
    case DType::e5m2: return "torch.float8_e5m2";
    case DType::i8: return "torch.int8";
    case DType::u8: return "torch.uint8";
    case DType::i32: return "torch.int32";
    case DType::u32: return "torch.uint32";
    case DType::i64: return "torch.int64";
  }
  return "torch.float32";
}

// ---------------------------------------------------------------------------------------------
// Expressions as Python, node by node from forgek's tree: the helpers (_fk_add, _fk_div, ...) carry
// Eval's int64 checks and messages; Python evaluates operands and arguments left to right and `and`
// / `or` short-circuit, which is Eval's order.

class PyExprWriter {
 public:
  explicit PyExprWriter(const std::vector<std::pair<std::string, std::string>>* names) : names_(names) {}

  bool Write(const TreeNode& n, std::string* out, std::string* err) const {
    switch (n.kind) {
      case TreeNode::Kind::integer:
        *out = std::to_string(n.value);
        return true;
      case TreeNode::Kind::name:
        for (const auto& [name, py] : *names_)
          if (name == n.name) return *out = py, true;
        *err = "unknown name '" + n.name + "'";
        return false;
      case TreeNode::Kind::unary: {
        std::string v;
        if (!Write(n.children[0], &v, err)) return false;
        *out = n.ops[0] == "!" ? "int((" + v + ") == 0)" : "_fk_neg(" + v + ")";
        return true;
      }
      case TreeNode::Kind::chain:
        return Chain(n, out, err);
      case TreeNode::Kind::call:
        return Call(n, out, err);
    }
    *err = "internal error: unknown expression node";
    return false;
  }

 private:
  bool Chain(const TreeNode& n, std::string* out, std::string* err) const {
    std::string acc;
    if (!Write(n.children[0], &acc, err)) return false;
    for (size_t i = 0; i < n.ops.size(); ++i) {
      std::string rhs;
      if (!Write(n.children[i + 1], &rhs, err)) return false;
      const std::string& op = n.ops[i];
      if (op == "+") acc = "_fk_add(" + acc + ", " + rhs + ")";
      else if (op == "-") acc = "_fk_sub(" + acc + ", " + rhs + ")";
      else if (op == "*") acc = "_fk_mul(" + acc + ", " + rhs + ")";
      else if (op == "/") acc = "_fk_div(" + acc + ", " + rhs + ")";
      else if (op == "%") acc = "_fk_mod(" + acc + ", " + rhs + ")";
      else if (op == "&&") acc = "int((" + acc + ") != 0 and (" + rhs + ") != 0)";
      else if (op == "||") acc = "int((" + acc + ") != 0 or (" + rhs + ") != 0)";
      else if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=")
        acc = "int((" + acc + ") " + op + " (" + rhs + "))";
      else return *err = "internal error: operator '" + op + "'", false;
    }
    *out = acc;
    return true;
  }

  bool Call(const TreeNode& n, std::string* out, std::string* err) const {
    std::string args;
    for (const TreeNode& c : n.children) {
      std::string a;
      if (!Write(c, &a, err)) return false;
      args += (args.empty() ? "" : ", ") + a;
    }
    if (n.name == "min" || n.name == "max") *out = n.name + "(" + args + ")";
    else if (n.name == "ceil_div" || n.name == "pow2" || n.name == "log2") *out = "_fk_" + n.name + "(" + args + ")";
    else return *err = "internal error: function " + n.name, false;
    return true;
  }

  const std::vector<std::pair<std::string, std::string>>* names_;
};

// The fixed part of _shapes.py: int64 arithmetic with Eval's checks and messages.
const char* kShapeHelpers = R"PY(_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


class ShapeError(ValueError):
    """An input shape that does not fit the operator, or sizes its shape expressions refuse."""


def _fk_int64(value, op):
    if value < _INT64_MIN or value > _INT64_MAX:
        raise ShapeError("overflow in '" + op + "'")
    return value


def _fk_add(a, b):
    return _fk_int64(a + b, "+")


def _fk_sub(a, b):
    return _fk_int64(a - b, "-")


def _fk_mul(a, b):
    return _fk_int64(a * b, "*")


def _fk_neg(a):
    return _fk_int64(-a, "-")


def _fk_trunc_div(a, b):
    # C's division, toward zero (Python's // rounds toward minus infinity).
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _fk_div(a, b):
    if b == 0:
        raise ShapeError("division by zero")
    if a == _INT64_MIN and b == -1:
        raise ShapeError("overflow in '/'")
    return _fk_trunc_div(a, b)


def _fk_mod(a, b):
    # C's remainder: the sign of the dividend.
    if b == 0:
        raise ShapeError("modulo by zero")
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _fk_ceil_div(a, b):
    if b == 0:
        raise ShapeError("ceil_div by zero")
    if a == _INT64_MIN and b == -1:
        raise ShapeError("overflow in ceil_div")
    q = _fk_trunc_div(a, b)
    if abs(a) % abs(b) != 0 and (a < 0) == (b < 0):
        q += 1
    return q


def _fk_pow2(a):
    if a < 0 or a > 62:
        raise ShapeError("pow2 needs an exponent in [0, 62], got " + str(a))
    return 1 << a


def _fk_log2(a):
    if a < 1:
        raise ShapeError("log2 needs a positive argument, got " + str(a))
    return int(a).bit_length() - 1
)PY";

// The fixed part of _shapes.py that reads the tables above it.
const char* kShapeLogic = R"PY(

def _shape_text(name):
    return "[" + ", ".join(_SHAPE_TEXT[name]) + "]"


def _sizes_text(sizes):
    parts = []
    for p in PARAMS:
        if p in INFERRED:
            t, d = INFERRED[p]
            parts.append(f"{p}={sizes[p]} ({t} dimension {d})")
        else:
            parts.append(f"{p}={sizes[p]} (keyword)")
    return ", ".join(parts)


def tensor_shape(name, sizes):
    """The shape of tensor `name` for `sizes` (a dict param -> int), as a tuple."""
    try:
        return SHAPE_FUNCTIONS[name](*(sizes[p] for p in PARAMS))
    except ShapeError as e:
        raise ShapeError(f"{OPERATOR}: the shape {_shape_text(name)} of {name} fails for sizes "
                         f"{_sizes_text(sizes)}: {e}") from None


def infer_sizes(shapes, keyword_sizes):
    """The operator's sizes from the shapes of the tensors the op takes and its keyword sizes.

    `shapes` maps each name in ARGUMENTS to its shape (a sequence of ints), `keyword_sizes` each
    name in KEYWORD_SIZES to its value. Every input's rank and every dimension is checked against
    the operator's shape expressions; a mismatch raises ShapeError naming the tensor and dimension.
    """
    for name in ARGUMENTS:
        if len(shapes[name]) != len(_SHAPE_TEXT[name]):
            raise ShapeError(f"{OPERATOR}: {name} has {len(shapes[name])} dimensions, but the operator's "
                             f"shape {_shape_text(name)} has {len(_SHAPE_TEXT[name])}")
    sizes = {}
    for p in PARAMS:
        if p in INFERRED:
            t, d = INFERRED[p]
            sizes[p] = shapes[t][d]
        elif p in keyword_sizes:
            sizes[p] = keyword_sizes[p]
        else:
            raise ShapeError(f"{OPERATOR}: no input's shape gives the size {p}: pass it as the keyword {p}=")
    for name in ARGUMENTS:
        want = tensor_shape(name, sizes)
        for d, (got, expected) in enumerate(zip(shapes[name], want)):
            if got != expected:
                raise ShapeError(f"{OPERATOR}: {name} dimension {d} is {got}, but the operator's shape "
                                 f"{_shape_text(name)} makes it {_SHAPE_TEXT[name][d]} = {expected} for sizes "
                                 f"{_sizes_text(sizes)}")
    return sizes
)PY";

struct ShapeTables {
  std::vector<std::pair<std::string, std::string>> params;  // operator name, Python argument name
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> inferred;  // param, (tensor, dimension)
  std::vector<std::string> keyword;                                          // params no input gives
};

bool IsArgument(const TensorSpec& t) { return t.role != TensorRole::output; }
bool IsResult(const TensorSpec& t) { return t.role != TensorRole::input; }

// Which input dimension gives each param: the first (in the operator's order) whose expression is
// exactly that name. The rest become keyword arguments.
bool Tables(const OperatorSpec& op, ShapeTables* out, std::string* err) {
  for (const std::string& p : op.params) {
    std::string py;
    if (!PyName(p, &py, err)) return false;
    out->params.push_back({p, py});
  }
  for (const std::string& p : op.params) {
    bool found = false;
    for (size_t t = 0; t < op.tensors.size() && !found; ++t) {
      if (!IsArgument(op.tensors[t])) continue;
      for (size_t d = 0; d < op.tensors[t].shape.size() && !found; ++d) {
        Diagnostic diag;
        std::unique_ptr<Expr> e = Expr::Parse(op.tensors[t].shape[d], &diag);
        if (!e) return *err = "shape '" + op.tensors[t].shape[d] + "' of " + op.tensors[t].name + ": " + diag.message, false;
        const TreeNode tree = e->Tree();
        if (tree.kind == TreeNode::Kind::name && tree.name == p) {
          out->inferred.push_back({p, {t, d}});
          found = true;
        }
      }
    }
    if (!found) out->keyword.push_back(p);
  }
  return true;
}

std::string Tuple(const std::vector<std::string>& items) {
  std::string out = "(";
  for (const std::string& s : items) out += s + (items.size() == 1 ? ",)" : ", ");
  if (items.size() > 1) out.resize(out.size() - 2);
  return items.size() == 1 ? out : out + ")";
}

bool ShapeFunction(const TensorSpec& t, const ShapeTables& tables, std::string* out, std::string* err) {
  std::string args, dims;
  for (const auto& [name, py] : tables.params) args += (args.empty() ? "" : ", ") + py;
  std::vector<std::string> items;
  PyExprWriter writer(&tables.params);
  for (const std::string& d : t.shape) {
    Diagnostic diag;
    std::unique_ptr<Expr> e = Expr::Parse(d, &diag);
    if (!e) return *err = "shape '" + d + "' of " + t.name + ": " + diag.message, false;
    std::string py;
    if (!writer.Write(e->Tree(), &py, err)) return *err = "shape '" + d + "' of " + t.name + ": " + *err, false;
    items.push_back(py);
    dims += (dims.empty() ? "" : ", ") + d;
  }
  *out = "def shape_" + t.name + "(" + args + "):\n    \"\"\"" + DocText(t.name + ": [" + dims + "]") +
         "\"\"\"\n    return " + Tuple(items) + "\n";
  return true;
}

}  // namespace

bool TorchShapesModule(const OperatorSpec& op, std::string* out, std::string* err) {
  ShapeTables tables;
  if (!Tables(op, &tables, err)) return false;
  std::string py = "\"\"\"Shapes of " + DocText(op.name) + "'s tensors, generated by forgek from its operator.json.\n\n";
  py += Wrap("Torch-free, so that the shape logic can be checked without torch or a GPU: each tensor's shape "
             "as a function of the sizes (generated from forgek's expression trees with its int64 semantics: "
             "overflow and division by zero are errors, / truncates toward zero, % takes the dividend's sign), "
             "the sizes read from the input tensors' shapes, and every input shape checked against them.",
             "");
  py += "\"\"\"\n\n";
  py += "OPERATOR = " + PyString(op.name) + "\n";
  std::vector<std::string> params, arguments, results, keyword;
  for (const std::string& p : op.params) params.push_back(PyString(p));
  for (const TensorSpec& t : op.tensors) {
    if (!IsIdentifier(t.name)) return *err = "the tensor name '" + t.name + "' is no Python identifier", false;
    if (IsArgument(t)) arguments.push_back(PyString(t.name));
    if (IsResult(t)) results.push_back(PyString(t.name));
  }
  for (const std::string& p : tables.keyword) keyword.push_back(PyString(p));
  py += "# The operator's sizes, in the order of the C function's parameters.\n";
  py += "PARAMS = " + Tuple(params) + "\n";
  py += "# Each tensor: (name, role, dtype), in the operator's order (the C function's).\n";
  py += "TENSORS = (\n";
  for (const TensorSpec& t : op.tensors)
    py += "    (" + PyString(t.name) + ", " + PyString(TensorRoleName(t.role)) + ", " + PyString(DTypeName(t.dtype)) + "),\n";
  py += ")\n";
  py += "# The tensors the op takes (inputs and inouts) and those it returns (outputs and inouts).\n";
  py += "ARGUMENTS = " + Tuple(arguments) + "\n";
  py += "RESULTS = " + Tuple(results) + "\n";
  py += "# Each size read from the first input dimension whose expression is exactly its name: (tensor, dimension).\n";
  py += "INFERRED = {";
  for (size_t i = 0; i < tables.inferred.size(); ++i) {
    const auto& [p, at] = tables.inferred[i];
    py += (i ? ", " : "") + PyString(p) + ": (" + PyString(op.tensors[at.first].name) + ", " + std::to_string(at.second) + ")";
  }
  py += "}\n";
  py += "# Sizes that no input's shape gives: keyword arguments of the op.\n";
  py += "KEYWORD_SIZES = " + Tuple(keyword) + "\n";
  py += "# Each tensor's shape as operator.json writes it.\n";
  py += "_SHAPE_TEXT = {\n";
  for (const TensorSpec& t : op.tensors) {
    std::vector<std::string> dims;
    for (const std::string& d : t.shape) dims.push_back(PyString(d));
    py += "    " + PyString(t.name) + ": " + Tuple(dims) + ",\n";
  }
  py += "}\n\n";
  py += kShapeHelpers;
  for (const TensorSpec& t : op.tensors) {
    std::string f;
    if (!ShapeFunction(t, tables, &f, err)) return false;
    py += "\n\n" + f;
  }
  py += "\n\nSHAPE_FUNCTIONS = {";
  for (size_t i = 0; i < op.tensors.size(); ++i)
    py += (i ? ", " : "") + PyString(op.tensors[i].name) + ": shape_" + op.tensors[i].name;
  py += "}\n";
  py += kShapeLogic;
  *out = py;
  return true;
}

namespace {

// The fixed parts of __init__.py: its imports, then (after the operator's tables) finding the toolkit and the compiler, building and loading the
// library, and the checks and the call every op shares. @STEM@ is the C export's name.
const char* kInitImports = R"PY(import ctypes
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile

import torch

from . import _shapes
)PY";

const char* kInitCommon = R"PY(
_HERE = os.path.dirname(os.path.abspath(__file__))
_STEM = "@STEM@"


class ForgekError(RuntimeError):
    """A status other than OK from the C function; `status` is its name ("UNSUPPORTED_SIZE", ...)."""

    def __init__(self, status, message):
        super().__init__(f"{OPERATOR}: {status}: {message}")
        self.status = status


def _cuda_root():
    """The CUDA toolkit's folder: CUDA_HOME, else CUDA_PATH, else /usr/local/cuda; it must hold include/cuda.h."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            if not os.path.isfile(os.path.join(root, "include", "cuda.h")):
                raise ImportError(f"{_STEM}: {var}={root} has no include/cuda.h; point {var} at the CUDA toolkit")
            return root
    if os.path.isfile("/usr/local/cuda/include/cuda.h"):
        return "/usr/local/cuda"
    raise ImportError(f"{_STEM}: cannot find the CUDA toolkit (cuda.h) to build the library: CUDA_HOME and "
                      "CUDA_PATH are unset and /usr/local/cuda/include/cuda.h does not exist; set CUDA_HOME")


def _cache_dir():
    """Where built libraries are kept: FORGEK_TORCH_CACHE, else $XDG_CACHE_HOME/forgek/torch (~/.cache)."""
    if os.environ.get("FORGEK_TORCH_CACHE"):
        return os.environ["FORGEK_TORCH_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "forgek", "torch")


def _build_command(output):
    """The compiler command that builds the library into `output`."""
    cc = shlex.split(os.environ.get("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        raise ImportError(f"{_STEM}: no C compiler to build the library: `{cc[0] if cc else ''}` is not in "
                          "PATH (install cc or set CC)")
    root = _cuda_root()
    command = cc + ["-std=c11", "-O2", "-fPIC", "-shared", "-I" + _HERE, "-I" + os.path.join(root, "include"),
                    os.path.join(_HERE, _STEM + ".c"), "-o", output]
    # Linked against the toolkit's stub when it has one: the soname is libcuda.so.1 either way, so the
    # driver's own library is the one loaded at run time (and no run-time path names the stub).
    for stubs in ("lib64/stubs", "lib/stubs", "targets/x86_64-linux/lib/stubs", "targets/sbsa-linux/lib/stubs"):
        if os.path.isfile(os.path.join(root, stubs, "libcuda.so")):
            command.append("-L" + os.path.join(root, stubs))
            break
    return command + ["-lcuda", "-lpthread"]


def _library_path():
    """The built library, compiled now unless the cache holds it for this source and command.

    Keyed by the hash of the C, the header and the command, so a new export or compiler builds
    anew; compiled to a temporary name and renamed, so concurrent imports never load half a file.
    """
    cache = _cache_dir()
    placeholder = os.path.join(cache, "OUTPUT")
    key = hashlib.sha256()
    for name in (_STEM + ".c", _STEM + ".h"):
        with open(os.path.join(_HERE, name), "rb") as f:
            key.update(f.read())
    key.update("\0".join(_build_command(placeholder)).encode())
    path = os.path.join(cache, f"{_STEM}-{key.hexdigest()[:20]}.so")
    if os.path.isfile(path):
        return path
    try:
        os.makedirs(cache, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{_STEM}-", suffix=".so", dir=cache)
        os.close(fd)
    except OSError as e:
        raise ImportError(f"{_STEM}: cannot write the library cache {cache} ({e}); set FORGEK_TORCH_CACHE") from e
    command = _build_command(tmp)
    try:
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            raise ImportError(f"{_STEM}: building the library failed:\n  {shlex.join(command)}\n"
                              f"{run.stdout}{run.stderr}")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def _load():
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"{_STEM}: cannot load {path} ({e}); it needs the NVIDIA driver's libcuda.so.1") from e
    sizes = [ctypes.c_int64] * len(_shapes.PARAMS)
    lib.@STEM@_workspace_bytes.argtypes = sizes + [ctypes.POINTER(ctypes.c_size_t)]
    lib.@STEM@_workspace_bytes.restype = ctypes.c_int
    # stream, tensors, scalars, sizes, workspace, workspace_bytes: the C function's parameters.
    lib.@STEM@.argtypes = ([ctypes.c_void_p] + [ctypes.c_void_p] * len(_shapes.TENSORS) + _SCALAR_CTYPES + sizes
                           + [ctypes.c_void_p, ctypes.c_size_t])
    lib.@STEM@.restype = ctypes.c_int
    lib.@STEM@_last_error.argtypes = []
    lib.@STEM@_last_error.restype = ctypes.c_char_p
    lib.@STEM@_status_name.argtypes = [ctypes.c_int]
    lib.@STEM@_status_name.restype = ctypes.c_char_p
    return lib


_lib = _load()
_driver = ctypes.CDLL("libcuda.so.1")


def _make_context_current(index):
    """Makes device `index`'s primary context (torch's) current where the thread has none.

    The C function runs in its stream's context, and the default stream's is the thread's current
    one; torch makes it current lazily, so a thread that has only allocated from torch's cache may
    have none yet.
    """
    context = ctypes.c_void_p()
    if _driver.cuCtxGetCurrent(ctypes.byref(context)) == 0 and context.value:
        return
    dev = ctypes.c_int()
    if (_driver.cuDeviceGet(ctypes.byref(dev), index) != 0
            or _driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), dev) != 0
            or _driver.cuCtxSetCurrent(context) != 0):
        raise ForgekError("CUDA_ERROR", f"cannot make device {index}'s primary context current")


def _check_status(status):
    if status != 0:
        raise ForgekError(_lib.@STEM@_status_name(status).decode(),
                          _lib.@STEM@_last_error().decode(errors="replace"))


def workspace_bytes(sizes):
    """The workspace the kernels need for `sizes` (a dict param -> int); ForgekError for sizes no kernel takes."""
    out = ctypes.c_size_t(0)
    _check_status(_lib.@STEM@_workspace_bytes(*(sizes[p] for p in _shapes.PARAMS), ctypes.byref(out)))
    return out.value


def _checked_sizes(tensors, keyword_sizes):
    """The device and the sizes of a call, every tensor it takes checked: CUDA, one device, the
    operator's dtype, contiguous (row-major), and its shape against the operator's."""
    device = None
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{OPERATOR}: {name} must be a torch.Tensor, not {type(t).__name__}")
        if t.device.type != "cuda":
            raise ValueError(f"{OPERATOR}: {name} is on {t.device}; the op runs on CUDA tensors")
        if device is None:
            device = t.device
        elif t.device != device:
            raise ValueError(f"{OPERATOR}: {name} is on {t.device} but {next(iter(tensors))} on {device}")
        if t.dtype != _DTYPES[name]:
            raise TypeError(f"{OPERATOR}: {name} is {t.dtype}; the operator takes {_DTYPES[name]}")
        if not t.is_contiguous():
            raise ValueError(f"{OPERATOR}: {name} is not contiguous (row-major, strides {tuple(t.stride())}); "
                             f"pass {name}.contiguous()")
    try:
        sizes = _shapes.infer_sizes({n: tuple(t.shape) for n, t in tensors.items()}, keyword_sizes)
    except _shapes.ShapeError as e:
        raise ValueError(str(e)) from None
    return device, sizes


def _results(tensors, out_shapes, device):
    """Every tensor of the call in the C function's order: inputs as given, inouts cloned (the op
    is functional), outputs allocated (`out_shapes`: name -> shape)."""
    out = []
    for name, role, _ in _shapes.TENSORS:
        if role == "input":
            out.append(tensors[name])
        elif role == "inout":
            out.append(tensors[name].clone())
        else:
            out.append(torch.empty(out_shapes[name], dtype=_DTYPES[name], device=device))
    return out


def _scalar_values(scalars):
    """The scalars in the C function's order; an integer must fit its C type."""
    values = []
    for name, dtype in _SCALARS:
        v = scalars[name]
        if dtype != "f32":
            bits = 64 if dtype == "i64" else 32
            if isinstance(v, bool) or not isinstance(v, int) or not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
                raise ValueError(f"{OPERATOR}: scalar {name} must be an integer that fits {dtype}, not {v!r}")
        values.append(v)
    return values


# What a call's checks establish, by its signature (each tensor's shape, dtype, device and strides,
# and the keyword sizes): the device, the sizes and the workspace bytes. A later call with the same
# signature would pass the same checks, so it skips them; on small shapes that Python is most of
# the op's host time. Bounded: a program that calls with ever new shapes keeps the first 4096.
_PLANS = {}


def _plan(tensors, keyword_sizes):
    """(device, output shapes, the C function's size arguments, workspace bytes) of a call, checked
    once per signature."""
    key = (tuple((t.shape, t.dtype, t.device, t.stride()) if isinstance(t, torch.Tensor) else type(t)
                 for t in tensors.values()), tuple(keyword_sizes.values()))
    plan = _PLANS.get(key)
    if plan is None:
        device, sizes = _checked_sizes(tensors, keyword_sizes)
        with torch.cuda.device(device):
            # The workspace may grow with the device's SM count (num_sms), which the C reads from
            # the thread's current context: make it this device's.
            _make_context_current(device.index)
            ws = workspace_bytes(sizes)
        out_shapes = {name: _shapes.tensor_shape(name, sizes)
                      for name, role, _ in _shapes.TENSORS if role == "output"}
        plan = (device, out_shapes, [sizes[p] for p in _shapes.PARAMS], ws)
        if len(_PLANS) < 4096:
            _PLANS[key] = plan
    return plan


def _launch(device, out_shapes, size_args, ws, tensors, values):
    """Outputs and the workspace allocated, the C function called on the current stream."""
    buffers = _results(tensors, out_shapes, device)
    workspace = torch.empty(ws, dtype=torch.uint8, device=device) if ws > 0 else None
    stream = torch.cuda.current_stream(device).cuda_stream
    if stream in (0, 1, 2):
        _make_context_current(device.index)
    pointers = [b.data_ptr() for b in buffers]
    ws_pointer = workspace.data_ptr() if workspace is not None else None
    _check_status(_lib.@STEM@(stream, *pointers, *values, *size_args, ws_pointer, ws))
    return buffers


def _run(tensors, scalars, keyword_sizes):
    """The op on CUDA: checks, output allocation, the workspace from torch, and the C function on
    the current stream; returns the tensors the op returns."""
    device, out_shapes, size_args, ws = _plan(tensors, keyword_sizes)
    for name, t in tensors.items():
        # Kernels load with vectors and TMA, which need aligned addresses; a view at an odd offset has none.
        if t.data_ptr() % 16 != 0:
            raise ValueError(f"{OPERATOR}: {name}'s data is not 16-byte aligned (a view at an offset); "
                             f"pass {name}.clone()")
    values = _scalar_values(scalars)
    if device.index == torch.cuda.current_device():
        buffers = _launch(device, out_shapes, size_args, ws, tensors, values)
    else:
        with torch.cuda.device(device):
            buffers = _launch(device, out_shapes, size_args, ws, tensors, values)
    by_name = {name: b for (name, _, _), b in zip(_shapes.TENSORS, buffers)}
    return tuple(by_name[name] for name in _shapes.RESULTS)


def _fake(tensors, keyword_sizes):
    """What the op returns, as empty tensors of the right shapes (the fake implementation)."""
    device, sizes = _checked_sizes(tensors, keyword_sizes)
    return tuple(tensors[name].new_empty(tensors[name].shape) if name in tensors else
                 torch.empty(_shapes.tensor_shape(name, sizes), dtype=_DTYPES[name], device=device)
                 for name in _shapes.RESULTS)
)PY";

struct OpSignature {
  std::string params;     // "x: torch.Tensor, eps: float, CTX: int"
  std::string plain;      // "x, eps, CTX"
  std::string tensors;    // "{\"x\": x}"
  std::string scalars;    // "{\"eps\": eps}"
  std::string keyword;    // "{\"CTX\": CTX}"
  std::string returns;    // "torch.Tensor" or "tuple[torch.Tensor, torch.Tensor]"
  size_t results = 0;
};

// The op's Python signature: the tensors it takes, the scalars, then the sizes no input gives;
// each name made a unique Python argument.
bool Signature(const OperatorSpec& op, OpSignature* out, std::string* err) {
  ShapeTables tables;
  if (!Tables(op, &tables, err)) return false;
  std::set<std::string> used;
  auto add = [&](const std::string& name, const std::string& type, std::string* dict) {
    std::string py;
    if (!PyName(name, &py, err)) return false;
    while (used.count(py)) py += "_";
    used.insert(py);
    out->params += (out->params.empty() ? "" : ", ") + py + ": " + type;
    out->plain += (out->plain.empty() ? "" : ", ") + py;
    *dict += (dict->empty() ? "" : ", ") + PyString(name) + ": " + py;
    return true;
  };
  for (const TensorSpec& t : op.tensors)
    if (IsArgument(t) && !add(t.name, "torch.Tensor", &out->tensors)) return false;
  for (const ScalarSpec& s : op.scalars)
    if (!add(s.name, s.dtype == DType::f32 ? "float" : "int", &out->scalars)) return false;
  for (const std::string& p : tables.keyword)
    if (!add(p, "int", &out->keyword)) return false;
  out->tensors = "{" + out->tensors + "}";
  out->scalars = "{" + out->scalars + "}";
  out->keyword = "{" + out->keyword + "}";
  std::vector<std::string> results;
  for (const TensorSpec& t : op.tensors)
    if (IsResult(t)) results.push_back("torch.Tensor");
  out->results = results.size();
  if (results.size() == 1) {
    out->returns = "torch.Tensor";
  } else {
    out->returns = "tuple[";
    for (size_t i = 0; i < results.size(); ++i) out->returns += (i ? ", " : "") + results[i];
    out->returns += "]";
  }
  return true;
}

// "def name(params) -> returns:", the parameters one per line where they do not fit one line.
std::string Def(const std::string& name, const std::string& params, const std::string& returns) {
  const std::string line = "def " + name + "(" + params + ") -> " + returns + ":\n";
  if (line.size() <= 100) return line;
  std::string out = "def " + name + "(\n";
  size_t start = 0;
  while (start < params.size()) {
    size_t end = params.find(", ", start);
    if (end == std::string::npos) end = params.size();
    out += "    " + params.substr(start, end - start) + ",\n";
    start = end + 2;
  }
  return out + ") -> " + returns + ":\n";
}

// "    return f(args)[0]", the arguments one per line where they do not fit one line.
std::string Return(const std::string& f, const std::vector<std::string>& args, const std::string& unpack) {
  std::string joined;
  for (const std::string& a : args) joined += (joined.empty() ? "" : ", ") + a;
  const std::string line = "    return " + f + "(" + joined + ")" + unpack + "\n";
  if (line.size() <= 100) return line;
  std::string out = "    return " + f + "(\n";
  for (const std::string& a : args) out += "        " + a + ",\n";
  return out + "    )" + unpack + "\n";
}

std::string ShapeOf(const TensorSpec& t) {
  std::string dims;
  for (const std::string& d : t.shape) dims += (dims.empty() ? "" : ", ") + d;
  return "[" + dims + "]";
}

// The module docstring: what the op is, its arguments and results, and what importing does.
std::string InitDocstring(const OperatorSpec& op, const SealRecord& seal, const ShapeTables& tables) {
  const std::string stem = CExportName(op.name);
  std::string d = "\"\"\"" + DocText("Seal " + seal.id.substr(0, 12) + " of " + op.name + " (" + seal.arch +
                                     ") as a PyTorch custom op: torch.ops.forgek." + op.name + ".") + "\n\n";
  d += Wrap(DocText(op.description), "");
  d += "\n    import " + stem + "\n    out = torch.ops.forgek." + op.name + "(...)  # also under torch.compile\n    out = " +
       stem + "." + op.name + "(...)  # the same op\n\n";
  d += "Takes (CUDA tensors, row-major and contiguous, 16-byte aligned):\n";
  for (const TensorSpec& t : op.tensors)
    if (IsArgument(t))
      d += DocText("    " + t.name + ": " + TorchDType(t.dtype) + " " + ShapeOf(t) +
                   (t.role == TensorRole::inout ? " (inout: the op returns an updated copy, the input is unchanged)" : "")) +
           "\n";
  for (const ScalarSpec& s : op.scalars)
    d += DocText("    " + s.name + ": " + (s.dtype == DType::f32 ? "float" : "int") + " (" + DTypeName(s.dtype) + ")") + "\n";
  for (const std::string& p : tables.keyword) d += DocText("    " + p + ": int, a size no input's shape gives") + "\n";
  d += "Returns:\n";
  for (const TensorSpec& t : op.tensors)
    if (IsResult(t)) d += DocText("    " + t.name + ": " + TorchDType(t.dtype) + " " + ShapeOf(t)) + "\n";
  std::string inferred;
  for (const auto& [p, at] : tables.inferred)
    inferred += (inferred.empty() ? "" : ", ") + p + " from " + op.tensors[at.first].name + ".shape[" + std::to_string(at.second) + "]";
  if (!inferred.empty()) d += Wrap(DocText("Sizes read from the inputs: " + inferred + "."), "");
  d += "\n";
  d += Wrap("Importing builds " + stem + ".c (the C export beside this file) with the system C compiler (CC, else "
            "cc) against the CUDA toolkit (CUDA_HOME, CUDA_PATH or /usr/local/cuda) into a cache folder "
            "(FORGEK_TORCH_CACHE, else ~/.cache/forgek/torch), once per source; the kernels then load through "
            "the CUDA driver on the sealed arch only. Kernel errors raise ForgekError with the C function's "
            "message. One export of an operator can be imported per process: the op's name is global.",
            "");
  d += "\nGenerated by `forgek seal export " + DocText(seal.id.substr(0, 12)) + " DIR --lang torch`; do not edit.\n\"\"\"\n";
  return d;
}

}  // namespace

bool TorchPackageInit(const OperatorSpec& op, const SealRecord& seal, std::string* out, std::string* err) {
  ShapeTables tables;
  OpSignature sig;
  if (!Tables(op, &tables, err) || !Signature(op, &sig, err)) return false;
  if (!IsIdentifier(op.name)) return *err = "the operator name '" + op.name + "' is no Python identifier", false;
  const std::string stem = CExportName(op.name);
  std::string py = InitDocstring(op, seal, tables) + "\n";
  py += kInitImports;
  py += "\nOPERATOR = " + PyString(op.name) + "\nSEAL_ID = " + PyString(seal.id) + "\nARCH = " + PyString(seal.arch) +
        "\n";
  py += "# Each tensor's torch dtype.\n_DTYPES = {\n";
  for (const TensorSpec& t : op.tensors) py += "    " + PyString(t.name) + ": " + TorchDType(t.dtype) + ",\n";
  py += "}\n";
  std::vector<std::string> scalars, ctypes;
  for (const ScalarSpec& s : op.scalars) {
    scalars.push_back("(" + PyString(s.name) + ", " + PyString(DTypeName(s.dtype)) + ")");
    ctypes.push_back(s.dtype == DType::f32 ? "ctypes.c_float" : s.dtype == DType::i64 ? "ctypes.c_int64" : "ctypes.c_int32");
  }
  py += "# The scalars in the C function's order, (name, dtype), and their C types.\n";
  py += "_SCALARS = " + Tuple(scalars) + "\n";
  std::string list;
  for (const std::string& c : ctypes) list += (list.empty() ? "" : ", ") + c;
  py += "_SCALAR_CTYPES = [" + list + "]\n";
  py += Replace(kInitCommon, "@STEM@", stem);
  // The op is functional (mutates_args=()): outputs are allocated and returned, and an inout tensor
  // is cloned and the clone written, so torch.compile needs no aliasing rules for it.
  const std::string unpack = sig.results == 1 ? "[0]" : "";
  py += "\n\n@torch.library.custom_op(" + PyString("forgek::" + op.name) + ", mutates_args=())\n";
  py += Def(op.name, sig.params, sig.returns);
  py += "    \"\"\"" + DocText("torch.ops.forgek." + op.name + ": seal " + seal.id.substr(0, 12) + " (see the module's docstring).") + "\"\"\"\n";
  py += Return("_run", {sig.tensors, sig.scalars, sig.keyword}, unpack);
  py += "\n\n@" + op.name + ".register_fake\n";
  py += Def("_" + op.name + "_fake", sig.params, sig.returns);
  py += Return("_fake", {sig.tensors, sig.keyword}, unpack);
  py += "\n\n__all__ = [" + PyString(op.name) + ", \"ForgekError\", \"workspace_bytes\", \"OPERATOR\", \"SEAL_ID\", \"ARCH\"]\n";
  *out = py;
  return true;
}

bool ExportSealTorch(Store& store, const SealRecord& seal, const OperatorSpec& op, Compiler& compiler,
                     const std::string& dir, bool allow_rebuilt, std::string* err) {
  std::string shapes, init;
  if (!TorchShapesModule(op, &shapes, err) || !TorchPackageInit(op, seal, &init, err)) {
    *err = "cannot export " + op.name + " for torch: " + *err;
    return false;
  }
  return WriteFolderAtomically(dir, [&](const fs::path& tmp, std::string* fill_err) {
    const fs::path package = tmp / CExportName(op.name);
    return ExportSealC(store, seal, op, compiler, package.string(), allow_rebuilt, fill_err) &&
           WriteFileAtomic((package / "_shapes.py").string(), shapes, fill_err) &&
           WriteFileAtomic((package / "__init__.py").string(), init, fill_err);
  }, err);
}

}  // namespace forgek
