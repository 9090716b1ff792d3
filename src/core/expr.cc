// The expression language: a recursive-descent parser and an overflow-checked int64 evaluator.
#include "forgek/core/expr.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "forgek/core/suggest.h"
#include "forgek/core/spec_limits.h"

namespace forgek {

namespace {

// Nesting deeper than this (parentheses, calls, unary operators) is rejected, which also bounds
// the recursion of the parser, the evaluator and the destructor.
constexpr int kMaxDepth = 64;

enum class Op { add, sub, mul, div, mod, lt, le, gt, ge, eq, ne, land, lor, neg, lnot };

const char* OpText(Op op) {
  switch (op) {
    case Op::add: return "+";
    case Op::sub: return "-";
    case Op::mul: return "*";
    case Op::div: return "/";
    case Op::mod: return "%";
    case Op::lt: return "<";
    case Op::le: return "<=";
    case Op::gt: return ">";
    case Op::ge: return ">=";
    case Op::eq: return "==";
    case Op::ne: return "!=";
    case Op::land: return "&&";
    case Op::lor: return "||";
    case Op::neg: return "-";
    case Op::lnot: return "!";
  }
  return "?";
}

struct Function {
  const char* name;
  size_t min_args;
  size_t max_args;
};
constexpr Function kFunctions[] = {
    {"ceil_div", 2, 2}, {"min", 2, SIZE_MAX}, {"max", 2, SIZE_MAX}, {"pow2", 1, 1}, {"log2", 1, 1},
};

const Function* FindFunction(const std::string& name) {
  for (const Function& f : kFunctions)
    if (name == f.name) return &f;
  return nullptr;
}

std::vector<std::string> FunctionNames() {
  std::vector<std::string> out;
  for (const Function& f : kFunctions) out.push_back(f.name);
  return out;
}

}  // namespace

// A node of the syntax tree. Chains of one precedence level (a + b - c) are kept flat, as a first
// operand and (operator, operand) pairs, so that long sums do not make the tree deep.
struct Expr::Node {
  enum class Kind { integer, name, unary, chain, call } kind = Kind::integer;
  int column = 0;  // 1-based position in the text, for evaluation errors
  int64_t value = 0;
  std::string name;                 // name, call
  const Function* function = nullptr;
  Op unary_op = Op::neg;
  std::vector<std::unique_ptr<Node>> children;  // unary: 1; chain: first + one per op; call: args
  std::vector<Op> ops;                          // chain: operators between children
  std::vector<int> op_columns;                  // chain: their columns
};

namespace {

using Node = Expr::Node;

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Parser {
 public:
  Parser(const std::string& text, Diagnostic* diag) : text_(text), diag_(diag) {}

  std::unique_ptr<Node> ParseAll() {
    if (text_.size() > kMaxExpressionChars)
      return Fail(0, "an expression of " + std::to_string(text_.size()) + " characters; at most " +
                         std::to_string(kMaxExpressionChars) + " are allowed");
    SkipSpace();
    if (pos_ == text_.size()) return Fail(pos_, "empty expression");
    std::unique_ptr<Node> root = ParseOr();
    if (!root) return nullptr;
    SkipSpace();
    if (pos_ < text_.size()) {
      if (Peek("<") || Peek(">") || Peek("==") || Peek("!="))
        return Fail(pos_, "comparisons do not chain; add parentheses");
      if (text_[pos_] == ')') return Fail(pos_, "unmatched ')'");
      return Fail(pos_, "unexpected '" + std::string(1, text_[pos_]) + "' after a complete expression");
    }
    return root;
  }

 private:
  std::unique_ptr<Node> Fail(size_t at, const std::string& message) {
    if (!failed_ && diag_) {
      diag_->line = 1;
      diag_->column = static_cast<int>(at) + 1;
      diag_->message = message;
    }
    failed_ = true;
    return nullptr;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Peek(const char* token) const { return text_.compare(pos_, std::char_traits<char>::length(token), token) == 0; }

  // Consumes one of `ops` (tables list longer tokens first, so '<=' wins over '<').
  bool Accept(std::initializer_list<std::pair<const char*, Op>> ops, Op* op, int* column) {
    SkipSpace();
    for (const auto& [token, o] : ops) {
      size_t n = std::char_traits<char>::length(token);
      if (text_.compare(pos_, n, token) != 0) continue;
      *op = o;
      *column = static_cast<int>(pos_) + 1;
      pos_ += n;
      return true;
    }
    return false;
  }

  // Parses `next` (a tighter level) joined by the operators of one level, left to right.
  template <typename Next>
  std::unique_ptr<Node> ParseChain(std::initializer_list<std::pair<const char*, Op>> ops, Next next,
                                   bool single_op) {
    std::unique_ptr<Node> first = (this->*next)();
    if (!first) return nullptr;
    std::unique_ptr<Node> chain;
    Op op;
    int column;
    while (Accept(ops, &op, &column)) {
      if (!chain) {
        chain = std::make_unique<Node>();
        chain->kind = Node::Kind::chain;
        chain->column = first->column;
        chain->children.push_back(std::move(first));
      }
      std::unique_ptr<Node> rhs = (this->*next)();
      if (!rhs) return nullptr;
      chain->ops.push_back(op);
      chain->op_columns.push_back(column);
      chain->children.push_back(std::move(rhs));
      if (single_op) break;
    }
    return chain ? std::move(chain) : std::move(first);
  }

  std::unique_ptr<Node> ParseOr() { return ParseChain({{"||", Op::lor}}, &Parser::ParseAnd, false); }
  std::unique_ptr<Node> ParseAnd() { return ParseChain({{"&&", Op::land}}, &Parser::ParseCmp, false); }
  std::unique_ptr<Node> ParseCmp() {
    return ParseChain({{"<=", Op::le}, {">=", Op::ge}, {"==", Op::eq}, {"!=", Op::ne}, {"<", Op::lt}, {">", Op::gt}},
                      &Parser::ParseSum, true);
  }
  std::unique_ptr<Node> ParseSum() {
    return ParseChain({{"+", Op::add}, {"-", Op::sub}}, &Parser::ParseProd, false);
  }
  std::unique_ptr<Node> ParseProd() {
    return ParseChain({{"*", Op::mul}, {"/", Op::div}, {"%", Op::mod}}, &Parser::ParseUnary, false);
  }

  // Entering a nested construct; false (with the error) when too deep.
  bool Enter(size_t at) {
    if (++depth_ > kMaxDepth) {
      Fail(at, "expression nested deeper than " + std::to_string(kMaxDepth) + " levels");
      return false;
    }
    return true;
  }

  std::unique_ptr<Node> ParseUnary() {
    SkipSpace();
    if (pos_ < text_.size() && (text_[pos_] == '-' || (text_[pos_] == '!' && !Peek("!=")))) {
      size_t at = pos_;
      Op op = text_[pos_] == '-' ? Op::neg : Op::lnot;
      ++pos_;
      if (!Enter(at)) return nullptr;
      std::unique_ptr<Node> operand = ParseUnary();
      --depth_;
      if (!operand) return nullptr;
      auto node = std::make_unique<Node>();
      node->kind = Node::Kind::unary;
      node->column = static_cast<int>(at) + 1;
      node->unary_op = op;
      node->children.push_back(std::move(operand));
      return node;
    }
    return ParsePrimary();
  }

  std::unique_ptr<Node> ParsePrimary() {
    SkipSpace();
    if (pos_ == text_.size()) return Fail(pos_, "unexpected end of expression");
    char c = text_[pos_];
    size_t at = pos_;
    if (std::isdigit(static_cast<unsigned char>(c))) return ParseInteger();
    if (IsNameStart(c)) return ParseNameOrCall();
    if (c == '(') {
      ++pos_;
      if (!Enter(at)) return nullptr;
      std::unique_ptr<Node> inner = ParseOr();
      --depth_;
      if (!inner) return nullptr;
      SkipSpace();
      if (pos_ == text_.size() || text_[pos_] != ')') return Fail(at, "unclosed '('");
      ++pos_;
      return inner;
    }
    if (c == ')') return Fail(pos_, "expected a value before ')'");
    return Fail(pos_, "unexpected '" + std::string(1, c) + "'");
  }

  std::unique_ptr<Node> ParseInteger() {
    size_t at = pos_;
    int64_t value = 0;
    bool overflow = false;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int digit = text_[pos_] - '0';
      if (__builtin_mul_overflow(value, int64_t{10}, &value) || __builtin_add_overflow(value, digit, &value))
        overflow = true;
      ++pos_;
    }
    if (pos_ < text_.size() && (IsNameChar(text_[pos_]) || text_[pos_] == '.')) {
      size_t end = pos_;
      while (end < text_.size() && (IsNameChar(text_[end]) || text_[end] == '.')) ++end;
      return Fail(at, "invalid integer '" + text_.substr(at, end - at) + "' (only decimal integers)");
    }
    if (overflow)
      return Fail(at, "integer literal " + text_.substr(at, pos_ - at) + " does not fit in 64 bits");
    auto node = std::make_unique<Node>();
    node->kind = Node::Kind::integer;
    node->column = static_cast<int>(at) + 1;
    node->value = value;
    return node;
  }

  std::unique_ptr<Node> ParseNameOrCall() {
    size_t at = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    auto node = std::make_unique<Node>();
    node->column = static_cast<int>(at) + 1;
    node->name = text_.substr(at, pos_ - at);
    size_t after = pos_;
    SkipSpace();
    if (pos_ == text_.size() || text_[pos_] != '(') {
      pos_ = after;
      node->kind = Node::Kind::name;
      return node;
    }
    node->kind = Node::Kind::call;
    node->function = FindFunction(node->name);
    if (!node->function)
      return Fail(at, "unknown function '" + node->name + "'" + DidYouMean(node->name, FunctionNames()) +
                          "; functions are ceil_div, min, max, pow2, log2");
    size_t open = pos_++;
    if (!Enter(open)) return nullptr;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ')') {
      ++pos_;
    } else {
      while (true) {
        std::unique_ptr<Node> arg = ParseOr();
        if (!arg) return nullptr;
        node->children.push_back(std::move(arg));
        SkipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == ')') {
          ++pos_;
          break;
        }
        return Fail(pos_ < text_.size() ? pos_ : open, pos_ < text_.size()
                                                            ? "expected ',' or ')' in the arguments of " + node->name
                                                            : "unclosed '(' of " + node->name);
      }
    }
    --depth_;
    const Function& f = *node->function;
    size_t n = node->children.size();
    if (n < f.min_args || n > f.max_args) {
      std::string want = f.min_args == f.max_args ? std::to_string(f.min_args)
                                                  : "at least " + std::to_string(f.min_args);
      return Fail(at, node->name + " takes " + want + " argument" + (f.min_args == 1 && f.max_args == 1 ? "" : "s") +
                          ", got " + std::to_string(n));
    }
    return node;
  }

