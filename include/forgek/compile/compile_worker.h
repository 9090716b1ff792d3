// The compile child: every NVRTC compile runs in a process of its own (the forgek binary, or a
// test binary, started as `<binary> compile-worker`), confined and limited, so that what a
// candidate makes the compiler do (read a file, crash, run for ever) stays inside it.
#pragma once

namespace forgek {

// The first argument that starts the compile child.
inline constexpr const char* kCompileWorkerCommand = "compile-worker";

// True when argv asks for the compile child; a binary's main checks this first of all, before
// it installs signal handlers, opens logs or touches the GPU.
bool IsCompileWorkerInvocation(int argc, char** argv);

// Reads one request on stdin, confines itself (Landlock; resource limits), compiles, writes the
// reply on stdout. Returns the process's exit code.
int RunCompileWorker();

}  // namespace forgek
