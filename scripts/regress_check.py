#!/usr/bin/env python3
"""The nightly regression job checked end to end on a GPU machine (python3 standard library only).

1. Seals of several operators from an empty store (`forgek batch`), unless --store already has them.
2. `forgek regress --junit --json-file`: every seal must hold (exit 0); the JUnit is read back with
   ElementTree and summarised.
3. A regression planted in a copy of the store: the stored source of one seal's kernel gets a spin
   of --spin-cycles at the start of every thread block. While the store keeps the sealed cubin,
   that binary is measured and the seal holds (exit 0); with the cubin removed, the edited source is
   rebuilt and `forgek regress` must exit 3, with a JUnit <failure> naming each config of that
   operator and no other failure.

Usage: scripts/regress_check.py --forgek BIN --store DB [--ops A B ...] [--time-per-op S] [--keep DIR]
Exit 0 when every check holds, 1 otherwise.
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET


def run(cmd, timeout):
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    sys.stdout.write(p.stdout[-4000:])
    sys.stdout.write(p.stderr[-3000:])
    return p.returncode


def junit_summary(path):
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites", root.tag
    failures = {}
    print(f"junit {os.path.basename(path)}: tests={root.get('tests')} failures={root.get('failures')} "
          f"errors={root.get('errors')} skipped={root.get('skipped')} time={root.get('time')}")
    for suite in root.findall("testsuite"):
        kinds = []
        for case in suite.findall("testcase"):
            for child in case:
                if child.tag in ("failure", "error", "skipped"):
                    kinds.append(f"{case.get('name')}:{child.tag}")
                    if child.tag in ("failure", "error"):
                        failures.setdefault(suite.get("name"), []).append((case.get("name"), child.get("message")))
        print(f"  {suite.get('name'):<26} tests={suite.get('tests')} failures={suite.get('failures')} "
              f"errors={suite.get('errors')} skipped={suite.get('skipped')} {' '.join(kinds)}")
    return root, failures


def plant_spin(source, cycles):
    """The source with a spin at the start of every __global__ function's body."""
    out, pos, planted = [], 0, 0
    # A kernel definition: `__global__` opening a line (after `extern "C"` or a template header).
    for m in re.finditer(r'(?m)^(?:extern "C"\s+)?(?:template\s*<[^>]*>\s*)?__global__[^{;]*\{', source):
        out.append(source[pos:m.end()])
        out.append(f" {{ const long long forgek_t0 = clock64(); while (clock64() - forgek_t0 < {cycles}LL) {{ }} }}")
        pos = m.end()
        planted += 1
    out.append(source[pos:])
    return "".join(out), planted


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--forgek", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--ops", nargs="+", default=["rmsnorm_bf16", "layernorm_bf16", "silu_and_mul_bf16",
                                                 "gelu_tanh_bf16", "rope_bf16", "embedding_gather_bf16"])
    ap.add_argument("--time-per-op", type=int, default=25)
    ap.add_argument("--spin-cycles", type=int, default=200000)
    ap.add_argument("--keep", default=".")
    a = ap.parse_args()
    os.makedirs(a.keep, exist_ok=True)
    ok = True

    seals = json.loads(subprocess.run([a.forgek, "--store", a.store, "--json", "seal", "list"],
                                      stdout=subprocess.PIPE, text=True).stdout or "[]") if os.path.exists(a.store) else []
    if len({s["operator"] for s in seals}) < 5:
        run([a.forgek, "--store", a.store, "batch", *a.ops, "--gpus", "1", "--no-torch", "--time-per-op", str(a.time_per_op),
             "--log-dir", os.path.join(a.keep, "batch")], timeout=60 * len(a.ops) + 120)
        seals = json.loads(subprocess.run([a.forgek, "--store", a.store, "--json", "seal", "list"],
                                          stdout=subprocess.PIPE, text=True).stdout or "[]")
    operators = sorted({s["operator"] for s in seals})
    print(f"seals of {len(operators)} operators: {' '.join(operators)}")
    if len(operators) < 5:
        print("FAIL: fewer than 5 operators sealed")
        ok = False

    # 1. Every seal holds.
    xml1, json1 = os.path.join(a.keep, "regress-clean.xml"), os.path.join(a.keep, "regress-clean.json")
    rc = run([a.forgek, "--store", a.store, "regress", "--junit", xml1, "--json-file", json1], timeout=420)
    print(f"regress (clean): exit {rc}")
    if rc != 0:
        ok = False
        print("FAIL: expected exit 0")
    if os.path.exists(xml1):
        junit_summary(xml1)
    else:
        ok = False
        print("FAIL: no JUnit written")

    # 2. A regression planted in a copy of the store: one seal's kernel source gets a spin. The
    #    store keeps the sealed cubin, which is what regress measures: the seal still holds. With
    #    that cubin removed the edited source is rebuilt and measured: the regression is caught.
    planted_store = os.path.join(a.keep, "planted.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(a.store + suffix):
            shutil.copy(a.store + suffix, planted_store + suffix)
    target = next(s for s in seals if s["operator"] == operators[0])
    db = sqlite3.connect(planted_store)
    cand, sealed_sha = db.execute("SELECT candidate_hash, cubin_sha256 FROM seals WHERE id = ?",
                                  (target["id"],)).fetchone()
    source, = db.execute("SELECT source FROM candidates WHERE hash = ?", (cand,)).fetchone()
    slow, planted = plant_spin(source, a.spin_cycles)
    db.execute("UPDATE candidates SET source = ? WHERE hash = ?", (slow, cand))
    kept = db.execute("SELECT count(*) FROM cubins WHERE sha256 = ?", (sealed_sha,)).fetchone()[0]
    db.commit()
    db.close()
    print(f"planted a spin of {a.spin_cycles} cycles in {planted} kernel(s) of seal {target['id'][:12]} "
          f"({target['operator']}); the store keeps its sealed cubin: {'yes' if kept else 'NO'}")
    if not kept:
        ok = False
        print("FAIL: the seal's cubin is not in the store")
    xml_kept = os.path.join(a.keep, "regress-source-edited.xml")
    rc = run([a.forgek, "--store", planted_store, "regress", "--ops", target["operator"], "--junit", xml_kept],
             timeout=300)
    print(f"regress (source edited, sealed cubin kept): exit {rc}")
    if rc != 0:
        ok = False
        print("FAIL: the kept sealed cubin is what regress measures: expected exit 0")
    db = sqlite3.connect(planted_store)
    db.execute("DELETE FROM cubins WHERE sha256 = ?", (sealed_sha,))
    db.commit()
    db.close()
    xml2, json2 = os.path.join(a.keep, "regress-planted.xml"), os.path.join(a.keep, "regress-planted.json")
    rc = run([a.forgek, "--store", planted_store, "regress", "--ops", target["operator"], operators[1],
              "--junit", xml2, "--json-file", json2], timeout=300)
    print(f"regress (planted, cubin removed): exit {rc}")
    if rc != 3:
        ok = False
        print("FAIL: expected exit 3")
    if os.path.exists(xml2):
        _, failures = junit_summary(xml2)
        named = failures.get(target["operator"], [])
        for case, message in named:
            print(f"  failure {target['operator']} / {case}: {message}")
        if not named or any(case not in message for case, message in named if case != "beyond the suite"):
            ok = False
            print("FAIL: the planted operator's failures must name their config")
        if set(failures) - {target["operator"]}:
            ok = False
            print(f"FAIL: failures outside the planted operator: {sorted(set(failures) - {target['operator']})}")
    else:
        ok = False
        print("FAIL: no JUnit written")

    # 3. The history: the three checks are in the store.
    db = sqlite3.connect(planted_store)
    rows = db.execute("SELECT check_id, result, count(*) FROM seal_checks GROUP BY check_id, result "
                      "ORDER BY min(rowid)").fetchall()
    db.close()
    print("history of the planted store (check, result, rows):")
    for r in rows:
        print("  ", *r)
    if len({r[0] for r in rows}) < 3:
        ok = False
        print("FAIL: the store should hold the three checks")
    print("regress check:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
