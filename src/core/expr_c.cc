// C code generated from the expression tree: statements with Eval's order, checks and rounding.
#include "forgek/core/expr_c.h"

#include <cstdio>

namespace forgek {
namespace {

using TreeNode = Expr::TreeNode;

// Writes one expression's statements. Every node gets its own int64_t temporary: the code is long
// but each line does one checked step, in the evaluator's order, and a divisor is never a literal
// that a compiler could warn about in a branch the checks make dead.
class Emitter {
 public:
  Emitter(const ExprCContext& ctx, std::string* code, std::string* err) : ctx_(ctx), code_(code), err_(err) {}

  // The node's statements at the current indentation; its temporary's name in *var.
  bool Emit(const TreeNode& n, std::string* var) {
    switch (n.kind) {
      case TreeNode::Kind::integer:
        *var = Declare("INT64_C(" + std::to_string(n.value) + ")");
        return true;
      case TreeNode::Kind::name: {
        std::string c;
        if (!ctx_.name(n.name, &c)) {
          *err_ = "unknown name '" + n.name + "'";
          return false;
        }
        *var = Declare(c);
        return true;
      }
      case TreeNode::Kind::unary:
        return EmitUnary(n, var);
      case TreeNode::Kind::chain:
        return n.ops.front() == "&&" || n.ops.front() == "||" ? EmitLogical(n, var) : EmitArithmetic(n, var);
      case TreeNode::Kind::call:
        return EmitCall(n, var);
    }
    *err_ = "internal error: an expression node of no known kind";
    return false;
  }

 private:
  std::string Fresh(const char* what) { return std::string("fk_") + what + std::to_string((*ctx_.counter)++); }

  void Line(const std::string& text) { *code_ += indent_ + text + "\n"; }

  std::string Declare(const std::string& init) {
    std::string v = Fresh("e");
    Line("int64_t " + v + " = " + init + ";");
    return v;
  }

  // One line: `if (condition) { <the error statement> }`.
  void FailIf(const std::string& condition, const std::string& message) {
    Line("if (" + condition + ") { " + ctx_.on_error(message) + " }");
  }

  bool EmitUnary(const TreeNode& n, std::string* var) {
    std::string a;
    if (!Emit(n.children.at(0), &a)) return false;
    if (n.ops.at(0) == "!") {
      *var = Declare(a + " == 0");
      return true;
    }
    FailIf(a + " == INT64_MIN", "overflow in '-'");
    *var = Declare("-" + a);
    return true;
  }

  // && and ||: Eval stops at the first operand that decides the chain, so the rest are evaluated
  // (and can fail) only when reached. Each later operand sits in its own block, which the goto
  // jumps over whole.
  bool EmitLogical(const TreeNode& n, std::string* var) {
    std::string acc;
    if (!Emit(n.children.at(0), &acc)) return false;
    const std::string end = Fresh("end");
    const bool is_and = n.ops.front() == "&&";
    for (size_t i = 1; i < n.children.size(); ++i) {
      if (is_and)
        Line("if (" + acc + " == 0) goto " + end + ";");
      else
        Line("if (" + acc + " != 0) { " + acc + " = 1; goto " + end + "; }");
      Line("{");
      const std::string outer = indent_;
      indent_ += ctx_.indent;
      std::string rhs;
      if (!Emit(n.children[i], &rhs)) return false;
      Line(acc + " = " + rhs + " != 0;");
      indent_ = outer;
      Line("}");
    }
    Line(end + ":;");
    *var = acc;
    return true;
  }