  const std::string& text_;
  Diagnostic* diag_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool failed_ = false;
};

class Evaluator {
 public:
  Evaluator(const Bindings& vars, Diagnostic* diag) : vars_(vars), diag_(diag) {}

  bool Eval(const Node& n, int64_t* out) {
    switch (n.kind) {
      case Node::Kind::integer:
        *out = n.value;
        return true;
      case Node::Kind::name: {
        auto it = vars_.find(n.name);
        if (it == vars_.end()) {
          std::vector<std::string> known;
          for (const auto& [k, v] : vars_) known.push_back(k);
          return Fail(n.column, "unknown name '" + n.name + "'" + DidYouMean(n.name, known));
        }
        *out = it->second;
        return true;
      }
      case Node::Kind::unary: {
        int64_t v;
        if (!Eval(*n.children[0], &v)) return false;
        if (n.unary_op == Op::lnot) {
          *out = v == 0;
          return true;
        }
        if (__builtin_sub_overflow(int64_t{0}, v, out)) return Fail(n.column, "overflow in '-'");
        return true;
      }
      case Node::Kind::chain:
        return EvalChain(n, out);
      case Node::Kind::call:
        return EvalCall(n, out);
    }
    return false;
  }

 private:
  bool Fail(int column, const std::string& message) {
    if (diag_) {
      diag_->line = 1;
      diag_->column = column;
      diag_->message = message;
    }
    return false;
  }

