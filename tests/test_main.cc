// The test binaries' main: GoogleTest, or the compile child when the compile service starts this
// binary as `<test binary> compile-worker` (the tests compile through the same child as forgek).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "forgek/compile/compile_worker.h"

int main(int argc, char** argv) {
  if (forgek::IsCompileWorkerInvocation(argc, argv)) {
    int code = forgek::RunCompileWorker();
    std::fflush(stdout);
    _exit(code);
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
