#!/usr/bin/env bash
# The GPU machine's test run: the `gpu`-labelled tests plus a few timed commands, then a short table.
#   scripts/device-test.sh [BIN_DIR]      BIN_DIR holds forgek and forgek_tests (default build/device)
# Run from the repository root (operators/ and tests/worker/planted/ are read from there).
# To add a step, add one line to STEPS below: "name|command". Output of every step goes to
# $OUT (or ./device-test-out) as NAME.log; the table shows pass/fail/skip and seconds.
# ONLY="gpu-tests ops-bench" runs just the named steps (a device call is limited to 10 minutes);
# BENCH_OPS="gemm_bf16 topk_rows_fp32" limits ops-bench; XRUN_* choose the cross-run experiment;
# LEARN_{GEMM,SOFTMAX}_{ITERATIONS,TIME} size the two runs of the learn-gemm / learn-softmax steps.
# REGRESS_T / REGRESS_OPS size the regress step's batch; COMPARE_TIMEOUT / COMPARE_STORE bound and
# feed the compare-torch step; IMPORT_T (seconds per run), IMPORT_ONLY and IMPORT_TIMEOUT size import-e2e.
set -uo pipefail
bin=${1:-build/device}
out=device-test-out  # everything lands here; packed into $OUT/device-test.tgz when $OUT is set
mkdir -p "$out"
export FORGEK_BIN="$PWD/$bin/forgek"
# Test binaries link cpp-httplib (the LLM tests' loopback server); its library travels in BIN_DIR.
export LD_LIBRARY_PATH="$PWD/$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FORGEK_OPERATORS="$PWD/operators"
export FORGEK_SOURCE_DIR="$PWD"  # the tests' fixtures (tests/*/data) in this copy of the tree
export XDG_CACHE_HOME="$PWD/$out/cache"
# The PyTorch golden's interpreter: the first python3 (PATH's, then /usr/bin's) that imports torch;
# forgek picks the same by itself, this only says which and pins it for every step.
if [[ -z ${FORGEK_PYTHON:-} ]]; then
  for py in "$(command -v python3)" /usr/bin/python3; do
    if [[ -x $py ]] && "$py" -c 'import torch' 2>/dev/null; then
      export FORGEK_PYTHON="$py"
      break
    fi
  done
fi
echo "device-test: FORGEK_PYTHON=${FORGEK_PYTHON:-none (no python3 with torch: PyTorch goldens will not run)}" >&2
# Compiles are confined with Landlock; on a kernel without it they run unconfined here, said once.
if ! python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).syscall(444, None, 0, 1) > 0 else 1)'; then
  echo "device-test: this kernel has no Landlock: compiles run unconfined (FORGEK_UNCONFINED_COMPILE=1)" >&2
  export FORGEK_UNCONFINED_COMPILE=1
fi

