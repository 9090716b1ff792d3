// The compile child's side: read the request, give up what a compile does not need, compile, reply.
#include "forgek/compile/compile_worker.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "compile_wire.h"
#include "landlock.h"
#include "nvrtc_program.h"

namespace forgek {
namespace {

// Requests carry a candidate (bounded far below this by the candidate size limit) and options.
constexpr size_t kMaxRequestBytes = 64u << 20;
// The program log is for people and agents: its head says what went wrong.
constexpr size_t kMaxLogBytes = 1u << 20;
// A crashing front end must not leave a core file of the candidate behind.
constexpr rlim_t kNoCore = 0;

bool ReadAll(int fd, std::string* out, size_t limit) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > limit) return false;
  }
}

bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

int Reply(const ChildCompileReply& reply) { return WriteAll(STDOUT_FILENO, EncodeReply(reply)) ? 0 : 1; }

int Fail(const std::string& why) {
  ChildCompileReply reply;
  reply.error = why;
  Reply(reply);
  return 1;
}

bool SetLimit(int resource, rlim_t value, const char* name, std::string* err) {
  rlimit lim{value, value};
  if (setrlimit(resource, &lim) == 0) return true;
  *err = std::string("cannot set ") + name + ": " + std::strerror(errno);
  return false;
}

// NVRTC opens its builtins library (beside itself) at its first compile, searching the loader's
// paths and cache, which confinement closes: load it first, by its path when it can be found.
void PreloadNvrtcBuiltins() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return;
  const std::string soname = "libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) != 0 && info.dli_fname) {
    std::string self = info.dli_fname;
    std::string dir = self.substr(0, self.rfind('/') + 1);
    if (dlopen((dir + soname).c_str(), RTLD_NOW | RTLD_GLOBAL)) return;
  }
  dlopen(soname.c_str(), RTLD_NOW | RTLD_GLOBAL);
}

bool SanitizerBuild() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

bool LimitResources(const ChildCompileRequest& req, std::string* err) {
  if (!SetLimit(RLIMIT_CORE, kNoCore, "RLIMIT_CORE", err)) return false;
  if (req.stack_bytes > 0 && !SetLimit(RLIMIT_STACK, static_cast<rlim_t>(req.stack_bytes), "RLIMIT_STACK", err))
    return false;
  if (req.cpu_seconds > 0 && !SetLimit(RLIMIT_CPU, static_cast<rlim_t>(req.cpu_seconds), "RLIMIT_CPU", err))
    return false;
  // AddressSanitizer reserves terabytes of shadow memory: an address-space limit would stop every
  // allocation, so a sanitizer build relies on the wall deadline alone.
  if (req.address_space_bytes > 0 && !SanitizerBuild() &&
      !SetLimit(RLIMIT_AS, static_cast<rlim_t>(req.address_space_bytes), "RLIMIT_AS", err))
    return false;
  return true;
}

}  // namespace

bool IsCompileWorkerInvocation(int argc, char** argv) {
  return argc == 2 && argv[1] != nullptr && std::strcmp(argv[1], kCompileWorkerCommand) == 0;
}

int RunCompileWorker() {
  // Die with the thread that started us, so that no compile outlives forgek.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;
  std::string bytes;
  if (!ReadAll(STDIN_FILENO, &bytes, kMaxRequestBytes)) return Fail("cannot read the request (or it is too large)");
  ChildCompileRequest req;
  std::string err;
  if (!DecodeRequest(bytes, &req, &err)) return Fail("malformed request: " + err);
  // Nothing inherited by accident (a descriptor of the store, a log file) stays open.
  close_range(3, ~0U, 0);

  PreloadNvrtcBuiltins();
  if (!LimitResources(req, &err)) return Fail(err);
  ChildCompileReply reply;
  reply.landlock_abi = LandlockAbi();
  std::vector<FolderAccess> folders;
  for (const std::string& f : req.read_folders) folders.push_back({f, false});
  for (const std::string& f : req.write_folders) folders.push_back({f, true});
  if (!ConfineToFolders(folders, &err)) {
    if (!req.allow_unconfined)
      return Fail("cannot confine the compiler to the toolkit's folders: " + err +
                  "; set FORGEK_UNCONFINED_COMPILE=1 to compile without that confinement (a candidate's "
                  "#include may then read any file forgek can)");
    reply.landlock_abi = 0;
  }

  std::function<bool()> never = [] { return false; };  // the parent enforces the deadline
  reply.run = RunNvrtc(req.name, req.source, req.options, never);
  if (reply.run.log.size() > kMaxLogBytes) {
    reply.run.log.resize(kMaxLogBytes);
    reply.run.log += "\n[forgek: the compiler's log was cut at 1 MiB]\n";
  }
  return Reply(reply);
}

}  // namespace forgek
