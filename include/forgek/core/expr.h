// The expression language of shapes, launch dimensions, workspace sizes, constraints and formulas.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "forgek/core/diagnostic.h"

namespace forgek {

// Values are 64-bit signed integers. Grammar (lowest precedence first):
//   or:   and ('||' and)*          and: cmp ('&&' cmp)*
//   cmp:  sum (('<'|'<='|'>'|'>='|'=='|'!=') sum)?
//   sum:  prod (('+'|'-') prod)*    prod: unary (('*'|'/'|'%') unary)*
//   unary: ('-'|'!') unary | primary
//   primary: INTEGER | NAME | NAME '(' args ')' | '(' or ')'
// Functions: ceil_div(a,b), min(a,b,...), max(a,b,...), pow2(a) (2^a), log2(a) (floor).
// Division and modulo by zero, overflow and unknown names are errors, never UB; nesting deeper
// than 64 is rejected.
using Bindings = std::map<std::string, int64_t>;

class Expr {
 public:
  // Parses `text`; on error fills `diag` (line 1, column of the problem; the caller sets file
  // and field) and returns nullptr.
  static std::unique_ptr<Expr> Parse(const std::string& text, Diagnostic* diag);

  // Evaluates with `vars`; on error (unknown name, division by zero, overflow) fills `diag`.
  bool Eval(const Bindings& vars, int64_t* out, Diagnostic* diag) const;

  // The names this expression reads (not function names), sorted and unique.
  std::vector<std::string> Names() const;

  const std::string& text() const { return text_; }

  // A copy of the syntax tree for code generators (forgek/core/expr_c.h), which must follow Eval's
  // order and checks exactly; the parser's own node type stays private. A chain holds one
  // precedence level flat: ops[i] joins children[i] and children[i + 1], left to right.
  struct TreeNode {
    enum class Kind { integer, name, unary, chain, call };
    Kind kind = Kind::integer;
    int64_t value = 0;             // integer (a literal is never negative: "-5" is a unary '-')
    std::string name;              // name; call: the function (ceil_div, min, max, pow2, log2)
    std::vector<std::string> ops;  // unary: its operator ("-" or "!"); chain: "+", "<=", "&&", ...
    std::vector<TreeNode> children;
  };
  TreeNode Tree() const;

  struct Node;
  ~Expr();
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

 private:
  Expr();
  std::string text_;
  std::unique_ptr<Node> root_;
};

// Parse and evaluate in one step, for one-off uses; errors name `field`.
bool EvalExpression(const std::string& text, const Bindings& vars, int64_t* out, Diagnostic* diag);

}  // namespace forgek