# The steps below measure forgek itself: their runs skip the PyTorch yardstick (a torch.compile per
# config) unless YARDSTICK=1; import-e2e, eval --torch and the scoreboard keep it.
NT=--no-torch
[[ ${YARDSTICK:-0} == 1 ]] && NT=
store="$PWD/$out/store.db"
F="$bin/forgek --store $store"
# verify_seals STORE PREFIX: `seal verify` and `seal export` (to $out/PREFIX-ID) of every seal in STORE.
verify_seals() {
  local ids id
  ids=$("$bin/forgek" --store "$1" --json seal list |
    python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.load(sys.stdin)))') || return 1
  if [[ -z $ids ]]; then
    echo "no seal in $1: nothing to verify or export"
    return 0
  fi
  for id in $ids; do
    "$bin/forgek" --store "$1" seal verify "$id" || return 1
    rm -rf "$out/$2-$id"
    "$bin/forgek" --store "$1" seal export "$id" "$out/$2-$id" && ls -l "$out/$2-$id" || return 1
  done
}
# learn_twice OP ITERATIONS TIME_S: from an empty store of its own ($out/learn-OP.db), two runs of OP,
# then what the store learned: `knowledge list` as a table, as JSON, and `knowledge show` of every
# validated or refuted decision (the comparisons behind it). Files: $out/learn-OP-*.{txt,json}.
learn_twice() {
  local db="$PWD/$out/learn-$1.db" pre="$out/learn-$1" rc=0 id
  rm -f "$db"*
  for r in 1 2; do
    timeout $(( $3 + 90 )) "$bin/forgek" --store "$db" --json run $NT --op "$1" --iterations "$2" --time "$3" \
      --seed "$r" >"$pre-run$r.json" || rc=1
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("run", sys.argv[2], j["best"]["speedup"], j["seal_reason"]); [print("  ", l) for l in j["decisions_learned"][:10] + j.get("knowledge_notes", [])]' "$pre-run$r.json" "$r" || rc=1
  done
  "$bin/forgek" --store "$db" knowledge list --op "$1" | tee "$pre-list.txt" || rc=1
  "$bin/forgek" --store "$db" --json knowledge list --op "$1" >"$pre-list.json" || rc=1
  for id in $(python3 -c 'import json,sys; print(" ".join(d["id"][:12] for d in json.load(open(sys.argv[1]))["decisions"] if d["verdict"] != "hypothesis"))' "$pre-list.json"); do
    "$bin/forgek" --store "$db" knowledge show "$id" >>"$pre-show.txt" || rc=1
  done
  # What the issue checks: no mechanism of the run's kernels refuted as a whole.
  python3 -c 'import json,sys; bad=[d["text"] for d in json.load(open(sys.argv[1]))["decisions"] if d["verdict"]=="refuted" and not d["setting"]]; print("whole mechanisms refuted:", bad or "none"); sys.exit(1 if bad else 0)' "$pre-list.json" || rc=1
  return $rc
}
# stage_times OP: two 3-attempt runs of OP from an empty store of their own ($out/stages.db); the
# second finds the incumbent's analysis in the store. Prints each run's stages; fails when the second
# spends 2 s or more before its first attempt (stages "start" + "incumbent analysis").
stage_times() {
  local db="$PWD/$out/stages.db" r
  rm -f "$db"*
  for r in 1 2; do
    timeout 120 "$bin/forgek" --store "$db" --json run $NT --op "$1" --iterations 3 --seed "$r" >"$out/stages-run$r.json" || return 1
  done
  python3 - "$out/stages-run1.json" "$out/stages-run2.json" <<'PY'
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
for i, r in enumerate(runs, 1):
    print(f"run {i}: wall {r['wall_s']:.2f} s;", ", ".join(f"{s['name']} {s['seconds']:.2f} s" + (f" ({s['note']})" if s['note'] else "") for s in r["stages"]))
before = sum(s["seconds"] for s in runs[1]["stages"] if s["name"] in ("start", "incumbent analysis"))
print(f"run 2 before its first attempt: {before:.2f} s (limit 2 s)")
sys.exit(0 if before < 2.0 else 1)
PY
}
export -f verify_seals learn_twice stage_times
export bin out NT

