// The module cache of a seal's C export: the embedded cubins, what each CUDA context loaded, unloading.
#include <cstdio>

#include "c_writer.h"

namespace forgek {

std::string CWriter::Cubins() const {
  std::string c = "/* The cubins, byte for byte as the seal names them (SHA-256 in each comment). 64-byte aligned:\n"
                  "   cuModuleLoadData reads the ELF in place. */\n";
  for (size_t i = 0; i < s_.cubins.size(); ++i) {
    const std::string& bytes = s_.cubins[i];
    c += "/* SHA-256 " + s_.cubin_shas[i] + " */\n";
    c += "FK_ALIGNED static const unsigned char fk_cubin_" + std::to_string(i) + "[" + std::to_string(bytes.size()) +
         "] = {\n";
    char hex[8];
    for (size_t b = 0; b < bytes.size(); ++b) {
      if (b % 20 == 0) c += "  ";
      std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(bytes[b]));
      c += hex;
      if (b + 1 < bytes.size()) c += b % 20 == 19 ? ",\n" : ",";
    }
    c += "\n};\n";
  }
  c += "static const unsigned char* const fk_cubins[" + std::to_string(s_.cubins.size()) + "] = {";
  for (size_t i = 0; i < s_.cubins.size(); ++i) c += (i ? ", " : "") + std::string("fk_cubin_") + std::to_string(i);
  c += "};\n\n";
  return c;
}

std::string CWriter::ModuleTables() const {
  // Function slots: every launch of every kernel, kernel by kernel.
  std::vector<int> cubin_of(static_cast<size_t>(Entries()), -1), first_slot(static_cast<size_t>(Entries()), 0);
  std::vector<std::string> slot_names;
  for (const CKernel& k : s_.kernels) {
    cubin_of[static_cast<size_t>(k.entry)] = static_cast<int>(k.cubin);
    first_slot[static_cast<size_t>(k.entry)] = static_cast<int>(slot_names.size());
    for (const LaunchSpec& l : k.candidate.manifest.launches) slot_names.push_back(l.kernel);
  }
  auto ints = [](const std::vector<int>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out;
  };
  std::string c;
  c += "/* Per kernel (-1: an entry this export does not hold): its cubin, its first function slot. */\n";
  c += "static const int fk_kernel_cubin[" + E("_KERNELS") + "] = {" + ints(cubin_of) + "};\n";
  c += "static const int fk_kernel_slot[" + E("_KERNELS") + "] = {" + ints(first_slot) + "};\n";
  c += "#define FK_SLOTS " + std::to_string(slot_names.size()) + "\n";
  c += "/* Per slot (a launch of a kernel's manifest): the function's name. */\n";
  c += "static const char* const fk_slot_function[FK_SLOTS] = {";
  for (size_t i = 0; i < slot_names.size(); ++i) c += (i ? ", " : "") + CStringLiteral(slot_names[i]);
  c += "};\n#define FK_CUBINS " + std::to_string(s_.cubins.size()) + "\n\n";
  c += "/* What one CUDA context holds of this export, found by the context's unique id (a handle can be\n"
       "   reused after its context is destroyed; an id is not). */\n"
       "typedef struct fk_context_modules {\n"
       "  unsigned long long context_id;\n"
       "  CUmodule modules[FK_CUBINS];\n"
       "  CUfunction functions[FK_SLOTS];\n"
       "  unsigned int smem_allowed[FK_SLOTS];  /* the dynamic shared memory each function may use so far */\n"
       "  int non_portable_cluster[FK_SLOTS];\n"
       "  int64_t sms;  /* the SM count of the context's device, once known (0: not yet) */\n"
       "  struct fk_context_modules* next;\n"
       "} fk_context_modules;\n\n"
       "static pthread_mutex_t fk_mutex = PTHREAD_MUTEX_INITIALIZER;\n"
       "static fk_context_modules* fk_contexts = NULL;\n\n";
  return c;
}

