#!/usr/bin/env bash
# Runs forgek over an operator list on a Slurm cluster: one array task per operator, each with its
# own store (no store is shared between hosts), then one dependent job merges the stores.
#
#   scripts/slurm-batch.sh OUT_DIR OP [OP...] [-- RUN_OPTIONS...]
#
# Each task runs `forgek --store OUT_DIR/stores/OP.db run --op OP RUN_OPTIONS` on one GPU and
# writes OUT_DIR/runs/OP.json; the merge job runs `forgek --store OUT_DIR/merged.db knowledge merge S`
# for every task's store S. Set SBATCH_ARGS for partition, account and time limits, and FORGEK for
# the binary (default: build/dev/forgek of this checkout, which every node must see).
set -euo pipefail

usage() { echo "usage: scripts/slurm-batch.sh OUT_DIR OP [OP...] [-- RUN_OPTIONS...]" >&2; exit 2; }
(($# >= 2)) || usage
out=$(realpath -m "$1"); shift
ops=()
while (($#)) && [[ $1 != "--" ]]; do ops+=("$1"); shift; done
[[ ${1:-} == "--" ]] && shift
run_options=("$@")
((${#ops[@]})) || usage
command -v sbatch >/dev/null || { echo "slurm-batch: sbatch not found: run this on a Slurm login node" >&2; exit 1; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
forgek=${FORGEK:-$root/build/dev/forgek}
[[ -x $forgek ]] || { echo "slurm-batch: $forgek is not built (scripts/dev.sh test builds it)" >&2; exit 1; }
mkdir -p "$out/stores" "$out/runs" "$out/logs"
printf '%s\n' "${ops[@]}" > "$out/ops.txt"
printf '%q ' "${run_options[@]}" > "$out/run_options.txt"

array_job=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name=forgek-run --gres=gpu:1 \
  --array=0-$((${#ops[@]} - 1)) --output="$out/logs/%a.log" \
  --wrap="op=\$(sed -n \"\$((SLURM_ARRAY_TASK_ID + 1))p\" '$out/ops.txt'); \
eval \"opts=(\$(cat '$out/run_options.txt'))\"; \
'$forgek' --store '$out/stores/'\$op.db --json run --op \$op \"\${opts[@]}\" > '$out/runs/'\$op.json")

merge_job=$(sbatch --parsable ${SBATCH_ARGS:-} --job-name=forgek-merge --dependency=afterany:"$array_job" \
  --output="$out/logs/merge.log" \
  --wrap="for s in '$out'/stores/*.db; do '$forgek' --store '$out/merged.db' knowledge merge \$s || exit 1; done")

echo "submitted: runs $array_job (${#ops[@]} tasks), merge $merge_job; results in $out" >&2