# Each step is bounded so that one hang cannot eat the call; the most important steps come first.
STEPS=(
  "probe|$bin/forgek worker --probe"
  "doctor|$F doctor"
  "gpu-tests|timeout 420 $bin/forgek_tests --gtest_filter='${GPU_FILTER:-Gpu*}' --gtest_color=no"
  # A run's fixed cost (issue 21): the second run of an operator reuses the incumbent's analysis.
  "stage-times|stage_times softmax_fp32"
  # Tests that need the full toolkit (cuobjdump) rather than a GPU; they skip on the CI machine.
  "toolkit-tests|timeout 120 $bin/forgek_tests --gtest_filter='SassClassifier.*' --gtest_color=no"
  "ops-bench|timeout 240 $F --json ops bench ${BENCH_OPS:-} --seeds 2"
  "eval-softmax-seed|$bin/forgek --json eval --op softmax_fp32 --kernel operators/softmax_fp32/seed.cu"
  "eval-softmax-seed-cached|$bin/forgek --json eval --op softmax_fp32 --kernel operators/softmax_fp32/seed.cu"
  "profile-gemm-reference|timeout 120 $F profile --op gemm_bf16 --reference"
  "knowledge-gemm|$F knowledge list --op gemm_bf16"
  # The sealing flow: run 1 starts from an empty store (incumbent: the expert reference) and seals
  # when a candidate wins; run 2 then starts from that seal; the seal is re-verified and exported.
  "run-gemm-1|timeout 240 $F --json run $NT --op gemm_bf16 --iterations ${GEMM_ITERATIONS:-40} --time ${GEMM_TIME:-150} --seed 1"
  "run-gemm-2|timeout 240 $F --json run $NT --op gemm_bf16 --iterations ${GEMM_ITERATIONS:-40} --time ${GEMM_TIME:-150} --seed 2"
  "run-softmax-1|timeout 200 $F --json run $NT --op softmax_fp32 --iterations ${SOFTMAX_ITERATIONS:-24} --seed 1"
  "run-softmax-2|timeout 200 $F --json run $NT --op softmax_fp32 --iterations ${SOFTMAX_ITERATIONS:-24} --seed 2"
  # The same from a store of its own (empty: no other operator's or run's attempts), then a second
  # run there, which starts from run 1's seal if it sealed; FRESH_SEED picks run 1's seed.
  "run-softmax-fresh-1|rm -f $out/fresh.db*; timeout 200 $bin/forgek --store $PWD/$out/fresh.db --json run $NT --op softmax_fp32 --iterations ${SOFTMAX_ITERATIONS:-100} --seed ${FRESH_SEED:-3}"
  "run-softmax-fresh-2|timeout 200 $bin/forgek --store $PWD/$out/fresh.db --json run $NT --op softmax_fp32 --iterations 40 --seed 11"
  # What forgek learns (docs/KNOWLEDGE.md): two runs from an empty store, then `knowledge list`.
  "learn-gemm|learn_twice gemm_bf16 ${LEARN_GEMM_ITERATIONS:-40} ${LEARN_GEMM_TIME:-200}"
  "learn-softmax|learn_twice softmax_fp32 ${LEARN_SOFTMAX_ITERATIONS:-40} ${LEARN_SOFTMAX_TIME:-150}"
  # The LLM agent evolving softmax against a scripted model (scripts/scripted_model.py: no network,
  # python3 standard library only), from an empty store: the summary shows the lineage and costs.
  "llm-softmax-scripted|rm -f $out/llm.db*; (python3 scripts/scripted_model.py --port ${LLM_PORT:-8765} >$out/scripted-model.log 2>&1 & echo \$! >$out/scripted-model.pid); sleep 1; OPENAI_API_KEY=dummy timeout 300 $bin/forgek --store $PWD/$out/llm.db run $NT --op softmax_fp32 --agent llm --model scripted --base-url http://127.0.0.1:${LLM_PORT:-8765}/v1 --iterations ${LLM_ITERATIONS:-16} --batch 1 --seed 1; rc=\$?; kill \$(cat $out/scripted-model.pid); exit \$rc"
  # A gemm_bf16 dispatch (docs/seal-format.md): two runs from an empty store of its own, then every
  # seal verified (fallback on every config, each kernel on 3 shapes outside the suite) and exported.
  "gemm-dispatch|rm -f $out/dispatch.db*; for r in 1 2; do timeout 300 $bin/forgek --store $PWD/$out/dispatch.db --json run $NT --op gemm_bf16 --time ${DISPATCH_TIME:-120} --seed \$r >$out/dispatch-run\$r.json || exit 1; python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s[\"seal_reason\"]); [print(\" \", d[\"config\"], \"->\", d[\"kernel\"], \"|\", d[\"reason\"]) for d in s[\"dispatch\"]]; [print(\" \", l) for l in s[\"outside_shapes\"]]' $out/dispatch-run\$r.json; done; verify_seals $PWD/$out/dispatch.db export-dispatch"
  # knowledge import of an export whose decisions rest on attempts alone: none survives without evidence.
  "import-seed|rm -f $out/import.db*; $bin/forgek --store $PWD/$out/import.db knowledge import tests/fuzz/corpus/knowledge_import/small_export.json && $bin/forgek --store $PWD/$out/import.db knowledge list"
  # The nightly job (forgek regress): seals of 6 operators from an empty store, every one must hold
  # (exit 0, JUnit read back); then a spin planted in one seal's kernel must be caught (exit 3, a
  # <failure> per config of that operator only); the store keeps both checks (scripts/regress_check.py).
  "regress|rm -f $out/regress.db*; timeout 560 python3 scripts/regress_check.py --forgek $bin/forgek --store $PWD/$out/regress.db --time-per-op ${REGRESS_T:-25} ${REGRESS_OPS:+--ops $REGRESS_OPS} --keep $PWD/$out/regress"
  # forgek report over the regress step's store: the HTML (inline SVG plots) and markdown come back
  # under $out to be looked at; the JSON must name every operator sealed there.
  "report|$bin/forgek --store $PWD/$out/regress.db report --format html -o $out/report.html && $bin/forgek --store $PWD/$out/regress.db report -o $out/report.md && $bin/forgek --store $PWD/$out/regress.db --json report | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[\"format\"], len(r.get(\"operators\", [])), \"operators\")'"
  "compare-torch|timeout ${COMPARE_TIMEOUT:-540} python3 scripts/compare_torch.py --forgek $bin/forgek --store ${COMPARE_STORE:-$PWD/$out/regress.db} --out $out/compare-torch.json --markdown $out/compare-torch.md"
  # gemv_bf16's family at the bandwidth limit: its default instance evaluated against cuBLAS, then
  # a run from an empty store of its own (GEMV_TIME seconds).
  "gemv|rm -f $out/gemv.db*; $bin/forgek --json eval --op gemv_bf16 --kernel operators/gemv_bf16/families/column_tiles_split_k.cu && timeout $(( ${GEMV_TIME:-90} + 120 )) $bin/forgek --store $PWD/$out/gemv.db run $NT --op gemv_bf16 --time ${GEMV_TIME:-90} --seed 1"
  # Imported problems end to end (docs/importing.md): each KernelBench problem and FlashInfer-Bench
  # definition of tests/fixtures/import/ with its seed, run from an empty store; the table of the
  # kernel serving each config vs torch eager vs torch.compile (the run's PyTorch yardstick).
  "import-e2e|timeout ${IMPORT_TIMEOUT:-560} python3 scripts/import_e2e.py --forgek $bin/forgek --time ${IMPORT_T:-30} ${IMPORT_ONLY:+--only $IMPORT_ONLY} --keep $PWD/$out/import-e2e --markdown $out/import-e2e.md --json $out/import-e2e.json --scripted-port ${LLM_PORT:-8765}"
  # Family instances waiting on a GPU, each against its reference (scripts/device-evals.sh;
  # EVAL_GROUPS picks among epilogue gelu gemm grouped conv radix attention fp8).
  "evals|SWEEP_FLAGS='--seeds 1' FORGEK=$bin/forgek timeout ${EVALS_TIMEOUT:-500} bash scripts/device-evals.sh ${EVAL_GROUPS:-}"
  # Where a large GEMM's timing noise comes from (issue 24): repeated evals of wgmma_persistent against
  # cuBLAS with the SM clock, power and clock-event reasons read beside them (nvidia-smi, read only).
  "gemm-noise|timeout 400 python3 scripts/gemm_noise_probe.py --forgek $bin/forgek --params ${NOISE_PARAMS:-STAGES=3,GROUP_M=16,SBN=64,S_STAGES=8,S_BK=64,S_CONS=1,S_HINT=1,EPI=1} --config 8192^3 --config 4096^3 --repeats ${NOISE_REPEATS:-4} --markdown $out/gemm-noise.md --json $out/gemm-noise.json"
  # --time holds a whole run (issue 25): one operator from an empty store of its own, its stages
  # printed (TIME_OP, default radix_sort_pairs_u32, whose candidates take tens of seconds to profile).
  "time-bound|rm -f $out/time.db*; timeout 300 $bin/forgek --store $PWD/$out/time.db --json run $NT --op ${TIME_OP:-radix_sort_pairs_u32} --time ${TIME_T:-30} --seed 1 >$out/time-bound.json; rc=\$?; python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(\"wall %.1f s, --time %s\" % (s[\"wall_s\"], sys.argv[2])); [print(\" \", st[\"name\"], \"%.1f s\" % st[\"seconds\"], st.get(\"note\", \"\")) for st in s[\"stages\"]]' $out/time-bound.json ${TIME_T:-30}; exit \$rc"
  "seals|$F seal list"
  "seal-verify|verify_seals $store export"
  "seal-verify-fresh|verify_seals $PWD/$out/fresh.db export-fresh"
  # Cross-run learning: run 1 learns on one skinny gemm config, then fresh runs on the other start
  # from its store or from an empty one (scripts/cross_run_learning.py).
  "cross-run-learning|timeout ${XRUN_TIMEOUT:-300} python3 scripts/cross_run_learning.py --forgek $bin/forgek --op ${XRUN_OP:-gemm_bf16} --learn-config ${XRUN_LEARN:-M64_N8192_K8192} --test-config ${XRUN_TEST:-M64_N14336_K4096} --learn-iterations ${XRUN_LEARN_ITERATIONS:-24} --iterations ${XRUN_ITERATIONS:-16} --seeds ${XRUN_SEEDS:-1 2 3 4}"
  "batch-1gpu|timeout 200 $bin/forgek --store $PWD/$out/batch1.db batch $NT ${BATCH_OPS:-rmsnorm_bf16 layernorm_bf16 gelu_tanh_bf16 silu_and_mul_bf16 softmax_fp32 reduce_sum_rows_fp32 transpose_bf16 embedding_gather_bf16} --gpus 1 --iterations 4 --log-dir $PWD/$out/batch1"
  "batch-all-gpus|timeout 200 $bin/forgek --store $PWD/$out/batch2.db batch $NT ${BATCH_OPS:-rmsnorm_bf16 layernorm_bf16 gelu_tanh_bf16 silu_and_mul_bf16 softmax_fp32 reduce_sum_rows_fp32 transpose_bf16 embedding_gather_bf16} --gpus all --iterations 4 --log-dir $PWD/$out/batch2"
  # An operator added by spec only (tests/held_out/logsumexp_rows_fp32: a seed whose block size is a
  # domain) from an empty store: it must seal (one kernel or a dispatch) >= 1.0x the reference on
  # every config, and the seal must hold under `seal verify` (scripts/held_out_check.py).
  "held-out|timeout 300 python3 scripts/held_out_check.py --forgek $bin/forgek --time ${HELD_OUT_TIME:-60} --keep $PWD/$out/held-out"
  # The suite scoreboard: every operator from an empty store, the total (30 x SCOREBOARD_T) split
  # by headroom (SOL % of docs/ops-bench-h200.json); per config expert time, sealed time, speedup,
  # SOL %, kernel(s) and mechanisms in scoreboard.md / scoreboard.json. Sized for 8 GPUs.
  # SCOREBOARD_OPS="rmsnorm_bf16 rope_bf16 ..." runs those operators instead of --all; SCOREBOARD_FLAGS adds
  # batch flags (--no-torch: no PyTorch yardstick per run). What the store learned: scoreboard-knowledge.txt.
  "scoreboard|rm -f $out/scoreboard.db*; timeout ${SCOREBOARD_TIMEOUT:-540} $bin/forgek --store $PWD/$out/scoreboard.db batch ${SCOREBOARD_OPS:---all} --gpus all --time-per-op ${SCOREBOARD_T:-40} --min-time ${SCOREBOARD_MIN:-10} --headroom-from docs/ops-bench-h200.json --log-dir $PWD/$out/scoreboard --scoreboard-md $PWD/$out/scoreboard.md --scoreboard-json $PWD/$out/scoreboard.json ${SCOREBOARD_FLAGS:-}; cat $out/scoreboard.md; $bin/forgek --store $PWD/$out/scoreboard.db knowledge list > $out/scoreboard-knowledge.txt"
)