std::string CWriter::ModuleFunctions() const {
  const std::string st = Status();
  std::string c;
  c += "/* The functions of the plan's launches in context `context` (current), its module loaded on first\n"
       "   use and each function's attributes raised to what the launch needs. One mutex guards the cache:\n"
       "   a module is loaded once per context however many threads call at once, and an attribute only\n"
       "   grows, so no thread's launch can find it lowered by another. */\n";
  c += "static " + st + " fk_functions(const " + Plan() + "* plan, CUcontext context, CUfunction* functions) {\n"
       "  unsigned long long id = 0;\n"
       "  fk_context_modules* e = NULL;\n"
       "  " + st + " status = " + E("_OK") + ";\n"
       "  CUresult r;\n"
       "  int i;\n"
       "  const int cubin = fk_kernel_cubin[plan->kernel];\n" +
       CacheLock("the stream's context") +
       "  for (e = fk_contexts; e != NULL && e->context_id != id; e = e->next) {\n  }\n"
       "  if (e == NULL) {\n"
       "    e = (fk_context_modules*)calloc(1, sizeof *e);\n"
       "    if (e == NULL) {\n"
       "      status = fk_error(" + E("_SYSTEM_ERROR") + ", \"out of host memory for the module cache\");\n"
       "      goto done;\n"
       "    }\n"
       "    e->context_id = id;\n"
       "    e->next = fk_contexts;\n"
       "    fk_contexts = e;\n"
       "  }\n"
       "  if (e->sms == 0) e->sms = plan->num_sms;  /* the call planned at the device's count: keep it */\n"
       "  if (e->modules[cubin] == NULL) {\n"
       "    r = cuModuleLoadData(&e->modules[cubin], fk_cubins[cubin]);\n"
       "    if (r != CUDA_SUCCESS) {\n"
       "      e->modules[cubin] = NULL;\n"
       "      status = fk_cuda_error(r, \"cuModuleLoadData\", plan->kernel_label);\n"
       "      goto done;\n"
       "    }\n"
       "  }\n"
       "  for (i = 0; i < plan->num_launches; ++i) {\n"
       "    const " + T("_launch") + "* l = &plan->launches[i];\n"
       "    const int slot = fk_kernel_slot[plan->kernel] + l->index;\n"
       "    if (e->functions[slot] == NULL) {\n"
       "      r = cuModuleGetFunction(&e->functions[slot], e->modules[cubin], fk_slot_function[slot]);\n"
       "      if (r != CUDA_SUCCESS) {\n"
       "        e->functions[slot] = NULL;\n"
       "        status = fk_cuda_error(r, \"cuModuleGetFunction\", l->kernel);\n"
       "        goto done;\n"
       "      }\n"
       "    }\n"
       "    /* the default allowance is 48 KB minus the static shared memory: raise it for any size */\n"
       "    if (l->dynamic_smem_bytes > e->smem_allowed[slot]) {\n"
       "      r = cuFuncSetAttribute(e->functions[slot], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,\n"
       "                             (int)l->dynamic_smem_bytes);\n"
       "      if (r != CUDA_SUCCESS) {\n"
       "        status = fk_cuda_error(r, \"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)\", l->kernel);\n"
       "        goto done;\n"
       "      }\n"
       "      e->smem_allowed[slot] = l->dynamic_smem_bytes;\n"
       "    }\n"
       "    if (l->cluster[0] * l->cluster[1] * l->cluster[2] > 8 && !e->non_portable_cluster[slot]) {\n"
       "      r = cuFuncSetAttribute(e->functions[slot], CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);\n"
       "      if (r != CUDA_SUCCESS) {\n"
       "        status = fk_cuda_error(r, \"cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)\", l->kernel);\n"
       "        goto done;\n"
       "      }\n"
       "      e->non_portable_cluster[slot] = 1;\n"
       "    }\n"
       "    functions[i] = e->functions[slot];\n"
       "  }\n"
       "done:\n"
       "  pthread_mutex_unlock(&fk_mutex);\n"
       "  return status;\n}\n\n";
  return c;
}

