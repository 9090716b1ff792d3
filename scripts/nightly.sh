#!/usr/bin/env bash
# Nightly re-validation of the seals of a store on this GPU: `forgek regress` with its reports in
# one folder. Exits 3 if any seal regressed, 1 on other failures (see `forgek regress --help`).
#   scripts/nightly.sh [--store FILE] [--arch sm90] [--report DIR] [-- MORE REGRESS OPTIONS]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
forgek=${FORGEK:-$root/build/dev/forgek}
global=() arch=sm90 report="" extra=()
while (($#)); do
  case "$1" in
    --store) global+=(--store "$2"); shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: scripts/nightly.sh [--store FILE] [--arch sm90|sm100] [--report DIR] [-- REGRESS OPTIONS]" >&2; exit 2 ;;
  esac
done
[[ -x "$forgek" ]] || { echo "nightly: $forgek not built (scripts/dev.sh test builds it, or set FORGEK)" >&2; exit 1; }
args=()
if [[ -n "$report" ]]; then
  mkdir -p "$report" || exit 1
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  args+=(--junit "$report/regress-$stamp.xml" --json-file "$report/regress-$stamp.json")
fi
exec "$forgek" "${global[@]}" --arch "$arch" regress "${args[@]}" "${extra[@]}"
