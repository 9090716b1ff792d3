// The content-addressed on-disk cache of compile results, safe to share between processes.
#pragma once

#include <string>
#include <vector>

#include "forgek/compile/compile.h"

namespace forgek {

// The cache key: SHA-256 over everything that decides NVRTC's output (the source, the options in
// order, the NVRTC version, the target) and the entry format, each length-prefixed.
std::string CompileKey(const std::string& source, const std::vector<std::string>& options,
                       const std::string& nvrtc_version, const std::string& target);

// One file per key under DIR/<2 hex>/<key>: a JSON header line (log, messages, kernels,
// cubin size and hash) followed by the raw cubin. Written to a temporary file and renamed, so a
// reader in another process sees a whole entry or none.
class CompileCache {
 public:
  explicit CompileCache(std::string dir) : dir_(std::move(dir)) {}

  bool enabled() const { return !dir_.empty(); }
  std::string EntryPath(const std::string& key) const;

  // Fills ok, cubin, log, messages and kernels from the entry. False on a miss and on an entry
  // that is unreadable or does not check out (then the caller recompiles and overwrites it).
  bool Load(const std::string& key, CompileResult* result) const;

  // False, with the reason, when the entry could not be written; the compile still counts.
  bool Store(const std::string& key, const CompileResult& result, std::string* err) const;

 private:
  std::string dir_;
};

}  // namespace forgek
