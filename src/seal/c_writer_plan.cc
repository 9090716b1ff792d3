// The plan of a seal's C export around its kernels' own: messages, the tensors' check, the seal's rule.
#include <set>

#include "c_writer.h"

namespace forgek {

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
  std::vector<CMessagePiece> sizes;
  for (size_t i = 0; i < op_.params.size(); ++i) {
    sizes.push_back({CStringLiteral((i ? ", " : " (sizes ") + op_.params[i] + "=")});
    sizes.push_back({"plan->sizes[" + std::to_string(i) + "]", true});
  }
  sizes.push_back({"\")\""});
  c += AppendLines("  ", "plan->message", sizes) + "}\n\n";
  // fk_fail and fk_fail_value: the message from the pieces their parameters give, then the sizes.
  auto fail = [&](const std::string& name, const std::string& params, const std::vector<CMessagePiece>& pieces) {
    return "static " + st + " " + name + "(" + plan + "* plan, " + params + ") {\n  plan->message[0] = '\\0';\n" +
           AppendLines("  ", "plan->message", pieces) + "  fk_append_sizes(plan);\n  return " + E("_UNSUPPORTED_SIZE") +
           ";\n}\n\n";
  };
  c += fail("fk_fail", "const char* text", {{"text"}});
  c += fail("fk_fail_value", "const char* before, int64_t value, const char* after",
            {{"before"}, {"value", true}, {"after"}});
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
  FunctionBody f(std::set<std::string>(op_.params.begin(), op_.params.end()), "  ");
  BindSizes(f, nullptr);
  for (size_t t = 0; t < op_.tensors.size(); ++t) {
    const TensorSpec& spec = op_.tensors[t];
    f.Open("{  /* tensors[" + std::to_string(t) + "] " + CommentText(spec.name) + " */");
    const std::string bytes = f.Fresh("bytes");
    f.Line("int64_t " + bytes + " = " + CInt64Literal(DTypeBytes(spec.dtype)) + ";");
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

void CWriter::BindSizes(FunctionBody& f, const ParamAssignment* params) const {
  for (const std::string& p : op_.params) f.Line("int64_t v_" + p + " = " + CParamName(p) + ";");
  if (params) {
    for (const auto& [name, value] : *params) f.Line("int64_t v_" + name + " = " + CInt64Literal(value) + ";");
    f.Line("int64_t v_" + std::string(kNumSmsName) + " = num_sms;");
  }
  // Not every expression reads every name: the casts keep -Wunused-variable quiet in the C.
  for (const std::string& p : op_.params) f.Line("(void)v_" + p + ";");
  if (params) {
    for (const auto& [name, value] : *params) f.Line("(void)v_" + name + ";");
    f.Line("(void)v_" + std::string(kNumSmsName) + ";");
  }
}

std::string CWriter::PublicPlan() const {
  const std::string st = Status(), plan = Plan();
  std::string c;
  c += "/* Plans kernel `kernel` from a clean plan, for a device of `num_sms` SMs. */\n";
  c += "static " + st + " fk_plan_kernel(int kernel, " + SizeParams() + ", int64_t num_sms, " + plan + "* plan) {\n";
  c += "  plan->kernel = kernel;\n  plan->num_launches = 0;\n  plan->num_workspaces = 0;\n"
       "  plan->num_tensor_maps = 0;\n  plan->workspace_bytes = 0;\n";
  c += "  switch (kernel) {\n";
  for (const CKernel& k : s_.kernels) {
    c += "    case " + std::to_string(k.entry) + ":\n";
    c += "      plan->kernel_label = " + CStringLiteral(k.label) + ";\n";
    c += "      return fk_plan_" + std::to_string(k.entry) + "(" + SizeArgs() + ", num_sms, plan);\n";
  }
  c += "    default:\n      plan->kernel = -1;\n      return fk_fail(plan, \"no such kernel\");\n  }\n}\n\n";
  const bool refer = s_.dispatch && s_.fallback >= 0;
  if (refer) {
    c += "/* Puts `before` in front of the plan's message. */\n"
         "static " + st + " fk_refer(" + plan + "* plan, const char* before) {\n"
         "  char why[" + E("_MESSAGE_BYTES") + "];\n"
         "  memcpy(why, plan->message, sizeof why);\n"
         "  plan->kernel = -1;\n"
         "  plan->message[0] = '\\0';\n" +
         AppendLines("  ", "plan->message", {{"before"}, {"why"}}) + "  return " + E("_UNSUPPORTED_SIZE") + ";\n}\n\n";
  }
  c += "/* The plan of the sizes on a device of `num_sms` SMs. */\n";
  c += "static " + st + " fk_plan_for(" + SizeParams() + ", int64_t num_sms, " + plan + "* plan) {\n";
  c += "  " + st + " status;\n";
  c += "  if (plan == NULL) return " + E("_INVALID_ARGUMENT") + ";\n";
  c += "  memset(plan, 0, sizeof *plan);\n  plan->kernel = -1;\n  plan->kernel_label = \"\";\n";
  c += "  plan->num_sms = num_sms;\n";
  for (size_t i = 0; i < op_.params.size(); ++i)
    c += "  plan->sizes[" + std::to_string(i) + "] = " + CParamName(op_.params[i]) + ";\n";
  c += "  status = fk_check_tensors(" + SizeArgs() + ", plan);\n";
  c += "  if (status != " + E("_OK") + ") return status;\n";
  if (!s_.dispatch) {
    c += "  return fk_plan_kernel(0, " + SizeArgs() + ", num_sms, plan);\n}\n\n" + PlanEntry();
    return c;
  }
  c += "  /* The seal's rule: the table row whose values equal the sizes; else the fallback where it\n"
       "     accepts them; else the expert reference. */\n";
  for (const CRow& r : s_.rows) {
    std::string cond;
    for (const std::string& p : op_.params)
      cond += (cond.empty() ? "" : " && ") + CParamName(p) + " == " + CInt64Literal(r.values.at(p));
    c += "  if (" + cond + ") {  /* config " + CommentText(r.config) + ": " + CommentText(r.why) + " */\n";
    if (r.kernel >= 0) {
      c += "    return fk_plan_kernel(" + std::to_string(s_.kernels[r.kernel].entry) + ", " + SizeArgs() + ", num_sms, plan);\n";
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
         ");\n}\n\n" + PlanEntry();
    return c;
  }
  const CKernel& fb = s_.kernels[s_.fallback];
  c += "  status = fk_plan_kernel(" + std::to_string(fb.entry) + ", " + SizeArgs() + ", num_sms, plan);\n";
  c += "  if (status != " + E("_UNSUPPORTED_SIZE") + ") return status;\n";
  c += "  return fk_refer(plan, " +
       CStringLiteral("the seal's fallback, kernel " + std::to_string(fb.entry) +
                      ", does not accept these sizes, so its rule gives them to the expert reference (" + s_.reference +
                      "), which a C export does not hold: ") +
       ");\n}\n\n" + PlanEntry();
  return c;
}

std::string CWriter::PlanEntry() const {
  return PlanSignature() + " {\n  return fk_plan_for(" + SizeArgs() + ", fk_current_sms(), plan);\n}\n\n";
}

}  // namespace forgek