std::string CWriter::ContextSms() const {
  return "/* The SM count of `context`'s device, which manifests read as num_sms. A context's device never\n"
         "   changes, so the count is read from the driver once per context and kept in the module cache\n"
         "   (fk_functions stores it there with the context's first call). Returns the first failed driver\n"
         "   call's result, its name in *what. */\n"
         "static CUresult fk_context_sms(CUcontext context, int64_t* sms, const char** what) {\n"
         "  unsigned long long id = 0;\n"
         "  const fk_context_modules* e = NULL;\n"
         "  CUcontext popped = NULL;\n"
         "  CUdevice device = 0;\n"
         "  CUresult r;\n"
         "  int count = 0;\n"
         "  *what = \"cuCtxGetId\";\n"
         "  r = cuCtxGetId(context, &id);\n"
         "  if (r != CUDA_SUCCESS) return r;\n"
         "  *sms = 0;\n"
         "  if (pthread_mutex_lock(&fk_mutex) == 0) {  /* else the cache is skipped: the driver answers */\n"
         "    for (e = fk_contexts; e != NULL && e->context_id != id; e = e->next) {\n    }\n"
         "    if (e != NULL) *sms = e->sms;\n"
         "    pthread_mutex_unlock(&fk_mutex);\n"
         "  }\n"
         "  if (*sms > 0) return CUDA_SUCCESS;\n"
         "  /* cuCtxGetDevice reads the current context: make `context` current for it */\n"
         "  *what = \"cuCtxPushCurrent\";\n"
         "  r = cuCtxPushCurrent(context);\n"
         "  if (r != CUDA_SUCCESS) return r;\n"
         "  r = cuCtxGetDevice(&device);\n"
         "  cuCtxPopCurrent(&popped);\n"
         "  *what = \"cuCtxGetDevice\";\n"
         "  if (r != CUDA_SUCCESS) return r;\n"
         "  *what = \"cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)\";\n"
         "  r = cuDeviceGetAttribute(&count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);\n"
         "  if (r != CUDA_SUCCESS) return r;\n"
         "  *sms = count;\n"
         "  return CUDA_SUCCESS;\n"
         "}\n\n"
         "/* The SM count of the calling thread's current context's device; " + E("_NOMINAL_SMS") + " where the thread\n"
         "   has no current context or the driver cannot say (no GPU): the public plan's device. */\n"
         "static int64_t fk_current_sms(void) {\n"
         "  CUcontext context = NULL;\n"
         "  const char* what = NULL;\n"
         "  int64_t sms = 0;\n"
         "  if (cuCtxGetCurrent(&context) != CUDA_SUCCESS || context == NULL) return " + E("_NOMINAL_SMS") + ";\n"
         "  if (fk_context_sms(context, &sms, &what) != CUDA_SUCCESS || sms < 1) return " + E("_NOMINAL_SMS") + ";\n"
         "  return sms;\n"
         "}\n\n";
}

std::string CWriter::CacheLock(const std::string& what) const {
  return "  r = cuCtxGetId(context, &id);\n"
         "  if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuCtxGetId\", " + CStringLiteral(what) + ");\n"
         "  if (pthread_mutex_lock(&fk_mutex) != 0) return fk_error(" + E("_SYSTEM_ERROR") +
         ", \"pthread_mutex_lock failed\");\n";
}

std::string CWriter::Unload() const {
  const std::string st = Status();
  return st + " " + T("_unload") + "(CUcontext context) {\n"
         "  unsigned long long id = 0;\n"
         "  fk_context_modules** link;\n"
         "  fk_context_modules* e = NULL;\n"
         "  CUcontext popped = NULL;\n"
         "  CUresult r;\n"
         "  " + st + " status = " + E("_OK") + ";\n"
         "  int i;\n"
         "  if (context == NULL) {\n"
         "    r = cuCtxGetCurrent(&context);\n"
         "    if (r != CUDA_SUCCESS) return fk_cuda_error(r, \"cuCtxGetCurrent\", \"the calling thread\");\n"
         "    if (context == NULL) return " + E("_OK") + ";  /* no context: nothing loaded in it */\n"
         "  }\n" +
         CacheLock("the context") +
         "  for (link = &fk_contexts; *link != NULL; link = &(*link)->next) {\n"
         "    if ((*link)->context_id != id) continue;\n"
         "    e = *link;\n"
         "    *link = e->next;\n"
         "    break;\n"
         "  }\n"
         "  pthread_mutex_unlock(&fk_mutex);\n"
         "  if (e == NULL) return " + E("_OK") + ";\n"
         "  r = cuCtxPushCurrent(context);\n"
         "  if (r == CUDA_SUCCESS) {\n"
         "    for (i = 0; i < FK_CUBINS; ++i) {\n"
         "      if (e->modules[i] == NULL) continue;\n"
         "      r = cuModuleUnload(e->modules[i]);\n"
         "      if (r != CUDA_SUCCESS && status == " + E("_OK") + ") status = fk_cuda_error(r, \"cuModuleUnload\", \"a cubin\");\n"
         "    }\n"
         "    cuCtxPopCurrent(&popped);\n"
         "  } else {\n"
         "    status = fk_cuda_error(r, \"cuCtxPushCurrent\", \"the context\");\n"
         "  }\n"
         "  free(e);\n"
         "  return status;\n}\n";
}

}  // namespace forgek
