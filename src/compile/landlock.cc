// Landlock rulesets over the raw system calls (glibc has no wrappers; the uapi header of the
// build machine may predate the fields a newer kernel offers, so the structures are spelled here).
#include "landlock.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace forgek {
namespace {

// The system call numbers are the same on every architecture since Linux 5.13.
constexpr long kCreateRuleset = 444;
constexpr long kAddRule = 445;
constexpr long kRestrictSelf = 446;
constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

// Filesystem rights, by the ABI that introduced them.
constexpr uint64_t kFsExecute = 1ULL << 0;
constexpr uint64_t kFsReadFile = 1ULL << 2;
constexpr uint64_t kFsReadDir = 1ULL << 3;
constexpr uint64_t kFsAbi1 = (1ULL << 13) - 1;  // execute .. make_sym
constexpr uint64_t kFsRefer = 1ULL << 13;        // ABI 2
constexpr uint64_t kFsTruncate = 1ULL << 14;     // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;     // ABI 5
constexpr uint64_t kNetBindTcp = 1ULL << 0;      // ABI 4
constexpr uint64_t kNetConnectTcp = 1ULL << 1;   // ABI 4
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;              // ABI 6

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

uint64_t HandledFsRights(int abi) {
  uint64_t rights = kFsAbi1;
  if (abi >= 2) rights |= kFsRefer;
  if (abi >= 3) rights |= kFsTruncate;
  if (abi >= 5) rights |= kFsIoctlDev;
  return rights;
}

// The size of the ruleset structure the kernel of this ABI knows (larger ones are refused).
size_t RulesetAttrSize(int abi) {
  if (abi >= 6) return sizeof(RulesetAttr);
  if (abi >= 4) return offsetof(RulesetAttr, scoped);
  return offsetof(RulesetAttr, handled_access_net);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

int LandlockAbi() {
  long abi = syscall(kCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

bool ConfineToFolders(const std::vector<FolderAccess>& folders, std::string* err) {
  const int abi = LandlockAbi();
  if (abi == 0) {
    *err = std::string("this kernel offers no Landlock (") + std::strerror(errno) +
           "): it needs Linux 5.13 or later with landlock among the security modules (lsm=...)";
    return false;
  }
  RulesetAttr attr{};
  attr.handled_access_fs = HandledFsRights(abi);
  if (abi >= 4) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (abi >= 6) attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  Fd ruleset(static_cast<int>(syscall(kCreateRuleset, &attr, RulesetAttrSize(abi), 0)));
  if (ruleset.get() < 0) {
    *err = std::string("cannot create a Landlock ruleset: ") + std::strerror(errno);
    return false;
  }
  const uint64_t read_rights = kFsReadFile | kFsReadDir | kFsExecute;
  for (const FolderAccess& folder : folders) {
    Fd dir(open(folder.path.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY));
    if (dir.get() < 0) continue;  // nothing there to allow
    PathBeneathAttr rule{};
    rule.allowed_access = (folder.write ? attr.handled_access_fs : read_rights) & attr.handled_access_fs;
    rule.parent_fd = dir.get();
    if (syscall(kAddRule, ruleset.get(), kRulePathBeneath, &rule, 0) != 0) {
      *err = "cannot allow " + folder.path + " in the Landlock ruleset: " + std::strerror(errno);
      return false;
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *err = std::string("cannot set no_new_privs: ") + std::strerror(errno);
    return false;
  }
  if (syscall(kRestrictSelf, ruleset.get(), 0) != 0) {
    *err = std::string("Landlock refused to restrict this process: ") + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace forgek
