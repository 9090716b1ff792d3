// The forgek binary: the supervisor's command line, and the GPU worker when run as `forgek worker`.
#include "cli/app.h"

int main(int argc, char** argv) { return forgek::cli::RunCommandLine(argc, argv); }
