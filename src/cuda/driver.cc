// Loads the driver API with dlopen + cuGetProcAddress; nothing in forgek links libcuda.
#include "forgek/cuda/driver.h"

#include <dlfcn.h>

#include <mutex>

namespace forgek::cuda {
namespace {

using GetProcAddressFn = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

struct LoadState {
  Driver driver;
  std::string error;
  bool ok = false;
};

void Load(LoadState* s) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    s->error = "no NVIDIA driver: libcuda.so.1 not found";
    return;
  }
  // cuGetProcAddress itself is found by name; in CUDA 12+ drivers its current ABI is the _v2 symbol.
  auto get_proc = reinterpret_cast<GetProcAddressFn>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!get_proc) {
    s->error = "NVIDIA driver too old: libcuda.so.1 has no cuGetProcAddress_v2 (need CUDA 12 or newer)";
    return;
  }
#define FORGEK_DRIVER_RESOLVE(name)                                                                  \
  {                                                                                                  \
    void* fn = nullptr;                                                                              \
    CUdriverProcAddressQueryResult found{};                                                          \
    if (get_proc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||  \
        fn == nullptr) {                                                                             \
      s->error = std::string("NVIDIA driver lacks ") + #name + " (built against CUDA " +            \
                 std::to_string(CUDA_VERSION) + "; update the driver)";                              \
      return;                                                                                        \
    }                                                                                                \
    s->driver.name = reinterpret_cast<decltype(s->driver.name)>(fn);                                 \
  }
  FORGEK_DRIVER_FUNCTIONS(FORGEK_DRIVER_RESOLVE)
#undef FORGEK_DRIVER_RESOLVE
  if (s->driver.cuDriverGetVersion(&s->driver.version) != CUDA_SUCCESS) s->driver.version = 0;
  s->ok = true;
}

LoadState& State() {
  static LoadState state;
  static std::once_flag once;
  std::call_once(once, [] { Load(&state); });
  return state;
}

}  // namespace

const Driver* LoadDriver(std::string* err) {
  LoadState& s = State();
  if (!s.ok) {
    if (err) *err = s.error;
    return nullptr;
  }
  return &s.driver;
}

std::string ErrorName(CUresult r) {
  const Driver* d = LoadDriver(nullptr);
  const char* name = nullptr;
  if (d && d->cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
  return "CUDA_ERROR_" + std::to_string(static_cast<int>(r));
}

std::string ErrorText(CUresult r) {
  const Driver* d = LoadDriver(nullptr);
  const char* text = nullptr;
  std::string out = ErrorName(r) + " (" + std::to_string(static_cast<int>(r)) + ")";
  if (d && d->cuGetErrorString(r, &text) == CUDA_SUCCESS && text) out += std::string(": ") + text;
  return out;
}

bool IsStickyError(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

}  // namespace forgek::cuda
