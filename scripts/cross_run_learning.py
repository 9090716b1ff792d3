#!/usr/bin/env python3
"""Measures cross-run learning: does a store from an earlier run make a fresh run on another
config reach the earlier run's best speedup in fewer attempts than an empty store?

  scripts/cross_run_learning.py --forgek build/dev/forgek --op softmax_fp32 \
      --learn-config 65536x1024 --test-config 16384x4096 --iterations 12 --seeds 1 2 3

Run 1 learns on --learn-config with an empty store. Then, for each seed, a run on --test-config
starts once from a copy of run 1's store and once from an empty store; the table gives the
attempts each needed to reach run 1's best speedup (vs the expert reference). Runs use --config,
so nothing is sealed and every run measures against the expert reference.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(forgek, store, op, config, iterations, seed, extra_env):
    cmd = [forgek, "--store", store, "--json", "run", "--no-torch", "--op", op, "--config", config,
           "--iterations", str(iterations), "--seed", str(seed)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **extra_env})
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-3000:])
        raise SystemExit(f"cross-run: {' '.join(cmd)} exited {proc.returncode}")
    return json.loads(proc.stdout)


def attempts_to_reach(summary, target):
    for i, best in enumerate(summary["best_so_far"]):
        if best >= target:
            return i + 1
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--forgek", default="build/dev/forgek")
    ap.add_argument("--op", default="softmax_fp32")
    ap.add_argument("--learn-config", required=True)
    ap.add_argument("--test-config", required=True)
    ap.add_argument("--iterations", type=int, default=12, help="attempts of each test run")
    ap.add_argument("--learn-iterations", type=int, help="attempts of run 1 (default: --iterations)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="forgek-xrun-")
    env = {"XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", os.path.join(work, "cache"))}
    learned = os.path.join(work, "learned.db")
    learn_iterations = args.learn_iterations or args.iterations
    first = run(args.forgek, learned, args.op, args.learn_config, learn_iterations, 1, env)
    target = first["best"]["speedup"]
    rows = []
    for seed in args.seeds:
        with_store = os.path.join(work, f"with-{seed}.db")
        shutil.copy(learned, with_store)
        for wal in ("-wal", "-shm"):
            if os.path.exists(learned + wal):
                shutil.copy(learned + wal, with_store + wal)
        empty = os.path.join(work, f"empty-{seed}.db")
        a = run(args.forgek, with_store, args.op, args.test_config, args.iterations, seed, env)
        b = run(args.forgek, empty, args.op, args.test_config, args.iterations, seed, env)
        rows.append({"seed": seed, "with_store": attempts_to_reach(a, target),
                     "empty_store": attempts_to_reach(b, target),
                     "with_store_best": a["best"]["speedup"], "empty_store_best": b["best"]["speedup"]})
    # "never" counts as one attempt past the budget; a seed meets the goal when the run with the
    # store needed at most half the attempts of the run without it.
    cost = lambda n: args.iterations + 1 if n is None else n
    met = sum(1 for r in rows if r["with_store"] is not None and 2 * r["with_store"] <= cost(r["empty_store"]))
    result = {"op": args.op, "learn_config": args.learn_config, "test_config": args.test_config,
              "iterations": args.iterations, "learn_iterations": learn_iterations, "target_speedup": target,
              "run1_attempts_to_best": first["best"]["iteration"] + 1, "rows": rows,
              "median_with_store": statistics.median([cost(r["with_store"]) for r in rows]),
              "median_empty_store": statistics.median([cost(r["empty_store"]) for r in rows]),
              "seeds_at_most_half": met}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"run 1: {args.op} {args.learn_config}, best {target:.3f}x vs expert "
          f"(attempt {result['run1_attempts_to_best']} of {learn_iterations})")
    print(f"{'seed':>4} {'with store':>11} {'empty store':>12} {'best with':>10} {'best empty':>11}")
    fmt = lambda n: "never" if n is None else str(n)
    for r in rows:
        print(f"{r['seed']:>4} {fmt(r['with_store']):>11} {fmt(r['empty_store']):>12} "
              f"{r['with_store_best']:>9.3f}x {r['empty_store_best']:>10.3f}x")
    print(f"median attempts ('never' = {args.iterations + 1}): with store {result['median_with_store']}, "
          f"empty {result['median_empty_store']}; with store at most half of empty on {met} of {len(rows)} seeds")


if __name__ == "__main__":
    main()
