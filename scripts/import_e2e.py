#!/usr/bin/env python3
"""Imported problems end to end on the GPU: each KernelBench problem and FlashInfer-Bench definition
of tests/fixtures/import/ (with its seed from tests/fixtures/import/seeds/) imported into a folder
of its own, then `forgek run` from an empty store; the run's PyTorch yardstick gives, per config,
the kernel that serves it (the seal, else the seed) beside torch eager and torch.compile.

Usage: scripts/import_e2e.py --forgek BIN [--only a,b] [--time S] [--iterations N] [--keep DIR]
                             [--markdown FILE] [--json FILE] [--scripted-port P]

With --scripted-port, softmax_rows is run a second time with the LLM agent against
scripts/scripted_model.py (loopback, its softmax kernels renamed to the imported operator's names):
the builtin agent and the scripted model, each from an empty store.
Prints the table (markdown) on stdout. Exit 0 when every problem imported and ran and its yardstick
was measured, 1 otherwise, 2 on a usage error. Standard library only.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIX = os.path.join(ROOT, "tests", "fixtures", "import")

# name, kind, file, seed, extra import arguments. Sizes are cut from the benchmarks' own (KernelBench
# level 1 softmax is 4096 x 393216: 6 GiB per tensor) to what one device call can check and time.
# A seed of None: the one forgek writes for an elementwise problem (forgek_torch_helper.py seed).
PROBLEMS = [
    ("relu_rows", "kernelbench", "kernelbench/level1_19_ReLU.py", None, ["--sizes", "batch_size=4096,dim=16384"]),
    ("softmax_rows", "kernelbench", "kernelbench/level1_23_Softmax.py", "softmax_seed.cu",
     ["--sizes", "batch_size=4096,dim=4096"]),
    ("cumsum_rows", "kernelbench", "kernelbench/level1_89_cumsum.py", "cumsum_seed.cu", ["--sizes", "batch_size=1024"]),
    ("rmsnorm_features", "kernelbench", "kernelbench/level1_36_RMSNorm_.py", "rmsnorm_seed.cu",
     ["--sizes", "batch_size=8,dim1=128,dim2=128"]),
    ("linear_sub_mul_relu", "kernelbench", "kernelbench/level2_9_Matmul_Subtract_Multiply_ReLU.py",
     "linear_sub_mul_relu_seed.cu", ["--sizes", "batch_size=256,in_features=4096,out_features=4096"]),
    ("gemm_n4096_k4096", "flashinfer", "flashinfer/gemm_n4096_k4096.json", "gemm_nt_f16_seed.cu", ["--sizes", "M=256"]),
    ("fused_add_rmsnorm_h4096", "flashinfer", "flashinfer/fused_add_rmsnorm_h4096.json",
     "fused_add_rmsnorm_bf16_seed.cu", ["--sizes", "batch_size=256"]),
    ("rmsnorm_f16", "flashinfer", "flashinfer/rmsnorm_d4096.json", "rmsnorm_f16_seed.cu",
     ["--sizes", "batch_size=64", "--scalars", "eps=1e-6"]),
]


# Problems the scripted model serves (scripts/scripted_model.py --rename): softmax_fp32's names as
# the imported operator has them.
SCRIPTED = {"softmax_rows": "x=x,y=out,M=batch_size,N=dim"}


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return 124, e.stdout or "", "timed out after %d s" % timeout


def fmt_us(x):
    return "%.2f" % x if isinstance(x, (int, float)) and x > 0 else "-"


def fmt_x(x):
    return "%.3fx" % x if isinstance(x, (int, float)) and x > 0 else "-"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--forgek", required=True)
    ap.add_argument("--only", default="", help="comma-separated problem names")
    ap.add_argument("--time", type=int, default=60, help="seconds per run (forgek run --time)")
    ap.add_argument("--iterations", type=int, default=12)
    ap.add_argument("--keep", default="", help="keep the operator folders, stores and logs here")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--scripted-port", type=int, default=0)
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n]
    unknown = sorted(set(names) - {p[0] for p in PROBLEMS})
    if unknown:
        print("import_e2e: unknown problem(s) %s (of %s)" % (", ".join(unknown), ", ".join(p[0] for p in PROBLEMS)),
              file=sys.stderr)
        return 2
    work = a.keep or tempfile.mkdtemp(prefix="forgek-import-e2e-")
    os.makedirs(work, exist_ok=True)
    ops = os.path.join(work, "ops")
    os.makedirs(ops, exist_ok=True)
    results, ok = [], True
    for name, kind, path, seed, extra in PROBLEMS:
        if names and name not in names:
            continue
        shutil.rmtree(os.path.join(ops, name), ignore_errors=True)
        row = {"problem": name, "kind": kind, "file": path, "import_args": extra, "seed": seed or "written by forgek"}
        seed_path = os.path.join(FIX, "seeds", seed) if seed else os.path.join(work, name + "_seed.cu")
        if seed is None:
            sizes = extra[extra.index("--sizes") + 1:][:1] if "--sizes" in extra else []
            rc, out, err = run([os.environ.get("FORGEK_PYTHON", sys.executable), os.path.join(HERE, "forgek_torch_helper.py"),
                                "seed", os.path.join(FIX, path)] + (["--sizes"] + sizes if sizes else []), 300)
            try:
                with open(seed_path, "w") as f:
                    f.write(json.loads(out)["seed"])
            except (ValueError, KeyError):
                row["error"] = "forgek wrote no seed (exit %d): %s" % (rc, (out or err).strip()[-400:])
                results.append(row)
                ok = False
                continue
        rc, out, err = run([a.forgek, "--operators", ops, "ops", "import", kind, os.path.join(FIX, path), "--seed",
                            seed_path, "--name", name] + extra, 300)
        if rc != 0:
            row["error"] = "import failed (exit %d): %s" % (rc, (err or out).strip()[-400:])
            results.append(row)
            ok = False
            print("import_e2e: %s: %s" % (name, row["error"]), file=sys.stderr)
            continue
        agents = ["builtin"] + (["scripted"] if a.scripted_port and name in SCRIPTED else [])
        for agent in agents:
            row_a = dict(row, agent=agent)
            ok = run_one(a, ops, work, name, agent, row_a) and ok
            results.append(row_a)
            print("import_e2e: %s (%s): %s" % (name, agent, row_a.get("error") or row_a["seal_reason"][:200]),
                  file=sys.stderr)

    lines = ["| problem | agent | config | forgek kernel | forgek us | torch eager us | torch.compile us | vs eager | vs compile | seal |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---|"]
    for r in results:
        if "error" in r:
            lines.append("| %s | %s | - | - | - | - | - | - | - | %s |" % (r["problem"], r.get("agent", "-"),
                                                                      r["error"][:120].replace("|", "/")))
            continue
        for c in r["configs"]:
            comp = c["compile"]
            comp_cell = fmt_us(comp.get("median_us")) if "median_us" in comp else "(%s)" % comp.get("error", "?")[:60]
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["problem"], r["agent"], c["config"], c["kernel"] or "-", fmt_us(c["kernel_us"]),
                fmt_us(c["eager"].get("median_us")), comp_cell.replace("|", "/"), fmt_x(c["speedup_vs_eager"]),
                fmt_x(c["speedup_vs_compile"]), (r["seal"] or "none")[:12]))
    table = "\n".join(lines)
    print(table)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "time_per_run_s": a.time, "iterations": a.iterations, "problems": results}
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0 if ok else 1


def run_one(a, ops, work, name, agent, row):
    """One `forgek run` of an imported problem from an empty store; fills `row`; False on a failure."""
    store = os.path.join(work, "%s-%s.db" % (name, agent))
    for f in (store, store + "-wal", store + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    cmd = [a.forgek, "--operators", ops, "--store", store, "--json", "run", "--op", name, "--time", str(a.time),
           "--iterations", str(a.iterations)]
    server = None
    env = None
    if agent == "scripted":
        server = subprocess.Popen([sys.executable, os.path.join(HERE, "scripted_model.py"), "--port",
                                   str(a.scripted_port), "--rename", SCRIPTED[name]],
                                  stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "scripted-model.log"), "w"))
        time.sleep(1)
        cmd += ["--agent", "llm", "--model", "scripted", "--base-url", "http://127.0.0.1:%d/v1" % a.scripted_port,
                "--batch", "1"]
        env = dict(os.environ, OPENAI_API_KEY="dummy")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.time + 600, env=env)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, e.stdout or "", "timed out"
    finally:
        if server:
            server.kill()
    with open(os.path.join(work, "%s-%s.log" % (name, agent)), "w") as f:
        f.write(err if isinstance(err, str) else "")
    try:
        summary = json.loads(out)
    except ValueError:
        summary = None
    if rc != 0 or not isinstance(summary, dict):
        row["error"] = "run failed (exit %d): %s" % (rc, (err if isinstance(err, str) else "").strip()[-600:])
        return False
    ok = True
    row["seal"] = summary.get("seal", "")
    row["seal_reason"] = summary.get("seal_reason", "")
    row["attempts"] = summary.get("attempts", 0)
    row["configs"] = []
    for c in summary.get("configs", []):
        t = c.get("torch") or {}
        if not t.get("eager", {}).get("median_us"):
            ok = False
        row["configs"].append({"config": c.get("config"), "kernel": t.get("kernel", ""),
                               "kernel_us": t.get("kernel_us", 0), "eager": t.get("eager", {}),
                               "compile": t.get("compile", {}), "speedup_vs_eager": t.get("speedup_vs_eager", 0),
                               "speedup_vs_compile": t.get("speedup_vs_compile", 0),
                               "torch_version": t.get("torch_version", "")})
    if not row["configs"]:
        ok = False
    return ok


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