rows=()
for step in "${STEPS[@]}"; do
  name=${step%%|*}
  cmd=${step#*|}
  [[ -n ${ONLY:-} && " $ONLY " != *" $name "* ]] && continue
  start=$(date +%s.%N)
  bash -c "$cmd" >"$out/$name.log" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')
  status=pass
  [[ $rc -ne 0 ]] && status="FAIL($rc)"
  rows+=("$(printf '%-28s %-9s %7.2f' "$name" "$status" "$secs")")
  # Individual gtest results, one row each.
  if [[ $name == gpu-tests || $name == toolkit-tests ]]; then
    while read -r line; do
      t=$(sed -E 's/^\[ *([A-Z]+) *\] ([^ ]+) \(([0-9]+) ms\).*/\1 \2 \3/' <<<"$line")
      read -r res test ms <<<"$t"
      rows+=("$(printf '  %-52s %-9s %7.2f' "$test" "$res" "$(awk -v m="$ms" 'BEGIN{print m/1000}')")")
    done < <(grep -E '^\[ *(OK|FAILED|SKIPPED) *\] [A-Za-z0-9_]+\.[A-Za-z0-9_/]+ \([0-9]+ ms\)' "$out/$name.log")
  fi
done

echo "== device test $(date -u +%FT%TZ) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
printf '%s\n' "${rows[@]}"
echo "== measurements"
grep -h '^\[ \(peaks\|copy\|eval\|planted\|golden\|torch\|seed\|zeros\) ' "$out"/*.log 2>/dev/null | tail -40
for f in "$out"/learn-gemm.log "$out"/learn-softmax.log "$out"/eval-softmax-seed-cached.log "$out"/llm-softmax-scripted.log "$out"/cross-run-learning.log "$out"/batch-1gpu.log "$out"/batch-all-gpus.log; do
  [[ -f $f ]] && { echo "-- $(basename "$f")"; tail -c 1500 "$f"; echo; }
done
# The device tool returns at most 8 files: pack every log, summary and store into one.
if [[ -n ${OUT:-} ]]; then
  tar czf "$OUT/device-test.tgz" --exclude=cache --exclude=export -C "$out" . && echo "packed $out into \$OUT/device-test.tgz"
fi
