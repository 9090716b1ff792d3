#!/usr/bin/env bash
# One entry point for a fresh machine: installs what is missing, builds, then tests or runs forgek.
#   scripts/dev.sh test                     build and run every test (GPU tests skip without a GPU)
#   scripts/dev.sh forgek ARGS...           build and run forgek with ARGS
#   scripts/dev.sh sanitize                 build the asan preset (clang, ASan+UBSan), run the CPU tests
#                                           under it, then each fuzz target for a bounded time
# CI=true selects the warnings-as-errors preset.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

jobs=${FORGEK_JOBS:-$(nproc)}
if [[ "${1:-}" == "sanitize" ]]; then
  FORGEK_SANITIZE_DEPS=1 "$root/scripts/install-deps.sh"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan -j "$jobs"
  exec "$root/scripts/fuzz.sh"
fi

"$root/scripts/install-deps.sh"

preset=dev
[[ "${CI:-}" == "true" ]] && preset=ci

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
    echo "usage: scripts/dev.sh test | scripts/dev.sh sanitize | scripts/dev.sh forgek ARGS..." >&2
    exit 2
    ;;
esac
