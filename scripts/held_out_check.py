#!/usr/bin/env python3
"""The held-out check: an operator added by spec only (tests/held_out/OP: operator.json, golden,
reference and a seed whose block size is a domain) is validated, run from an empty store and must
seal (a single kernel or a dispatch) at least 1.0x the expert reference on every config; the seal
must then hold under `seal verify`.

  scripts/held_out_check.py --forgek build/device/forgek [--op logsumexp_rows_fp32] [--time 60]

No C++ is written for the operator: it lives in a temporary operators folder of its own.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def forgek(binary, root, store, *args):
    cmd = [binary, "--operators", root, "--store", store, *args]
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(proc.stderr[-4000:])
    return proc


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--forgek", required=True)
    p.add_argument("--op", default="logsumexp_rows_fp32")
    p.add_argument("--time", default="60", help="wall-time budget of the run's search")
    p.add_argument("--seed", default="1")
    p.add_argument("--keep", help="copy the temporary folder (operators, store) here")
    a = p.parse_args()
    src = os.path.join(HERE, "..", "tests", "held_out", a.op)
    tmp = tempfile.mkdtemp(prefix="forgek-held-out-")
    root = os.path.join(tmp, "operators")
    shutil.copytree(src, os.path.join(root, a.op))
    store = os.path.join(tmp, "store.db")
    failures = []
    try:
        v = forgek(a.forgek, root, store, "ops", "validate", a.op)
        print(v.stdout, end="")
        if v.returncode != 0:
            raise SystemExit(f"held-out: ops validate {a.op} failed (exit {v.returncode})")
        r = forgek(a.forgek, root, store, "--json", "run", "--op", a.op, "--iterations", "0", "--time", a.time,
                   "--seed", a.seed)
        if r.returncode != 0:
            raise SystemExit(f"held-out: run exited {r.returncode}")
        s = json.loads(r.stdout)
        print(f"attempts {s['attempts']}, stopped by {s['stop_reason']}; {s['seal_reason']}")
        served = {d["config"]: d["kernel"] for d in s.get("dispatch", [])}
        for c in s["configs"]:
            kernel = served.get(c["config"], s.get("sealed_kernel", ""))
            print(f"  {c['config']:<14} expert {c['expert_us']:10.2f} us  sealed {c['best_us']:10.2f} us  "
                  f"{c['speedup_vs_expert']:.3f}x  {kernel}  ({c.get('verdict', '')})")
            # A config the incumbent (here the expert reference) keeps is the reference itself.
            if c["speedup_vs_expert"] < 1.0 and not kernel.startswith("incumbent"):
                failures.append(f"{c['config']}: {c['speedup_vs_expert']:.3f}x the reference")
        if not s.get("seal"):
            failures.append("nothing sealed: " + s["seal_reason"])
        else:
            kind = "a dispatch" if served else "one kernel"
            print(f"sealed {kind}: {s['seal']}")
            ver = forgek(a.forgek, root, store, "seal", "verify", s["seal"])
            print(ver.stdout, end="")
            if ver.returncode != 0:
                failures.append(f"seal verify exited {ver.returncode}")
    finally:
        if a.keep:
            shutil.copytree(tmp, a.keep, dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("held-out: FAIL: " + "; ".join(failures))
        return 1
    print("held-out: pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
