// libFuzzer target: the expression language (parse, names, evaluate with bound names).
#include <cstddef>
#include <cstdint>
#include <string>

#include "forgek/core/expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  forgek::Diagnostic diag;
  auto expr = forgek::Expr::Parse(text, &diag);
  if (!expr) return 0;
  forgek::Bindings vars;
  for (const std::string& name : expr->Names()) vars[name] = static_cast<int64_t>(name.size()) * 37 - 100;
  int64_t value = 0;
  expr->Eval(vars, &value, &diag);
  return 0;
}
