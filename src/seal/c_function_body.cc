// The statements of one generated C function that evaluate manifest and operator expressions.
#include "c_function_body.h"

#include <memory>

#include "c_text.h"

namespace forgek {

bool FunctionBody::EvalWithPrefix(const std::string& field, const std::string& prefix, const std::string& text,
                                  std::string* var, std::string* err) {
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

bool FunctionBody::EvalIn(const std::string& field, const std::string& text, int64_t lo, int64_t hi, std::string* var,
                          std::string* err) {
  if (!Eval(field, text, var, err)) return false;
  std::string cond;
  if (lo != kInt64Min) cond = *var + " < " + CInt64Literal(lo);
  if (hi != kInt64Max) cond += (cond.empty() ? "" : " || ") + *var + " > " + CInt64Literal(hi);
  if (!cond.empty())
    Line("if (" + cond + ") return " +
         FailValue(field + ": '" + text + "' is ", *var,
                   "; must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]") +
         ";");
  return true;
}

}  // namespace forgek
