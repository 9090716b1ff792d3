#!/usr/bin/env bash
# One entry point for a fresh machine: installs what is missing, builds, then tests or runs forgek.
#   scripts/dev.sh test                     build and run every test (GPU tests skip without a GPU)
#   scripts/dev.sh forgek ARGS...           build and run forgek with ARGS
# The preset: `dev` (gcc, RelWithDebInfo); CI=true selects `ci` (clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, warnings as errors, the fuzz targets built beside the tests), so that
# one build checks everything; FORGEK_PRESET names another (`release`: the GPU machine's binaries).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

jobs=${FORGEK_JOBS:-$(nproc)}
preset=${FORGEK_PRESET:-dev}
[[ -z "${FORGEK_PRESET:-}" && "${CI:-}" == "true" ]] && preset=ci

# Testing needs a little more than running: the browser that renders the HTML report.
test_deps=0
[[ "${1:-}" == "test" ]] && test_deps=1
if [[ "$preset" == "ci" ]]; then
  FORGEK_TEST_DEPS=$test_deps FORGEK_SANITIZE_DEPS=1 "$root/scripts/install-deps.sh"
else
  FORGEK_TEST_DEPS=$test_deps "$root/scripts/install-deps.sh"
fi

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"

case "${1:-}" in
  test)
    shift
    ctest --preset "$preset" -j "$jobs" "$@"
    ;;
  forgek)
    shift
    exec "$root/build/$preset/forgek" "$@"
    ;;
  *)
    echo "usage: scripts/dev.sh test | scripts/dev.sh forgek ARGS..." >&2
    exit 2
    ;;
esac
