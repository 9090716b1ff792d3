// The statements of one generated C function that evaluate manifest and operator expressions.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "forgek/core/expr_c.h"

namespace forgek {

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
                      std::string* err);

  // Eval, then the value must lie in [lo, hi] (bounds at int64's ends are not compared: always true).
  bool EvalIn(const std::string& field, const std::string& text, int64_t lo, int64_t hi, std::string* var,
              std::string* err);

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

}  // namespace forgek
