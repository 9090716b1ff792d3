// C source generated from an expression's tree, with Expr::Eval's semantics, for seals exported as C.
#pragma once

#include <functional>
#include <string>

#include "forgek/core/expr.h"

namespace forgek {

// How EmitExprC writes its statements. The generated code is C11 that also compiles as C++: it
// needs <stdint.h> (int64_t, INT64_C, INT64_MIN, INT64_MAX) and nothing else, no compiler builtin.
struct ExprCContext {
  // The C expression (of type int64_t, no side effects) that reads `name`; false when the name is
  // not bound where the expression is used.
  std::function<bool(const std::string& name, std::string* c_expr)> name;
  // The C statement that ends evaluation with an error (e.g. `return fail(plan, "...");`), given
  // Eval's message for it ("division by zero", "overflow in '*'", ...).
  std::function<std::string(const std::string& message)> on_error;
  // Numbers the temporaries and labels: one counter per C function, so that its names are unique.
  int* counter = nullptr;
  std::string indent = "  ";
};

// Appends to *code the statements that evaluate `e` into a new int64_t variable, named in *var.
// They evaluate in Eval's order (operands left to right, && and || short-circuiting, every argument
// of a call) and fail, through ctx.on_error, exactly where Eval fails: overflow of any operation
// (INT64_MIN / -1 included), division, remainder or ceil_div by zero, pow2 outside [0, 62], log2
// below 1. Eval's messages name a bad value ("pow2 needs an exponent in [0, 62], got 70"); the
// generated ones stop before it. `/` truncates toward zero and `%` takes the sign of the dividend, as
// C99 and C++11 define them; INT64_MIN % -1 is 0, never evaluated. Short-circuits jump forward with
// goto over nothing but whole blocks, which C++ also allows. False with *err when a name is unbound.
bool EmitExprC(const Expr& e, const ExprCContext& ctx, std::string* code, std::string* var, std::string* err);

// `text` as a C string literal: quotes, backslashes and control bytes escaped, bytes outside
// printable ASCII as octal escapes (never hex ones, which would swallow a following digit), and
// "??" broken so that no trigraph forms.
std::string CStringLiteral(const std::string& text);

}  // namespace forgek
