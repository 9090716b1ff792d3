// The header of a seal's C export: its comment, its types and the declarations of its functions.
#include <cstdio>

#include "forgek/core/params.h"
#include "c_writer.h"

namespace forgek {
namespace {

// The bytes of a plan's message and of a thread's last error, the NUL included; fk_append cuts a
// longer message there.
constexpr int kMessageBytes = 512;

}  // namespace

std::string CWriter::HeaderComment() const {
  const SealRecord& seal = *s_.seal;
  std::string c = "/* " + s_.prefix + ".h: seal " + CommentText(seal.id) + " of operator " + CommentText(op_.name) +
                  ", exported by forgek " FORGEK_VERSION " as C.\n";
  c += " * Generated from the knowledge store (`forgek seal export " + CommentText(seal.id.substr(0, 12)) +
       " DIR --lang c`): export again rather than edit.\n *\n";
  c += CommentBlock(op_.description);
  c += " *\n";
  c += CommentBlock("Sealed on " + seal.device + " (" + seal.arch + ") with " + seal.toolchain +
                    (seal.driver.empty() ? "" : ", driver " + seal.driver) + ", " + seal.created_at + ". The cubins are " +
                    (s_.rebuilt ? "rebuilt by nvrtc " + Compiler::NvrtcVersion() + " from the sealed sources"
                                : "the sealed ones the store keeps") +
                    "; they load on GPUs of that architecture only.");
  c += " *\n * Kernels (plan.kernel):\n";
  for (const CKernel& k : s_.kernels)
    c += CommentBlock(std::to_string(k.entry) + ": " + k.label + ", candidate " + k.candidate_hash.substr(0, 12) +
                      ", params " + ParamsJson(k.params) + ".");
  if (s_.dispatch) {
    c += " *\n" + CommentBlock("A dispatch seal. Which kernel serves given sizes follows the seal's one rule (forgek's "
                               "docs/seal-format.md): the table row whose values equal the sizes; else the fallback "
                               "where its manifest accepts them; else the expert reference, which this export does "
                               "not hold (" + s_.reference + "): such sizes return " + E("_UNSUPPORTED_SIZE") +
                               " with a message that says so. The table:");
    for (const CRow& r : s_.rows)
      c += CommentBlock("  " + r.config + ": " +
                        (r.kernel < 0 ? "the expert reference" : "kernel " + std::to_string(s_.kernels[r.kernel].entry)) +
                        " (" + r.why + ")");
    c += CommentBlock("  otherwise: " + (s_.fallback < 0 ? std::string("the expert reference")
                                                          : "kernel " + std::to_string(s_.kernels[s_.fallback].entry) +
                                                                " where it accepts the sizes, else the expert reference"));
  }
  c += " *\n * Tensors (device pointers, row-major, outermost dimension first, in the operator's order):\n";
  for (const TensorSpec& t : op_.tensors)
    c += CommentBlock("  " + CParamName(t.name) + ": " + DTypeName(t.dtype) + " " + ShapeText(t) + ", " +
                      TensorRoleName(t.role));
  if (!op_.scalars.empty()) {
    c += " * Scalars (forgek checked the seal with the values shown):\n";
    for (const ScalarSpec& sc : op_.scalars) {
      char value[64];
      std::snprintf(value, sizeof value, "%.9g", sc.value);
      c += CommentBlock("  " + CParamName(sc.name) + ": " + DTypeName(sc.dtype) + ", " + value);
    }
  }
  c += CommentBlock("Sizes: " + SizeArgs() + " (int64_t). Any sizes are accepted where a kernel's manifest accepts them; "
                    "the suite forgek measured: " +
                    [&] {
                      std::string configs;
                      for (const ConfigSpec& cfg : op_.configs) configs += (configs.empty() ? "" : ", ") + cfg.name;
                      return configs;
                    }() + ".");
  c += " *\n";
  c += CommentBlock("Needs the CUDA driver API alone (cuda.h and libcuda, CUDA 12.0 or newer for cuLaunchKernelEx, "
                    "cuTensorMapEncodeTiled and cuCtxGetId), the C standard library, and POSIX threads: one "
                    "pthread mutex guards the module cache. Build it as C11 or C++17: `cc -std=c11 -c " +
                    s_.prefix + ".c -I/usr/local/cuda/include`, and link with -lcuda -lpthread.");
  c += " */\n";
  return c;
}

std::string CWriter::HeaderTypes() const {
  const std::string st = Status();
  std::string c;
  c += "typedef enum " + st + " {\n";
  c += "  " + E("_OK") + " = 0,\n";
  c += "  /* No kernel of this export takes these sizes: a tensor dimension below 1, a constraint of the\n"
       "     manifest that does not hold, a launch beyond the driver's limits, an expression that\n"
       "     overflows or divides by zero, or the seal's rule gives them to the expert reference, which is\n"
       "     not exported. The message names the constraint or the manifest's field, and the sizes. */\n";
  c += "  " + E("_UNSUPPORTED_SIZE") + " = 1,\n";
  c += "  /* A NULL tensor or plan, or a workspace smaller than " + T("_workspace_bytes") + " says. */\n";
  c += "  " + E("_INVALID_ARGUMENT") + " = 2,\n";
  c += "  /* A driver call failed: the message names it, " + T("_last_cuda_result") + " gives its CUresult. */\n";
  c += "  " + E("_CUDA_ERROR") + " = 3,\n";
  c += "  /* Host memory for the module cache could not be allocated, or its mutex failed. */\n";
  c += "  " + E("_SYSTEM_ERROR") + " = 4\n";
  c += "} " + st + ";\n\n";
  c += "/* The bounds of a plan's arrays over the exported kernels. */\n";
  c += "#define " + E("_KERNELS") + " " + std::to_string(Entries()) + "\n";
  c += "#define " + E("_MAX_LAUNCHES") + " " + std::to_string(MaxLaunches()) + "\n";
  c += "#define " + E("_MAX_ARGS") + " " + std::to_string(std::max<size_t>(1, MaxArgs())) + "\n";
  c += "#define " + E("_MAX_WORKSPACES") + " " + std::to_string(MaxWorkspaces()) + "\n";
  c += "#define " + E("_MAX_TENSOR_MAPS") + " " + std::to_string(MaxTensorMaps()) + "\n";
  c += "#define " + E("_SIZES") + " " + std::to_string(op_.params.size()) + "\n";
  c += "#define " + E("_MESSAGE_BYTES") + " " + std::to_string(kMessageBytes) + "\n";
  c += "/* The SM count a plan is for where no device is at hand (a thread without a current context):\n"
       "   the sealed arch's (" + s_.seal->arch + "). Manifests read the count as num_sms (a persistent grid). */\n";
  c += "#define " + E("_NOMINAL_SMS") + " " + std::to_string(NominalSmCount(s_.seal->arch)) + "\n\n";
  c += "/* One kernel launch of a plan, in launch order. */\n";
  c += "typedef struct " + T("_launch") + " {\n"
       "  const char* kernel;  /* the function's name in its cubin */\n"
       "  int index;           /* the launch's index in the kernel's manifest (launches[index]) */\n"
       "  unsigned int grid[3], block[3], cluster[3];\n"
       "  unsigned int dynamic_smem_bytes;\n"
       "  int num_args;\n"
       "  /* The values of the integer arguments, in argument order (an i32 one fits in 32 bits; an f32\n"
       "     expression's value before it is converted); 0 where an argument is a pointer, a tensor map,\n"
       "     a scalar or a float literal. */\n"
       "  int64_t args[" + E("_MAX_ARGS") + "];\n"
       "} " + T("_launch") + ";\n\n";
  c += "/* A scratch buffer, carved from the one workspace at `offset` (a multiple of 256 bytes). */\n";
  c += "typedef struct " + T("_workspace") + " {\n"
       "  const char* name;\n"
       "  size_t offset, bytes;\n"
       "  int zero;  /* cleared before every launch sequence; else it holds whatever was there */\n"
       "} " + T("_workspace") + ";\n\n";
  c += "/* A TMA descriptor's sizes, as cuTensorMapEncodeTiled takes them (innermost dimension first). */\n";
  c += "typedef struct " + T("_tensor_map") + " {\n"
       "  const char* name;\n"
       "  cuuint32_t rank;\n"
       "  cuuint64_t dims[5];\n"
       "  cuuint64_t strides[4];  /* bytes, of every dimension but the innermost */\n"
       "  cuuint32_t box[5];\n"
       "} " + T("_tensor_map") + ";\n\n";
  c += "/* Every expression of the serving kernel's manifest evaluated for one set of sizes. */\n";
  c += "typedef struct " + Plan() + " {\n"
       "  int64_t sizes[" + E("_SIZES") + "];  /* in the operator's order */\n"
       "  int64_t num_sms;           /* the device's SM count the plan is for (num_sms of the manifests) */\n"
       "  int kernel;                /* which kernel serves the sizes (the list at the top); -1 when none */\n"
       "  const char* kernel_label;\n"
       "  int num_launches;\n"
       "  " + T("_launch") + " launches[" + E("_MAX_LAUNCHES") + "];\n"
       "  int num_workspaces;\n"
       "  " + T("_workspace") + " workspaces[" + E("_MAX_WORKSPACES") + "];\n"
       "  size_t workspace_bytes;    /* the one workspace the launches need, every buffer included */\n"
       "  int num_tensor_maps;\n"
       "  " + T("_tensor_map") + " tensor_maps[" + E("_MAX_TENSOR_MAPS") + "];\n"
       "  char message[" + E("_MESSAGE_BYTES") + "];  /* why, when the status is not OK */\n"
       "} " + Plan() + ";\n\n";
  return c;
}

std::string CWriter::HeaderFunctions() const {
  const std::string st = Status();
  std::string c;
  c += "/* The launch plan of these sizes: the kernel that serves them and every expression of its manifest\n"
       "   evaluated (grid, block, cluster, shared memory, arguments, workspaces, tensor maps), its\n"
       "   constraints and the driver's limits checked, for the device of the calling thread's current\n"
       "   context (the SM count manifests read as num_sms), or for " + E("_NOMINAL_SMS") + " SMs where the\n"
       "   thread has none. Makes no other CUDA call and keeps no state: callable without a GPU, from any\n"
       "   thread; plan->num_sms says which count it planned for.\n"
       "   " + E("_UNSUPPORTED_SIZE") + " with plan->message when no kernel takes the sizes. */\n";
  c += PlanSignature() + ";\n\n";
  c += "/* The workspace bytes " + s_.prefix + " needs for these sizes (0 when none), on the device the\n"
       "   plan is for (above). */\n";
  c += WorkspaceBytesSignature() + ";\n\n";
  c += "/* Runs the operator on `stream` (NULL: the legacy default stream of the current context): plans\n"
       "   the sizes for the SM count of the stream's device (read once per context), loads the kernel's\n"
       "   module into the stream's context on first use (once per context, thread-safe), encodes the\n"
       "   tensor maps, clears the workspaces that need it and launches every kernel of the plan,\n"
       "   asynchronously. Tensors are device pointers (const: read only).\n"
       "   `workspace`: device memory of at least " + T("_workspace_bytes") + "() bytes, 256-byte aligned;\n"
       "   or NULL, and the call takes it from the stream's memory pool (cuMemAllocAsync) and frees it\n"
       "   after the launches (cuMemFreeAsync), both ordered on `stream`. */\n";
  c += CallSignature() + ";\n\n";
  c += "/* Why the calling thread's last " + s_.prefix + "() or " + T("_workspace_bytes") +
       "() failed (\"\" after\n   a success). */\n";
  c += "const char* " + T("_last_error") + "(void);\n";
  c += "/* The CUresult of the calling thread's last failed driver call (CUDA_SUCCESS when none). */\n";
  c += "CUresult " + T("_last_cuda_result") + "(void);\n";
  c += "/* \"OK\", \"UNSUPPORTED_SIZE\", ... */\n";
  c += "const char* " + T("_status_name") + "(" + st + " status);\n";
  c += "/* Unloads the modules this export loaded into `context` (NULL: the current one). Call it before\n"
       "   destroying a context that ran the operator, while no other thread runs it there. */\n";
  c += st + " " + T("_unload") + "(CUcontext context);\n";
  return c;
}

bool CWriter::Header(std::string* out, std::string*) {
  const std::string guard = E("_H");
  *out = HeaderComment() + "#ifndef " + guard + "\n#define " + guard +
         "\n\n#include <stddef.h>\n#include <stdint.h>\n\n#include <cuda.h>\n\n"
         "#if CUDA_VERSION < 12000\n#error \"" + s_.prefix +
         " needs cuda.h of CUDA 12.0 or newer (cuLaunchKernelEx, cuTensorMapEncodeTiled, cuCtxGetId)\"\n#endif\n\n"
         "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n" +
         HeaderTypes() + HeaderFunctions() + "\n#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif  /* " +
         guard + " */\n";
  return true;
}

}  // namespace forgek