  // + - * / % and the comparisons, left to right, each step checked as Eval checks it.
  bool EmitArithmetic(const TreeNode& n, std::string* var) {
    std::string first;
    if (!Emit(n.children.at(0), &first)) return false;
    const std::string acc = Declare(first);
    for (size_t i = 0; i < n.ops.size(); ++i) {
      std::string b;
      if (!Emit(n.children.at(i + 1), &b)) return false;
      const std::string& op = n.ops[i];
      const std::string& a = acc;
      const std::string overflow = "overflow in '" + op + "'";
      if (op == "+") {
        FailIf("(" + b + " > 0 && " + a + " > INT64_MAX - " + b + ") || (" + b + " < 0 && " + a + " < INT64_MIN - " +
                   b + ")",
               overflow);
        Line(a + " = " + a + " + " + b + ";");
      } else if (op == "-") {
        FailIf("(" + b + " < 0 && " + a + " > INT64_MAX + " + b + ") || (" + b + " > 0 && " + a + " < INT64_MIN + " +
                   b + ")",
               overflow);
        Line(a + " = " + a + " - " + b + ";");
      } else if (op == "*") {
        // The four sign cases of CERT INT32-C, each an exact test with one truncating division.
        FailIf(a + " > 0 ? (" + b + " > 0 ? " + a + " > INT64_MAX / " + b + " : " + b + " < INT64_MIN / " + a +
                   ") : (" + b + " > 0 ? " + a + " < INT64_MIN / " + b + " : (" + a + " != 0 && " + b +
                   " < INT64_MAX / " + a + "))",
               overflow);
        Line(a + " = " + a + " * " + b + ";");
      } else if (op == "/") {
        FailIf(b + " == 0", "division by zero");
        FailIf(a + " == INT64_MIN && " + b + " == -1", overflow);
        Line(a + " = " + a + " / " + b + ";");
      } else if (op == "%") {
        FailIf(b + " == 0", "modulo by zero");
        // INT64_MIN % -1 traps on x86; Eval answers 0 for any dividend over -1.
        Line(a + " = " + b + " == -1 ? 0 : " + a + " % " + b + ";");
      } else if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=") {
        Line(a + " = " + a + " " + op + " " + b + ";");
      } else {
        *err_ = "internal error: operator '" + op + "'";
        return false;
      }
    }
    *var = acc;
    return true;
  }

  // Every argument first, left to right (Eval evaluates them all before the function).
  bool EmitCall(const TreeNode& n, std::string* var) {
    std::vector<std::string> args;
    for (const TreeNode& c : n.children) {
      std::string a;
      if (!Emit(c, &a)) return false;
      args.push_back(a);
    }
    const std::string& f = n.name;
    if ((f == "min" || f == "max") && args.size() >= 2) {
      *var = Declare(args[0]);
      for (size_t i = 1; i < args.size(); ++i)
        Line("if (" + args[i] + (f == "min" ? " < " : " > ") + *var + ") " + *var + " = " + args[i] + ";");
      return true;
    }
    if (f == "ceil_div" && args.size() == 2) {
      const std::string &a = args[0], &b = args[1];
      FailIf(b + " == 0", "ceil_div by zero");
      FailIf(a + " == INT64_MIN && " + b + " == -1", "overflow in ceil_div");
      *var = Declare(a + " / " + b);
      // Round toward +infinity: up when there is a remainder and the exact quotient is positive.
      Line("if (" + a + " % " + b + " != 0 && ((" + a + " < 0) == (" + b + " < 0))) ++" + *var + ";");
      return true;
    }
    if (f == "pow2" && args.size() == 1) {
      FailIf(args[0] + " < 0 || " + args[0] + " > 62", "pow2 needs an exponent in [0, 62]");
      *var = Declare("INT64_C(1) << " + args[0]);
      return true;
    }
    if (f == "log2" && args.size() == 1) {
      FailIf(args[0] + " < 1", "log2 needs a positive argument");
      *var = Declare("0");
      const std::string bits = Fresh("u");
      Line("{");
      Line(ctx_.indent + "uint64_t " + bits + " = (uint64_t)" + args[0] + ";");
      Line(ctx_.indent + "while (" + bits + " > 1) { " + bits + " >>= 1; ++" + *var + "; }");
      Line("}");
      return true;
    }
    *err_ = "internal error: function " + f + " with " + std::to_string(args.size()) + " arguments";
    return false;
  }

  const ExprCContext& ctx_;
  std::string* code_;
  std::string* err_;
  std::string indent_ = ctx_.indent;
};

}  // namespace

bool EmitExprC(const Expr& e, const ExprCContext& ctx, std::string* code, std::string* var, std::string* err) {
  std::string body, why;
  Emitter emitter(ctx, &body, &why);
  if (!emitter.Emit(e.Tree(), var)) {
    *err = "'" + e.text() + "': " + why;
    return false;
  }
  *code += body;
  return true;
}

std::string CStringLiteral(const std::string& text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '?' && i + 1 < text.size() && text[i + 1] == '?') {
      out += "?\\";  // "??" followed by = ( / ) ' < ! > - would be a trigraph in C11
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace forgek
