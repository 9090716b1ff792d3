// The calling thread's last error in a seal's C export: where it is kept, how it is set, how it is read.
#include "c_writer.h"

namespace forgek {

std::string CWriter::ErrorState() const {
  const std::string st = Status();
  std::string c;
  c += "static FK_THREAD_LOCAL char fk_last_error[" + E("_MESSAGE_BYTES") + "];\n"
       "static FK_THREAD_LOCAL CUresult fk_last_cuda = CUDA_SUCCESS;\n\n";
  c += "static " + st + " fk_error(" + st + " status, const char* text) {\n"
       "  fk_last_error[0] = '\\0';\n" +
       AppendLines("  ", "fk_last_error", {{"text"}}) +
       "  return status;\n}\n\n";
  c += "/* \"call (what): CUDA_ERROR_...: its description\" as the thread's last error. */\n"
       "static " + st + " fk_cuda_error(CUresult result, const char* call, const char* what) {\n"
       "  const char* name = NULL;\n"
       "  const char* text = NULL;\n"
       "  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || name == NULL) name = \"an unknown CUresult\";\n"
       "  if (cuGetErrorString(result, &text) != CUDA_SUCCESS || text == NULL) text = \"\";\n"
       "  fk_last_cuda = result;\n"
       "  fk_last_error[0] = '\\0';\n" +
       AppendLines("  ", "fk_last_error",
                   {{"call"}, {"\" (\""}, {"what"}, {"\"): \""}, {"name"}, {"\": \""}, {"text"}}) +
       "  return " + E("_CUDA_ERROR") + ";\n}\n\n";
  return c;
}

std::string CWriter::ErrorAccessors() const {
  std::string c;
  c += "const char* " + T("_last_error") + "(void) { return fk_last_error; }\n\n";
  c += "CUresult " + T("_last_cuda_result") + "(void) { return fk_last_cuda; }\n\n";
  c += "const char* " + T("_status_name") + "(" + Status() + " status) {\n  switch (status) {\n";
  for (const char* name : {"OK", "UNSUPPORTED_SIZE", "INVALID_ARGUMENT", "CUDA_ERROR", "SYSTEM_ERROR"})
    c += "    case " + E("_" + std::string(name)) + ": return \"" + name + "\";\n";
  c += "  }\n  return \"an unknown status\";\n}\n\n";
  return c;
}

}  // namespace forgek