  bool EvalChain(const Node& n, int64_t* out) {
    int64_t acc;
    if (!Eval(*n.children[0], &acc)) return false;
    for (size_t i = 0; i < n.ops.size(); ++i) {
      Op op = n.ops[i];
      // && and || short-circuit, so that "N > 0 && M / N > 2" is safe.
      if (op == Op::land && acc == 0) return *out = 0, true;
      if (op == Op::lor && acc != 0) return *out = 1, true;
      int64_t rhs;
      if (!Eval(*n.children[i + 1], &rhs)) return false;
      if (!Apply(op, acc, rhs, n.op_columns[i], &acc)) return false;
    }
    *out = acc;
    return true;
  }

  bool Apply(Op op, int64_t a, int64_t b, int column, int64_t* out) {
    std::string overflow = std::string("overflow in '") + OpText(op) + "'";
    switch (op) {
      case Op::add:
        return !__builtin_add_overflow(a, b, out) || Fail(column, overflow);
      case Op::sub:
        return !__builtin_sub_overflow(a, b, out) || Fail(column, overflow);
      case Op::mul:
        return !__builtin_mul_overflow(a, b, out) || Fail(column, overflow);
      case Op::div:
        if (b == 0) return Fail(column, "division by zero");
        if (a == std::numeric_limits<int64_t>::min() && b == -1) return Fail(column, overflow);
        *out = a / b;
        return true;
      case Op::mod:
        if (b == 0) return Fail(column, "modulo by zero");
        *out = b == -1 ? 0 : a % b;  // INT64_MIN % -1 traps on x86; the answer is 0
        return true;
      case Op::lt: *out = a < b; return true;
      case Op::le: *out = a <= b; return true;
      case Op::gt: *out = a > b; return true;
      case Op::ge: *out = a >= b; return true;
      case Op::eq: *out = a == b; return true;
      case Op::ne: *out = a != b; return true;
      case Op::land: *out = a != 0 && b != 0; return true;
      case Op::lor: *out = a != 0 || b != 0; return true;
      case Op::neg:
      case Op::lnot: break;
    }
    return Fail(column, "internal error: bad operator");
  }

