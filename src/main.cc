// The forgek binary: the supervisor's command line, the GPU worker when run as `forgek worker`, and
// the compile child when run as `forgek compile-worker` (before anything else is set up).
#include <unistd.h>

#include <cstdio>

#include "forgek/cli/app.h"
#include "forgek/compile/compile_worker.h"

int main(int argc, char** argv) {
  if (forgek::IsCompileWorkerInvocation(argc, argv)) {
    int code = forgek::RunCompileWorker();
    std::fflush(stdout);
    _exit(code);  // no exit handlers: the child is confined and has nothing to tidy
  }
  return forgek::cli::RunCommandLine(argc, argv);
}
