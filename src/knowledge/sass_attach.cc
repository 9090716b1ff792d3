// SASS for profiles: the disassembly of our own cubins, done once per kernel for all its configs.
#include <spdlog/spdlog.h>

#include "forgek/knowledge/knowledge.h"

namespace forgek {

void AttachSass(const KernelUnderTest& kernel, std::vector<KernelProfile>* profiles) {
  if (!kernel.library.empty() || kernel.cubin.empty() || profiles->empty()) return;
  std::string sass, why;
  if (!DisassembleCubin(kernel.cubin, &sass, &why)) {
    spdlog::debug("no SASS for {}: {}", kernel.label, why);
    return;
  }
  for (KernelProfile& p : *profiles) p.sass = sass;
}

}  // namespace forgek