  bool EvalCall(const Node& n, int64_t* out) {
    std::vector<int64_t> args(n.children.size());
    for (size_t i = 0; i < args.size(); ++i)
      if (!Eval(*n.children[i], &args[i])) return false;
    const std::string name = n.function->name;
    if (name == "min") {
      *out = *std::min_element(args.begin(), args.end());
    } else if (name == "max") {
      *out = *std::max_element(args.begin(), args.end());
    } else if (name == "ceil_div") {
      int64_t a = args[0], b = args[1];
      if (b == 0) return Fail(n.column, "ceil_div by zero");
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return Fail(n.column, "overflow in ceil_div");
      int64_t q = a / b;
      if (a % b != 0 && ((a < 0) == (b < 0))) ++q;  // round toward +infinity
      *out = q;
    } else if (name == "pow2") {
      if (args[0] < 0 || args[0] > 62)
        return Fail(n.column, "pow2 needs an exponent in [0, 62], got " + std::to_string(args[0]));
      *out = int64_t{1} << args[0];
    } else if (name == "log2") {
      if (args[0] < 1) return Fail(n.column, "log2 needs a positive argument, got " + std::to_string(args[0]));
      *out = 63 - __builtin_clzll(static_cast<uint64_t>(args[0]));
    } else {
      return Fail(n.column, "internal error: function " + name);
    }
    return true;
  }

  const Bindings& vars_;
  Diagnostic* diag_;
};

Expr::TreeNode CopyTree(const Node& n) {
  Expr::TreeNode t;
  t.value = n.value;
  t.name = n.name;
  switch (n.kind) {
    case Node::Kind::integer: t.kind = Expr::TreeNode::Kind::integer; break;
    case Node::Kind::name: t.kind = Expr::TreeNode::Kind::name; break;
    case Node::Kind::unary:
      t.kind = Expr::TreeNode::Kind::unary;
      t.ops.push_back(OpText(n.unary_op));
      break;
    case Node::Kind::chain:
      t.kind = Expr::TreeNode::Kind::chain;
      for (Op op : n.ops) t.ops.push_back(OpText(op));
      break;
    case Node::Kind::call:
      t.kind = Expr::TreeNode::Kind::call;
      t.name = n.function->name;
      break;
  }
  for (const auto& c : n.children) t.children.push_back(CopyTree(*c));
  return t;
}

void CollectNames(const Node& n, std::set<std::string>* names) {
  if (n.kind == Node::Kind::name) names->insert(n.name);
  for (const auto& c : n.children) CollectNames(*c, names);
}

}  // namespace

Expr::Expr() = default;
Expr::~Expr() = default;

std::unique_ptr<Expr> Expr::Parse(const std::string& text, Diagnostic* diag) {
  Parser parser(text, diag);
  std::unique_ptr<Node> root = parser.ParseAll();
  if (!root) return nullptr;
  std::unique_ptr<Expr> e(new Expr());
  e->text_ = text;
  e->root_ = std::move(root);
  return e;
}

bool Expr::Eval(const Bindings& vars, int64_t* out, Diagnostic* diag) const {
  Evaluator evaluator(vars, diag);
  return evaluator.Eval(*root_, out);
}

Expr::TreeNode Expr::Tree() const { return CopyTree(*root_); }

std::vector<std::string> Expr::Names() const {
  std::set<std::string> names;
  CollectNames(*root_, &names);
  return {names.begin(), names.end()};
}

bool EvalExpression(const std::string& text, const Bindings& vars, int64_t* out, Diagnostic* diag) {
  std::unique_ptr<Expr> e = Expr::Parse(text, diag);
  return e && e->Eval(vars, out, diag);
}

}  // namespace forgek
