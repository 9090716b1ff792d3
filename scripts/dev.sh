#!/usr/bin/env bash
# One entry point for a fresh machine: installs what is missing, builds, then tests or runs forgek.
#   scripts/dev.sh test                     build and run every test (GPU tests skip without a GPU)
#   scripts/dev.sh forgek ARGS...           build and run forgek with ARGS
# CI=true selects the warnings-as-errors preset.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

"$root/scripts/install-deps.sh"

preset=dev
[[ "${CI:-}" == "true" ]] && preset=ci
jobs=${FORGEK_JOBS:-$(nproc)}

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
