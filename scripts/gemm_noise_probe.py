#!/usr/bin/env python3
"""Where the noise of a large GEMM's timing comes from (issue 24): repeated `forgek eval`s of one
candidate against cuBLAS, with the card's SM clock, power and clock-event reasons read by
`nvidia-smi` every 100 ms beside them. It only reads the card (no clocks or limits are set).

  scripts/gemm_noise_probe.py --forgek build/device/forgek [--op gemm_bf16] [--kernel FAMILY.cu]
      [--params P=1,...] [--config 8192^3 ...] [--repeats 4] [--markdown FILE] [--json FILE]

Per eval and config: both medians with their noise and sample counts, the speedup, and what the
card did meanwhile (SM clock min / median / max, power median / max, the event reasons seen), and
the speedup's noise both ways: the two medians' noises in quadrature, and the spread of the
paired rounds' ratios (what the verdict uses).
Standard library only."""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

QUERY = "timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--forgek", required=True)
    p.add_argument("--op", default="gemm_bf16")
    p.add_argument("--kernel", default="operators/gemm_bf16/families/wgmma_persistent.cu")
    p.add_argument("--params", default="")
    p.add_argument("--config", action="append", default=[])
    p.add_argument("--repeats", type=int, default=4)
    p.add_argument("--markdown")
    p.add_argument("--json")
    return p.parse_args()


def start_logger(path):
    """nvidia-smi every 100 ms into `path`; None where nvidia-smi is missing."""
    try:
        return subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits", "-lms", "100"],
                                stdout=open(path, "w"), stderr=subprocess.DEVNULL)
    except OSError as e:
        print(f"gemm_noise_probe: nvidia-smi not run: {e}", file=sys.stderr)
        return None


def read_samples(path):
    """(host seconds, SM MHz, watts, reasons) per line; lines that do not parse are skipped."""
    out = []
    for line in open(path, errors="replace"):
        parts = [x.strip() for x in line.split(",")]
        if len(parts) < 5:
            continue
        try:
            stamp = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S"))
            frac = float("0." + parts[0].split(".")[1]) if "." in parts[0] else 0.0
            out.append((stamp + frac, float(parts[1]), float(parts[2]), parts[4]))
        except ValueError:
            continue
    return out


def during(samples, start, end):
    inside = [s for s in samples if start <= s[0] <= end]
    if not inside:
        return {}
    mhz = [s[1] for s in inside]
    watts = [s[2] for s in inside]
    return {"sm_mhz_min": min(mhz), "sm_mhz_median": statistics.median(mhz), "sm_mhz_max": max(mhz),
            "watts_median": statistics.median(watts), "watts_max": max(watts),
            "reasons": sorted({s[3] for s in inside})}


def main():
    a = parse_args()
    log = tempfile.NamedTemporaryFile(prefix="clocks-", suffix=".csv", delete=False).name
    logger = start_logger(log)
    time.sleep(0.5)
    runs = []
    try:
        for r in range(a.repeats):
            cmd = [a.forgek, "--json", "eval", "--op", a.op, "--kernel", a.kernel, "--seeds", "1"]
            if a.params:
                cmd += ["--params", a.params]
            for c in a.config:
                cmd += ["--config", c]
            start = time.time()
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            end = time.time()
            if p.returncode != 0:
                print(f"gemm_noise_probe: eval {r + 1} failed (exit {p.returncode}): {p.stderr[-2000:]}", file=sys.stderr)
                return 1
            runs.append({"repeat": r + 1, "start": start, "end": end, "result": json.loads(p.stdout)})
    finally:
        if logger:
            time.sleep(0.3)
            logger.terminate()
            logger.wait()
    samples = read_samples(log) if logger else []
    rows = []
    for run in runs:
        card = during(samples, run["start"], run["end"])
        for c in run["result"].get("configs", []):
            cand, inc, paired = c.get("candidate", {}), c.get("incumbent", {}), c.get("paired", {})
            if not cand.get("median_us") or not inc.get("median_us"):
                continue
            rows.append({"repeat": run["repeat"], "config": c["config"],
                         "candidate_us": cand["median_us"], "candidate_noise": cand.get("rel_noise", 0),
                         "candidate_samples": cand.get("samples", 0), "candidate_min_us": cand.get("min_us", 0),
                         "reference_us": inc["median_us"], "reference_noise": inc.get("rel_noise", 0),
                         "reference_samples": inc.get("samples", 0), "reference_min_us": inc.get("min_us", 0),
                         "speedup": inc["median_us"] / cand["median_us"],
                         "quadrature_noise": (cand.get("rel_noise", 0) ** 2 + inc.get("rel_noise", 0) ** 2) ** 0.5,
                         "paired_noise": paired.get("rel_noise"), "pairs": paired.get("pairs", 0),
                         "wall_s": run["end"] - run["start"], **card})
    lines = ["| repeat | config | candidate us (noise, n, min) | cuBLAS us (noise, n, min) | speedup | noise: quadrature / paired rounds | SM MHz min/med/max | W med/max | event reasons |",
             "|---|---|---|---|---:|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['repeat']} | {r['config']} | {r['candidate_us']:.2f} ({100 * r['candidate_noise']:.1f}%, {r['candidate_samples']}, "
            f"{r['candidate_min_us']:.2f}) | {r['reference_us']:.2f} ({100 * r['reference_noise']:.1f}%, "
            f"{r['reference_samples']}, {r['reference_min_us']:.2f}) | {r['speedup']:.3f}x | "
            f"{100 * r['quadrature_noise']:.2f}% / "
            f"{'-' if r['paired_noise'] is None else '%.2f%% (%d)' % (100 * r['paired_noise'], r['pairs'])} | "
            f"{r.get('sm_mhz_min', 0):.0f}/{r.get('sm_mhz_median', 0):.0f}/{r.get('sm_mhz_max', 0):.0f} | "
            f"{r.get('watts_median', 0):.0f}/{r.get('watts_max', 0):.0f} | {' '.join(r.get('reasons', []))} |")
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        open(a.markdown, "w").write(text + "\n")
    if a.json:
        json.dump({"rows": rows, "clock_samples": len(samples)}, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
