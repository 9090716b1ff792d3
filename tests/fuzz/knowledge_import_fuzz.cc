// libFuzzer target: `forgek knowledge import` of a JSON file into a scratch store.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "forgek/knowledge/store.h"
#include "forgek/knowledge/store_io.h"

namespace {

std::string scratch_dir;

forgek::Store& ScratchStore() {
  static forgek::Store* store = [] {
    char tmpl[] = "/tmp/forgek-fuzz-store-XXXXXX";
    const char* made = mkdtemp(tmpl);
    if (!made) std::abort();
    scratch_dir = made;
    // The store stays open for the process's life; its folder goes when the fuzzer exits.
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir, ec);
    });
    auto* s = new forgek::Store;
    std::string err;
    if (!s->Open(std::string(made) + "/k.db", &err)) std::abort();
    return s;
  }();
  return *store;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  forgek::ImportStats stats;
  std::string err;
  forgek::ImportStore(ScratchStore(), text, "fuzz.json", &stats, &err);
  return 0;
}
