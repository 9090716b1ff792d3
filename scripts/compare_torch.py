#!/usr/bin/env python3
"""Side by side on the GPU: every sealed operator of a forgek store against PyTorch.

For each operator with a seal in the store (`forgek --json seal list`, the newest seal per
operator), the seal is exported (`forgek seal export`) and, per config of its launch.json:
  1. inputs are drawn with torch on the GPU from the operator's init specs (operator.json), one
     seed, the same tensors for every contender;
  2. the truth is the operator's PyTorch implementation (scripts/torch_ops.py) on inputs widened to
     float64, outputs as float32 and inouts rounded once to their dtype, as forgek's golden kernels
     write them;
  3. the seal's cubin is loaded and launched with the CUDA driver API alone (ctypes on libcuda:
     cuModuleLoadData, cuTensorMapEncodeTiled, cuLaunchKernelEx with the cluster), its outputs
     poisoned before, and checked against the truth under the operator's tolerance exactly as
     forgek's worker checks (rel_l2 and max_abs; exact for integer or `exact` outputs, with
     max_mismatch_fraction); a dispatch seal runs the kernel its dispatch.json rule picks;
  4. PyTorch runs eagerly and under torch.compile (default mode) on the native dtypes; its own
     agreement with the truth is reported in the note;
  5. where the seal exports as a PyTorch op (`forgek seal export --lang torch`: the package builds
     the generated C library that embeds the same cubins), torch.ops.forgek.<op> is called on the
     same inputs, checked the same way and timed with the others ("op"), so the library a user
     calls is measured beside the bare launch; the same op captured in a CUDA graph and replayed
     ("op graph": its GPU time without the host's per-call work, as a program that replays graphs,
     e.g. a decode loop, pays it; a call under 20 us is captured as many times as last ~200 us and
     the replay's time divided, forgek's worker's rule, so that it compares with verify);
     `forgek --json seal verify` re-times the seal with forgek's worker ("verify", its CUDA-graph
     method) for the same configs;
  6. seal, op, eager and compile are timed interleaved (A B C, then C B A, ...): before every call a
     buffer of max(256 MiB, 2 x L2) is written (cold L2), one CUDA event pair brackets the call,
     and the median of --reps calls is reported with p10/p90 and the relative noise
     (p90 - p10) / 2 / median, the statistics of forgek's worker. Unlike the worker, short
     kernels are not replayed in CUDA graphs: every contender is timed launch by launch.

Prints a table (op, config, seal us, op us, op graph us, verify us, eager us, compile us, speedups, correct)
and writes
--out JSON ({"format": "forgek-compare-torch/1", ...}) and --markdown (the table for
docs/PERFORMANCE.md). Speedups are torch's time over the seal's: above 1 the seal is faster.

Usage: scripts/compare_torch.py --forgek BIN --store DB [--ops a,b] [--out FILE.json]
                                [--markdown FILE.md] [--reps N] [--no-torch-op] [--no-op-graph] [--no-verify]
Exit 0 when every compared config is correct, 1 on a mismatch or a failure, 2 on a usage error.
Needs torch with CUDA and libcuda.so.1 (the GPU machine); --help and the helpers work without them.
"""
import argparse
import ast
import ctypes
import datetime
import importlib
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import torch_ops  # noqa: E402  (standard library only at import time)

FORMAT = "forgek-compare-torch/1"
FLOAT_DTYPES = ("f64", "f32", "f16", "bf16", "e4m3", "e5m2")
TORCH_DTYPES = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16",
                "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "i8": "int8", "u8": "uint8",
                "i32": "int32", "u32": "int32", "i64": "int64"}  # u32: int32 holding the same bits
DTYPE_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1, "i8": 1, "u8": 1,
               "i32": 4, "u32": 4, "i64": 8}
ROLES = ("input", "output", "inout")
ARG_KINDS = ("tensor", "workspace", "tensor_map", "i32", "i64", "f32")
SCALAR_DTYPES = ("f32", "i32", "i64")


class UsageError(Exception):
    """A command line that means nothing (exit 2)."""


class CompareError(Exception):
    """A file, field or command that is not as expected; the message names it (exit 1)."""


class FatalGpuError(Exception):
    """A sticky CUDA error: nothing more can run in this process."""


# ----------------------------------------------------------------------------------------------
# Files: launch.json, dispatch.json, operator.json, expressions


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise CompareError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise CompareError(f"{path}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None


def _get(obj, key, kinds, where, default=None, required=True):
    """obj[key] checked against `kinds` (a type or tuple); errors say where and which field."""
    if not isinstance(obj, dict):
        raise CompareError(f"{where}: expected an object")
    if key not in obj:
        if required:
            raise CompareError(f"{where}: field \"{key}\" is missing")
        return default
    value = obj[key]
    if isinstance(value, bool) and kinds is not bool or not isinstance(value, kinds):
        raise CompareError(f"{where}: field \"{key}\" has the wrong type ({type(value).__name__})")
    return value


def _int_list(obj, key, where, length=None):
    value = _get(obj, key, list, where)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value) or (length and len(value) != length):
        raise CompareError(f"{where}: field \"{key}\" must be a list of {length or 'some'} integers, got {value}")
    return value


def _parse_tensor(t, where):
    role, dtype = _get(t, "role", str, where), _get(t, "dtype", str, where)
    if role not in ROLES:
        raise CompareError(f"{where}: field \"role\" is {role!r}, expected one of {', '.join(ROLES)}")
    if dtype not in DTYPE_BYTES:
        raise CompareError(f"{where}: field \"dtype\" is {dtype!r}, expected one of {', '.join(DTYPE_BYTES)}")
    return {"name": _get(t, "name", str, where), "role": role, "dtype": dtype, "shape": _int_list(t, "shape", where)}


def _parse_arg(a, where):
    kind = _get(a, "kind", str, where)
    if kind not in ARG_KINDS:
        raise CompareError(f"{where}: field \"kind\" is {kind!r}, expected one of {', '.join(ARG_KINDS)}")
    arg = {"kind": kind, "name": _get(a, "name", str, where)}
    if kind in ("i32", "i64"):
        arg["value"] = _get(a, "value", int, where)
    elif kind == "f32":
        arg["value"] = float(_get(a, "value", (int, float), where))
    return arg


def _parse_launch_entry(entry, where):
    return {"kernel": _get(entry, "kernel", str, where),
            "grid": _int_list(entry, "grid", where, 3),
            "block": _int_list(entry, "block", where, 3),
            "cluster": _int_list(entry, "cluster", where, 3),
            "smem": _get(entry, "dynamic_smem_bytes", int, where),
            "args": [_parse_arg(a, f"{where}.args[{i}]") for i, a in enumerate(_get(entry, "args", list, where))]}


def _parse_config(c, where):
    values = _get(c, "values", dict, where)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values.values()):
        raise CompareError(f"{where}: field \"values\" must map names to integers")
    scalars = []
    for i, s in enumerate(_get(c, "scalars", list, where)):
        at = f"{where}.scalars[{i}]"
        dtype = _get(s, "dtype", str, at)
        if dtype not in SCALAR_DTYPES:
            raise CompareError(f"{at}: field \"dtype\" is {dtype!r}, expected one of {', '.join(SCALAR_DTYPES)}")
        scalars.append({"name": _get(s, "name", str, at), "dtype": dtype, "value": _get(s, "value", (int, float), at)})
    workspaces = [{"name": _get(w, "name", str, f"{where}.workspaces[{i}]"),
                   "bytes": _get(w, "bytes", int, f"{where}.workspaces[{i}]"),
                   "zero": _get(w, "zero", bool, f"{where}.workspaces[{i}]", False, required=False)}
                  for i, w in enumerate(_get(c, "workspaces", list, where))]
    maps = []
    for i, m in enumerate(_get(c, "tensor_maps", list, where)):
        at = f"{where}.tensor_maps[{i}]"
        maps.append({"name": _get(m, "name", str, at), "tensor": _get(m, "tensor", str, at),
                     "shape": _int_list(m, "shape", at) if m.get("shape") else [],
                     "box": _int_list(m, "box", at),
                     "swizzle": _get(m, "swizzle", str, at, "none", required=False),
                     "l2_promotion": _get(m, "l2_promotion", str, at, "none", required=False),
                     "oob_fill": _get(m, "oob_fill", str, at, "none", required=False)})
    return {"config": _get(c, "config", str, where), "values": values,
            "tensors": [_parse_tensor(t, f"{where}.tensors[{i}]")
                        for i, t in enumerate(_get(c, "tensors", list, where))],
            "scalars": scalars, "workspaces": workspaces, "tensor_maps": maps,
            "launches": [_parse_launch_entry(e, f"{where}.launches[{i}]")
                         for i, e in enumerate(_get(c, "launches", list, where))]}


def parse_launch(path):
    """launch.json of an export (docs/seal-format.md), checked field by field."""
    doc = load_json(path)
    fmt = _get(doc, "format", str, path)
    if fmt != "forgek-seal-launch/1":
        raise CompareError(f"{path}: field \"format\" is {fmt!r}, expected \"forgek-seal-launch/1\"")
    configs = [_parse_config(c, f"{path}: configs[{i}]") for i, c in enumerate(_get(doc, "configs", list, path))]
    refused = []  # a dispatch kernel's configs that its manifest refuses
    for i, r in enumerate(_get(doc, "refused", list, path, [], required=False)):
        at = f"{path}: refused[{i}]"
        refused.append({"config": _get(r, "config", str, at), "values": _get(r, "values", dict, at),
                        "why": _get(r, "why", str, at, "", required=False)})
    return {"operator": _get(doc, "operator", str, path), "params": _get(doc, "params", dict, path),
            "configs": configs, "refused": refused}


def parse_dispatch(path):
    """dispatch.json of a dispatch seal's export: kernels, table, fallback."""
    doc = load_json(path)
    fmt = _get(doc, "format", str, path)
    if fmt != "forgek-seal-dispatch/1":
        raise CompareError(f"{path}: field \"format\" is {fmt!r}, expected \"forgek-seal-dispatch/1\"")
    kernels = {}
    for i, k in enumerate(_get(doc, "kernels", list, path)):
        at = f"{path}: kernels[{i}]"
        index = _get(k, "kernel", int, at)
        if "reference" in k:
            kernels[index] = {"reference": str(k["reference"])}
        else:
            kernels[index] = {"dir": _get(k, "dir", str, at), "label": k.get("label", "")}
    table = []
    for i, row in enumerate(_get(doc, "table", list, path)):
        at = f"{path}: table[{i}]"
        values = row.get("values") if isinstance(row, dict) else None
        table.append({"config": _get(row, "config", str, at), "values": values if isinstance(values, dict) else None,
                      "kernel": _get(row, "kernel", int, at), "why": row.get("why", "")})
    return {"kernels": kernels, "table": table, "fallback": _get(doc, "fallback", int, path)}


def find_config(launch, config_name, values):
    """The config of a parsed launch.json with these values (else this name), or None."""
    for c in launch["configs"]:
        if c["values"] == values:
            return c
    for c in launch["configs"]:
        if c["config"] == config_name:
            return c
    return None


def pick_kernel(export_dir, dispatch, config_name, values):
    """Which kernel serves a config, by the one rule of docs/seal-format.md: the table row whose
    values equal the config's; else the fallback where it accepts the shape (forgek resolved the
    config into that kernel's launch.json, constraints included); else the expert reference.
    Returns {"kind": "kernel", "index", "dir", "why"} or {"kind": "reference", "index", "why"}."""
    def entry(index, why):
        k = dispatch["kernels"].get(index)
        if k is None:
            raise CompareError(f"{os.path.join(export_dir, 'dispatch.json')}: the table names kernel {index}, "
                               f"which \"kernels\" does not list")
        if "reference" in k:
            return {"kind": "reference", "index": index, "why": f"{why}: the expert reference ({k['reference']})"}
        return {"kind": "kernel", "index": index, "dir": os.path.join(export_dir, k["dir"]), "why": why}

    for row in dispatch["table"]:
        if row["values"] == values or (row["values"] is None and row["config"] == config_name):
            return entry(row["kernel"], f"table row {row['config']}")
    fb = dispatch["fallback"]
    if fb >= 0:
        k = dispatch["kernels"].get(fb)
        if k is not None and "dir" in k:
            launch = parse_launch(os.path.join(export_dir, k["dir"], "launch.json"))
            if find_config(launch, config_name, values) is not None:
                return entry(fb, "fallback")
        elif k is not None:
            return entry(fb, "fallback")
    return {"kind": "reference", "index": -1, "why": "no table row and no fallback accepts it: the expert reference"}


def load_operator(operators_dir, name):
    """operator.json of `name`: tensors (with init), scalars, tolerance, params."""
    path = os.path.join(operators_dir, name, "operator.json")
    doc = load_json(path)
    tol = _get(doc, "tolerance", dict, path)
    return {"path": path, "name": _get(doc, "name", str, path), "params": _get(doc, "params", list, path),
            "tensors": {t["name"]: t for t in _get(doc, "tensors", list, path) if isinstance(t, dict) and "name" in t},
            "scalars": _get(doc, "scalars", list, path, [], required=False),
            "tolerance": {"rel_l2": float(tol.get("rel_l2", 0) or 0), "max_abs": float(tol.get("max_abs", 0) or 0),
                          "exact": bool(tol.get("exact", False)), "check": tol.get("check", "elementwise"),
                          "max_mismatch_fraction": float(tol.get("max_mismatch_fraction", 0) or 0)}}


_FUNCS = {"min": lambda *a: min(a), "max": lambda *a: max(a), "ceil_div": lambda a, b: -((-a) // b),
          "pow2": lambda a: 1 << a, "log2": lambda a: a.bit_length() - 1}


def _trunc_div(a, b):
    if b == 0:
        raise ZeroDivisionError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def eval_expr(text, names):
    """An integer expression of docs/expressions.md (+ - * / %, min, max, ceil_div, pow2, log2)
    over `names`; / truncates toward zero and % takes the dividend's sign."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    if isinstance(text, float) and text.is_integer():
        return int(text)

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise ValueError(f"unknown name '{node.id}'")
            return int(names[node.id])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                return _trunc_div(a, b)
            if isinstance(node.op, ast.Mod):
                return a - b * _trunc_div(a, b)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS \
                and not node.keywords:
            return _FUNCS[node.func.id](*[ev(a) for a in node.args])
        raise ValueError(f"unsupported expression element {ast.dump(node)[:40]}")

    try:
        return ev(ast.parse(str(text).strip(), mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError) as e:
        raise CompareError(f"expression '{text}': {e}") from None


def f32(value):
    """value rounded to the nearest fp32, as a kernel's f32 argument holds it."""
    return struct.unpack("<f", struct.pack("<f", float(value)))[0]


def config_scalars(config):
    """Config values and scalars by name, f32 scalars rounded to fp32 (what torch_ops gets as `s`)."""
    s = dict(config["values"])
    for sc in config["scalars"]:
        s[sc["name"]] = f32(sc["value"]) if sc["dtype"] == "f32" else int(sc["value"])
    return s


def make_partition(total, parts, multiple, minimum, rng):
    """Parts summing to `total`, each a multiple of `multiple` and at least `minimum`, the rest
    shared by a flat Dirichlet draw with largest remainders (forgek's MakePartition)."""
    multiple = max(1, multiple)
    min_units = -(-minimum // multiple)
    free = total // multiple - parts * min_units
    if parts < 1 or total % multiple or free < 0:
        raise CompareError(f"partition: {parts} parts of at least {min_units * multiple} (multiples of "
                           f"{multiple}) cannot sum to {total}")
    weights = [-math.log(1.0 - rng.random()) for _ in range(parts)]
    total_w = sum(weights)
    units, fractions, given = [], [], 0
    for w in weights:
        share = free * w / total_w
        u = min(free - given, int(math.floor(share)))
        units.append(u)
        fractions.append(share - u)
        given += u
    order = sorted(range(parts), key=lambda i: -fractions[i])
    k = 0
    while given < free:
        units[order[k % parts]] += 1
        given += 1
        k += 1
    return [(min_units + u) * multiple for u in units]


# ----------------------------------------------------------------------------------------------
# Statistics and the report


def percentile(values, p):
    """p-th percentile by linear interpolation between order statistics (forgek's Percentile)."""
    if not values:
        return 0.0
    v = sorted(values)
    pos = min(max(p, 0.0), 100.0) / 100.0 * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def summarize(us):
    """Median, p10, p90 and relative noise (p90 - p10) / 2 / median of samples in microseconds."""
    if not us:
        return None
    med = percentile(us, 50)
    p10, p90 = percentile(us, 10), percentile(us, 90)
    return {"median": med, "p10": p10, "p90": p90, "rel_noise": (p90 - p10) / 2 / med if med > 0 else 0.0,
            "samples": len(us)}


def config_row(config, seal=None, eager=None, compiled=None, correct=None, max_abs_err=None, rel_l2=None,
               note="", status="compared", kernel=None, op=None, op_graph=None, op_graph_launches=None):
    """One config's entry of the JSON: times (medians), spreads, correctness, speedups (torch / seal)."""
    def med(s):
        return s["median"] if s else None

    def spread(s):
        return {k: s[k] for k in ("p10", "p90", "rel_noise", "samples")} if s else None

    def speedup(other):
        return other["median"] / seal["median"] if seal and other and seal["median"] > 0 else None

    return {"config": config, "seal_us": med(seal), "eager_us": med(eager), "compile_us": med(compiled),
            "seal_spread": spread(seal), "eager_spread": spread(eager), "compile_spread": spread(compiled),
            "correct": correct, "max_abs_err": max_abs_err, "rel_l2": rel_l2,
            "speedup_vs_eager": speedup(eager), "speedup_vs_compile": speedup(compiled),
            "op_us": med(op), "op_spread": spread(op), "op_over_seal": speedup(op),
            "op_graph_us": med(op_graph), "op_graph_spread": spread(op_graph), "op_graph_over_seal": speedup(op_graph),
            "op_graph_launches": op_graph_launches,
            "verify_us": None, "verify_noise": None,
            "note": note, "status": status, "kernel": kernel}


def build_report(operators, device, torch_version, date, method):
    return {"format": FORMAT, "date": date, "device": device, "torch": torch_version, "method": method,
            "operators": operators}


def exit_code(report):
    """0 when every compared config is correct; 1 on a mismatch or a failure."""
    for op in report["operators"]:
        if op.get("status") == "failed":
            return 1
        for c in op["configs"]:
            if c["status"] == "failed" or c["correct"] is False:
                return 1
    return 0


def _fmt_us(v):
    return "—" if v is None else f"{v:.1f}" if v >= 100 else f"{v:.2f}"


def _fmt_x(v):
    return "—" if v is None else f"{v:.2f}x"


def _fmt_ok(c):
    if c["correct"] is None:
        return "—"
    return "yes" if c["correct"] else "NO"


def table_rows(report):
    """[op, config, seal us, op us, op graph us, verify us, eager us, compile us, seal/eager,
    seal/compile, correct] per config."""
    rows = []
    for op in report["operators"]:
        if not op["configs"]:
            rows.append([op["op"]] + ["—"] * (len(HEADER) - 1))
        for c in op["configs"]:
            rows.append([op["op"], c["config"], _fmt_us(c["seal_us"]), _fmt_us(c.get("op_us")),
                         _fmt_us(c.get("op_graph_us")), _fmt_us(c.get("verify_us")), _fmt_us(c["eager_us"]),
                         _fmt_us(c["compile_us"]),
                         _fmt_x(c["speedup_vs_eager"]), _fmt_x(c["speedup_vs_compile"]), _fmt_ok(c)])
    return rows


HEADER = ["op", "config", "seal us", "op us", "op graph us", "verify us", "eager us", "compile us",
          "speedup vs eager", "speedup vs compile", "correct"]


def _notes(report):
    out = []
    for op in report["operators"]:
        if op.get("note"):
            out.append(f"{op['op']}: {op['note']}")
        for c in op["configs"]:
            if c["note"]:
                out.append(f"{op['op']} {c['config']}: {c['note']}")
    return out


def text_table(report):
    rows = [HEADER] + table_rows(report)
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i]) for i, cell in enumerate(r))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + [f"  {n}" for n in _notes(report)]) + "\n"


def markdown_table(report):
    lines = [f"### Seals against PyTorch ({report['date'][:10]}, {report['device']}, torch {report['torch']})", "",
             report["method"], "",
             "| operator | config | seal µs | op µs | op graph µs | verify µs | eager µs | compile µs | seal vs eager "
             "| seal vs compile | correct |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in table_rows(report):
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in r) + " |")
    notes = _notes(report)
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# The CUDA driver API through ctypes (no cupy or cuda-python needed)

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
TENSOR_MAP_DTYPES = {"f64": 8, "f32": 7, "f16": 6, "bf16": 9, "i32": 3, "u32": 2, "i64": 5}  # else UINT8 (0)
SWIZZLES = {"none": 0, "": 0, "32B": 1, "64B": 2, "128B": 3}
L2_PROMOTIONS = {"none": 0, "": 0, "64B": 1, "128B": 2, "256B": 3}
STICKY_ERRORS = {"CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ASSERT",
                 "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_PC",
                 "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_ECC_UNCORRECTABLE"}


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class LaunchAttributeValue(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("clusterDim", Dim3), ("align", ctypes.c_uint64)]


class LaunchAttribute(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", LaunchAttributeValue)]


class LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("numAttrs", ctypes.c_uint)]


class TensorMapStorage:
    """128 bytes aligned to 128 (CUtensorMap), kept alive with the arguments that point at it."""

    def __init__(self):
        self._buf = ctypes.create_string_buffer(256)
        self.address = (ctypes.addressof(self._buf) + 127) & ~127

    def raw(self):
        return ctypes.string_at(self.address, 128)


def tensor_map_geometry(shape, box, elem_bytes):
    """Driver order (innermost first) dims, byte strides of the outer dims, box, element strides."""
    rank = len(shape)
    if not 1 <= rank <= 5 or len(box) != rank:
        raise CompareError(f"tensor map of rank {rank} with a box of rank {len(box)} (need equal ranks, 1 to 5)")
    dims = [shape[rank - 1 - i] for i in range(rank)]
    boxes = [box[rank - 1 - i] for i in range(rank)]
    strides, stride = [], elem_bytes
    for i in range(rank - 1):
        stride *= dims[i]
        strides.append(stride)
    return dims, strides, boxes, [1] * rank


def pack_args(args, pointers, maps):
    """ctypes storage for one launch's arguments and the void*[] that points at them.
    pointers: name -> device address (tensors and workspaces); maps: name -> TensorMapStorage."""
    storage = []
    for a in args:
        kind, name = a["kind"], a["name"]
        if kind in ("tensor", "workspace"):
            if name not in pointers:
                raise CompareError(f"argument {name}: no {kind} of that name")
            storage.append(ctypes.c_uint64(pointers[name]))
        elif kind == "tensor_map":
            if name not in maps:
                raise CompareError(f"argument {name}: no tensor map of that name")
            storage.append(maps[name])
        elif kind == "i32":
            storage.append(ctypes.c_int32(a["value"]))
        elif kind == "i64":
            storage.append(ctypes.c_int64(a["value"]))
        else:
            storage.append(ctypes.c_float(a["value"]))
    array = (ctypes.c_void_p * max(1, len(storage)))()
    for i, s in enumerate(storage):
        array[i] = s.address if isinstance(s, TensorMapStorage) else ctypes.addressof(s)
    return storage, array


def launch_config(launch, stream):
    """(CUlaunchConfig, its cluster attribute) for one parsed launch on `stream` (a handle)."""
    cfg = LaunchConfig(*launch["grid"], *launch["block"], launch["smem"], stream or None)
    attr = LaunchAttribute()
    c = launch["cluster"]
    if c[0] * c[1] * c[2] > 1:
        attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim = Dim3(*c)
        cfg.attrs, cfg.numAttrs = ctypes.pointer(attr), 1
    return cfg, attr


def arg_bytes(storage_item):
    """The bytes the driver copies for one packed argument (for tests and diagnostics)."""
    if isinstance(storage_item, TensorMapStorage):
        return storage_item.raw()
    return ctypes.string_at(ctypes.addressof(storage_item), ctypes.sizeof(storage_item))


class Driver:
    """The few driver entry points a seal export needs, from libcuda.so.1."""

    def __init__(self, device_ordinal):
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise CompareError(f"cannot load libcuda.so.1: {e}") from None
        P, V, I, U = ctypes.POINTER, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        sigs = {
            "cuInit": [U], "cuDeviceGet": [P(I), I], "cuCtxGetCurrent": [P(V)], "cuCtxSetCurrent": [V],
            "cuDevicePrimaryCtxRetain": [P(V), I], "cuGetErrorName": [I, P(ctypes.c_char_p)],
            "cuModuleLoadData": [P(V), ctypes.c_char_p], "cuModuleGetFunction": [P(V), V, ctypes.c_char_p],
            "cuModuleUnload": [V], "cuFuncSetAttribute": [V, I, I],
            "cuLaunchKernelEx": [P(LaunchConfig), V, P(V), P(V)],
            "cuTensorMapEncodeTiled": [V, I, ctypes.c_uint32, V, P(ctypes.c_uint64), P(ctypes.c_uint64),
                                       P(ctypes.c_uint32), P(ctypes.c_uint32), I, I, I, I],
        }
        self.missing = []
        for name, argtypes in sigs.items():
            fn = getattr(lib, name, None)
            if fn is None:
                self.missing.append(name)
                continue
            fn.argtypes, fn.restype = argtypes, I
            setattr(self, name, fn)
        for need in ("cuInit", "cuCtxGetCurrent", "cuModuleLoadData", "cuModuleGetFunction", "cuGetErrorName"):
            if need in self.missing:
                raise CompareError(f"libcuda.so.1 has no {need}")
        self.check(self.cuInit(0), "cuInit")
        ctx = ctypes.c_void_p()
        self.check(self.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:  # torch's runtime has not made its primary context current on this thread
            dev = ctypes.c_int()
            self.check(self.cuDeviceGet(ctypes.byref(dev), device_ordinal), "cuDeviceGet")
            self.check(self.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
            self.check(self.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    def error_name(self, rc):
        name = ctypes.c_char_p()
        if self.cuGetErrorName(rc, ctypes.byref(name)) == 0 and name.value:
            return name.value.decode()
        return f"CUresult {rc}"

    def check(self, rc, what):
        if rc != 0:
            name = self.error_name(rc)
            if name in STICKY_ERRORS:
                raise FatalGpuError(f"{what}: {name}")
            raise CompareError(f"{what}: {name}")

    def load_module(self, path):
        try:
            with open(path, "rb") as f:
                image = f.read()
        except OSError as e:
            raise CompareError(f"{path}: cannot read: {e.strerror}") from None
        module = ctypes.c_void_p()
        self.check(self.cuModuleLoadData(ctypes.byref(module), image), f"cuModuleLoadData({path})")
        return module

    def function(self, module, name):
        fn = ctypes.c_void_p()
        self.check(self.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()), f"cuModuleGetFunction({name})")
        return fn


# ----------------------------------------------------------------------------------------------
# GPU side: inputs, the truth, the seal, comparisons, timing (torch is imported by main only)

torch = None
DEVICE = "cuda"  # where inputs and results live (the CPU only in tests of the torch side)


def tdtype(dtype):
    return getattr(torch, TORCH_DTYPES[dtype])


def _nudge_zeros(x, dtype):
    """x (float32/64 draws) converted to dtype, values that round to zero moved to +-2^-6 (forgek's
    fill never hands a kernel zeros to ignore)."""
    if dtype in ("e4m3", "e5m2"):
        x = x.clamp(-448.0 if dtype == "e4m3" else -57344.0, 448.0 if dtype == "e4m3" else 57344.0)
    rounded = x.to(tdtype(dtype))
    zero = rounded.to(x.dtype) == 0
    if bool(zero.any()):
        x = torch.where(zero, torch.where(x < 0, -0.015625, 0.015625).to(x.dtype), x)
        rounded = x.to(tdtype(dtype))
    return rounded


def make_input(spec, init, values, seed, where):
    """One input drawn from its operator.json init (normal, uniform, int_range, probs, partition)."""
    shape, dtype = spec["shape"], spec["dtype"]
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    dist = init.get("dist", "normal")
    if dist == "partition":
        rng = random.Random(seed)
        parts = make_partition(eval_expr(init.get("total", 0), values), math.prod(shape),
                               eval_expr(init.get("multiple", 1), values), eval_expr(init.get("min", 0), values), rng)
        return torch.tensor(parts, dtype=tdtype(dtype), device=DEVICE).reshape(shape)
    if dist == "int_range":
        lo, hi = eval_expr(init.get("lo", 0), values), eval_expr(init.get("hi", 1), values)
        if dtype in FLOAT_DTYPES:
            return _nudge_zeros(torch.randint(lo, hi, shape, generator=gen, device=DEVICE).to(torch.float32), dtype)
        if dtype == "u32" or hi - 1 > torch.iinfo(tdtype(dtype)).max:
            x = torch.randint(lo, hi, shape, generator=gen, device=DEVICE, dtype=torch.int64)
            return torch.where(x >= 2 ** 31, x - 2 ** 32, x).to(torch.int32) if dtype == "u32" else x.to(tdtype(dtype))
        return torch.randint(lo, hi, shape, generator=gen, device=DEVICE, dtype=tdtype(dtype))
    wide = torch.float64 if dtype == "f64" else torch.float32
    if dist == "normal":
        x = torch.randn(shape, generator=gen, device=DEVICE, dtype=wide)
        x = x * float(init.get("std", 1)) + float(init.get("mean", 0))
    elif dist == "uniform":
        lo, hi = float(init.get("lo", 0)), float(init.get("hi", 1))
        x = torch.rand(shape, generator=gen, device=DEVICE, dtype=wide) * (hi - lo) + lo
    elif dist == "probs":
        e = -torch.log1p(-torch.rand(shape, generator=gen, device=DEVICE, dtype=torch.float64))
        x = (e / e.sum(dim=-1, keepdim=True)).to(wide)
    else:
        raise CompareError(f"{where}: init dist {dist!r} is not one compare_torch knows")
    if dtype not in FLOAT_DTYPES:
        return x.round().to(tdtype(dtype))
    return _nudge_zeros(x, dtype)


def make_inputs(op_spec, config, seed):
    """name -> tensor for every input and inout of the config (launch.json shapes, operator.json inits)."""
    inputs = {}
    for i, spec in enumerate(config["tensors"]):
        if spec["role"] == "output":
            continue
        declared = op_spec["tensors"].get(spec["name"])
        if declared is None:
            raise CompareError(f"{op_spec['path']}: no tensor \"{spec['name']}\", which launch.json lists")
        where = f"{op_spec['path']}: tensor {spec['name']}"
        inputs[spec["name"]] = make_input(spec, declared.get("init", {}), config["values"], seed * 1000 + i, where)
    return inputs


def poison(x):
    """Fills x with forgek's poison: NaN for floats, 0x7F bytes for integers."""
    size = x.element_size()
    is_float = x.dtype.is_floating_point
    if size == 1:
        x.view(torch.uint8).fill_(0x7F)
    elif size == 2:
        x.view(torch.int16).fill_(0x7FFF)
    elif size == 4:
        x.view(torch.int32).fill_(0x7FFFFFFF if is_float else 0x7F7F7F7F)
    else:
        x.view(torch.int64).fill_(0x7FFFFFFF7FFFFFFF if is_float else 0x7F7F7F7F7F7F7F7F)
    return x


def results_of(config):
    return [t for t in config["tensors"] if t["role"] != "input"]


def compute_truth(op, config, inputs):
    """The PyTorch implementation on float64-widened inputs: float outputs as float32, inouts
    rounded once to their dtype (forgek's golden convention)."""
    wide = {}
    for spec in config["tensors"]:
        if spec["role"] == "output":
            continue
        x = inputs[spec["name"]]
        if spec["dtype"] in FLOAT_DTYPES:
            x = x.to(torch.float64)
        elif spec["role"] == "inout":
            x = x.clone()
        wide[spec["name"]] = x
    odt = {t["name"]: (torch.float32 if t["dtype"] in FLOAT_DTYPES else tdtype(t["dtype"]))
           for t in config["tensors"] if t["role"] == "output"}
    with torch.no_grad():
        out = op.fn(wide, config_scalars(config), odt)
    truth = {}
    for spec in results_of(config):
        r = checked_result(out, spec, "truth")
        truth[spec["name"]] = r.to(tdtype(spec["dtype"])) if spec["role"] == "inout" else r.to(odt[spec["name"]])
    return truth


def checked_result(out, spec, what):
    if not isinstance(out, dict) or spec["name"] not in out:
        raise CompareError(f"scripts/torch_ops.py: the {what} returned no \"{spec['name']}\"")
    r = out[spec["name"]]
    if list(r.shape) != spec["shape"]:
        raise CompareError(f"scripts/torch_ops.py: the {what} returned \"{spec['name']}\" of shape {list(r.shape)}, "
                           f"launch.json says {spec['shape']}")
    return r


def compare(results, truth, config, tol):
    """forgek's check of results against the truth: (ok, max_abs, rel_l2, detail)."""
    ok, max_abs, worst_rel, details = True, 0.0, 0.0, []
    for spec in results_of(config):
        name = spec["name"]
        c, t = results[name], truth[name]
        exact = tol["exact"] or spec["dtype"] not in FLOAT_DTYPES
        if spec["dtype"] in FLOAT_DTYPES:
            cd, td = c.to(torch.float64), t.to(torch.float64)
        else:
            cd, td = c.to(torch.int64), t.to(torch.int64)
        non_finite = int((~torch.isfinite(cd)).sum()) if cd.dtype.is_floating_point else 0
        diff = (cd - td).abs().to(torch.float64)
        finite_diff = torch.where(torch.isfinite(diff), diff, torch.zeros_like(diff))
        worst = float(finite_diff.max()) if diff.numel() else 0.0
        max_abs = max(max_abs, worst)
        if exact:
            mismatches = int((cd != td).sum())
            allowed = int(math.floor(max(tol["max_mismatch_fraction"], 0.0) * cd.numel()))
            if non_finite or mismatches > allowed:
                ok = False
                details.append(f"{name}: {mismatches} of {cd.numel()} elements differ ({allowed} allowed)"
                               + (f", {non_finite} NaN/Inf" if non_finite else ""))
            elif mismatches:
                details.append(f"{name}: {mismatches} of {cd.numel()} elements differ (within the {allowed} allowed)")
            continue
        sum_sq_truth = float((td * td).sum())
        rel = math.inf if non_finite else math.sqrt(float((diff * diff).sum()) / sum_sq_truth if sum_sq_truth > 0
                                                    else float((diff * diff).sum()))
        worst_rel = max(worst_rel, rel)
        bound = tol["max_abs"] if tol["max_abs"] > 0 else math.inf
        bad = int((diff > bound).sum()) + non_finite
        rel_ok = tol["rel_l2"] <= 0 or rel <= tol["rel_l2"]
        if not rel_ok or bad:
            ok = False
            details.append(f"{name}: rel_l2 {rel:.3g} (limit {tol['rel_l2']:.3g}), {bad} elements off by more than "
                           f"max_abs {tol['max_abs']:.3g} (worst {worst:.3g})"
                           + (f", {non_finite} NaN/Inf" if non_finite else ""))
    return ok, max_abs, worst_rel, "; ".join(details)


class SealRunner:
    """One kernel folder (kernel.cubin + a config of its launch.json) bound to tensors: calling it
    zeroes the zero-marked workspaces and launches every launch in order on the current stream."""

    def __init__(self, driver, folder, config, bindings):
        self.driver, self.config = driver, config
        for launch in config["launches"]:
            c = launch["cluster"]
            if c[0] * c[1] * c[2] > 1 and "cuLaunchKernelEx" in driver.missing:
                raise CompareError("unsupported by compare_torch (cluster): this libcuda has no cuLaunchKernelEx")
        if config["tensor_maps"] and "cuTensorMapEncodeTiled" in driver.missing:
            raise CompareError("unsupported by compare_torch (tensor map): this libcuda has no cuTensorMapEncodeTiled")
        self.module = driver.load_module(os.path.join(folder, "kernel.cubin"))
        self.functions = []
        for launch in config["launches"]:
            fn = driver.function(self.module, launch["kernel"])
            if launch["smem"] > 0:  # the default allowance is 48 KiB minus the kernel's static shared memory
                driver.check(driver.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                       launch["smem"]), f"allow {launch['smem']} B of shared memory")
            c = launch["cluster"]
            if c[0] * c[1] * c[2] > 8:
                driver.check(driver.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                             "allow a non-portable cluster size")
            self.functions.append(fn)
        self.workspaces = {}
        for w in config["workspaces"]:
            buf = torch.empty(max(w["bytes"], 1), dtype=torch.uint8, device="cuda")
            if not w["zero"]:
                buf.fill_(0x7F)  # poisoned once: a kernel must not rely on what a workspace holds
            self.workspaces[w["name"]] = (buf, w["zero"])
        pointers = {name: t.data_ptr() for name, t in bindings.items()}
        pointers.update({name: b.data_ptr() for name, (b, _) in self.workspaces.items()})
        self.maps = {m["name"]: self._encode(m, bindings) for m in config["tensor_maps"]}
        self.packed = [pack_args(launch["args"], pointers, self.maps) for launch in config["launches"]]
        stream = torch.cuda.current_stream().cuda_stream
        self.launch_configs = [launch_config(launch, stream) for launch in config["launches"]]

    def _encode(self, m, bindings):
        if m["tensor"] in bindings:
            spec = next(t for t in self.config["tensors"] if t["name"] == m["tensor"])
            ptr, dtype, shape = bindings[m["tensor"]].data_ptr(), spec["dtype"], spec["shape"]
        elif m["tensor"] in self.workspaces:  # a workspace has no dtype: tensor maps over it address fp32
            buf = self.workspaces[m["tensor"]][0]
            ptr, dtype, shape = buf.data_ptr(), "f32", [buf.numel() // 4]
        else:
            raise CompareError(f"tensor map {m['name']}: no tensor or workspace '{m['tensor']}'")
        dims, strides, box, elem = tensor_map_geometry(m["shape"] or shape, m["box"], DTYPE_BYTES[dtype])
        if m["swizzle"] not in SWIZZLES or m["l2_promotion"] not in L2_PROMOTIONS:
            raise CompareError(f"tensor map {m['name']}: unknown swizzle {m['swizzle']!r} or l2_promotion "
                               f"{m['l2_promotion']!r}")
        out = TensorMapStorage()
        rank = len(dims)
        self.driver.check(self.driver.cuTensorMapEncodeTiled(
            out.address, TENSOR_MAP_DTYPES.get(dtype, 0), rank, ptr, (ctypes.c_uint64 * rank)(*dims),
            (ctypes.c_uint64 * max(1, rank - 1))(*strides), (ctypes.c_uint32 * rank)(*box),
            (ctypes.c_uint32 * rank)(*elem), 0, SWIZZLES[m["swizzle"]], L2_PROMOTIONS[m["l2_promotion"]],
            1 if m["oob_fill"] == "nan" else 0), f"encode tensor map {m['name']}")
        return out

    def __call__(self):
        for buf, zero in self.workspaces.values():
            if zero:
                buf.zero_()
        for launch, fn, (_, params), (cfg, _) in zip(self.config["launches"], self.functions, self.packed,
                                                     self.launch_configs):
            self.driver.check(self.driver.cuLaunchKernelEx(ctypes.byref(cfg), fn, params, None),
                              f"launch {launch['kernel']}")

    def close(self):
        if self.module:
            self.driver.cuModuleUnload(self.module)
            self.module = None


def is_sticky(exc):
    text = str(exc)
    return isinstance(exc, FatalGpuError) or any(k in text for k in (
        "illegal memory access", "unspecified launch failure", "device-side assert", "illegal instruction",
        "misaligned address"))


class Contender:
    """A timed callable: the seal, torch eager or torch.compile."""

    def __init__(self, name, fn):
        self.name, self.fn, self.us, self.error = name, fn, [], ""


def _guarded(c, live):
    """Calls a contender; one that raises (not a sticky error) is dropped with its error."""
    try:
        return True, c.fn()
    except Exception as e:
        if is_sticky(e):
            raise
        c.error, c.us = _short(e), []
        live.remove(c)
        return False, None


def time_contenders(contenders, reps, warmup, flush):
    """Interleaved timing (A B C, then C B A, ...): flush L2, event, call, event; microseconds."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    live = list(contenders)
    for c in list(live):
        for _ in range(warmup):
            if not _guarded(c, live)[0]:
                break
    torch.cuda.synchronize()
    for r in range(reps):
        for c in (list(live) if r % 2 == 0 else list(reversed(live))):
            flush()
            start.record()
            ran, out = _guarded(c, live)
            if not ran:
                continue
            end.record()
            end.synchronize()
            c.us.append(start.elapsed_time(end) * 1000.0 / getattr(c.fn, "per_call", 1))
            del out
    return {c.name: summarize(c.us) for c in contenders}


def _short(e):
    lines = str(e).strip().splitlines()
    return (f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__)[:200]


class TorchCall:
    """A torch implementation bound to the inputs, with its own copies of the inouts; reset()
    brings those back to the pristine inputs."""

    def __init__(self, fn, inputs, config):
        self.fn, self.label = fn, getattr(fn, "__name__", "torch")
        self.inouts = [t["name"] for t in config["tensors"] if t["role"] == "inout"]
        self.pristine = inputs
        self.t = {k: (v.clone() if k in self.inouts else v) for k, v in inputs.items()}
        self.s = config_scalars(config)
        self.odt = {t["name"]: tdtype(t["dtype"]) for t in config["tensors"] if t["role"] == "output"}

    def reset(self):
        for k in self.inouts:
            self.t[k].copy_(self.pristine[k])

    def __call__(self):
        return self.fn(self.t, self.s, self.odt)


def check_torch(name, call, config, truth, tol, notes):
    """Runs a torch contender once from pristine inouts: (ran, agrees with the truth); an error
    or a disagreement goes to the notes."""
    try:
        call.reset()
        out = call()
        torch.cuda.synchronize()
    except Exception as e:
        if is_sticky(e):
            raise
        notes.append(f"{name} failed: {_short(e)}")
        return False, False
    results = {spec["name"]: checked_result(out, spec, f"{name} result") for spec in results_of(config)}
    ok, _, _, detail = compare(results, truth, config, tol)
    if not ok:
        notes.append(f"{name} itself outside the tolerance ({detail})")
    return True, ok


def torch_contenders(op, config, inputs, truth, tol, use_compile, notes):
    """Checked torch contenders: eager (op.eager where it runs and agrees with the truth, else
    op.timed) and torch.compile of op.timed. op.timed is timed even where it disagrees (that is
    PyTorch's own result, and the note says so)."""
    out = []
    eager = None
    if op.eager is not None:
        eager = TorchCall(op.eager, inputs, config)
        if all(check_torch(f"eager {eager.label}", eager, config, truth, tol, notes)):
            notes.append(f"eager timed {eager.label}")
        else:
            notes[-1] += f"; eager timed {op.timed.__name__} instead"
            eager = None
    if eager is None:
        eager = TorchCall(op.timed, inputs, config)
        if not check_torch("eager", eager, config, truth, tol, notes)[0]:
            eager = None
    if eager is not None:
        out.append(Contender("eager", eager))
    if use_compile:
        torch._dynamo.reset()
        compiled = TorchCall(torch.compile(op.timed), inputs, config)
        compiled.label = op.timed.__name__
        if check_torch("torch.compile", compiled, config, truth, tol, notes)[0]:
            out.append(Contender("compile", compiled))
    return out


class TorchOp:
    """torch.ops.forgek.<op> of a seal's `--lang torch` export, with its package's tables: the order
    of the tensors it takes (ARGUMENTS) and returns (RESULTS), its scalars, and the sizes passed as
    keywords because no input's shape gives them (KEYWORD_SIZES)."""

    def __init__(self, fn, shapes, scalars, folder):
        self.fn, self.shapes, self.scalars, self.folder = fn, shapes, scalars, folder


def load_torch_op(args, name, sid, export_root):
    """The seal exported as a PyTorch package and imported (the import builds its C library); a
    CompareError says why there is no op, and the comparison goes on without one."""
    folder = os.path.join(export_root, f"{name}-{sid[:12]}-torch")
    if os.path.exists(folder):
        shutil.rmtree(folder)
    forgek(args, "seal", "export", sid, folder, "--lang", "torch")
    module = f"forgek_{name}"
    if module in sys.modules:
        raise CompareError(f"{module} is already imported in this process (a second seal of {name})")
    sys.path.insert(0, folder)
    try:
        package = importlib.import_module(module)
        shapes = importlib.import_module(module + "._shapes")
        fn = getattr(torch.ops.forgek, name)
    except Exception as e:  # a build failure (no cc, no CUDA headers) or a registration error
        raise CompareError(f"import {module} from {folder}: {_short(e)}") from None
    finally:
        sys.path.remove(folder)
    return TorchOp(fn, shapes, getattr(package, "_SCALARS", ()), folder)


class TorchOpCall:
    """The op bound to the inputs: the tensors it takes in its order (it clones inouts itself: the
    op is functional), the config's scalars and keyword sizes; returns {result name: tensor}."""

    def __init__(self, op, inputs, config):
        s = config_scalars(config)
        self.fn, self.results = op.fn, op.shapes.RESULTS
        self.args = ([inputs[n] for n in op.shapes.ARGUMENTS] + [s[n] for n, _ in op.scalars] +
                     [int(config["values"][p]) for p in op.shapes.KEYWORD_SIZES])

    def __call__(self):
        out = self.fn(*self.args)
        return dict(zip(self.results, out if isinstance(out, (tuple, list)) else (out,)))


# forgek's worker times a kernel shorter than GRAPH_BELOW_US by replaying a CUDA graph of enough
# launches to last about GRAPH_TARGET_US (TimingPolicy in protocol/worker_protocol.h); "op graph"
# follows the same rule so that it is comparable with `seal verify`.
GRAPH_BELOW_US = 20.0
GRAPH_TARGET_US = 200.0


def launches_per_graph(one_call_us):
    """How many calls one replayed graph holds: 1 for a call of GRAPH_BELOW_US or more, else enough
    to last about GRAPH_TARGET_US (at most 1000), as the worker does."""
    if one_call_us >= GRAPH_BELOW_US:
        return 1
    return max(1, min(1000, int(GRAPH_TARGET_US / max(one_call_us, 0.5))))


class GraphedCall:
    """`launches` calls captured once in a CUDA graph (after warm-up calls on a side stream, as
    torch asks) and replayed: the GPU time of a call without the host's per-call work. The graph's
    outputs (the last call's) are the same tensors on every replay; `per_call` divides a replay's
    time into the time of one call."""

    def __init__(self, call, launches=1):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                call()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        self.per_call = launches
        with torch.cuda.graph(self.graph):
            for _ in range(launches):
                self.out = call()

    def __call__(self):
        self.graph.replay()
        return self.out


def graphed_op(call):
    """The op in a graph sized by the worker's rule: one call timed in a graph of one first."""
    single = GraphedCall(call)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(5):
        start.record()
        single()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) * 1000.0)
    launches = launches_per_graph(best)
    return single if launches == 1 else GraphedCall(call, launches)


def check_torch_op(call, config, truth, tol, notes, what="op"):
    """The op run once and checked as the seal is: (ok, detail); a failure goes to the notes."""
    try:
        out = call()
        torch.cuda.synchronize()
        results = {spec["name"]: checked_result(out, spec, "torch op") for spec in results_of(config)}
    except Exception as e:
        if is_sticky(e):
            raise
        notes.append(f"{what} failed: {_short(e)}")
        return False
    ok, _, _, detail = compare(results, truth, config, tol)
    if not ok:
        notes.append(f"{what} wrong: {detail}")
    return ok


def compare_config(driver, op, op_spec, folder, config, args, flush, torch_op=None):
    """One config: inputs, truth, the seal's check, the torch op's and torch's checks, the
    interleaved timing. A torch op that is wrong fails the config as a wrong seal does."""
    tol = op_spec["tolerance"]
    notes = []
    if tol["check"] != "elementwise":
        return config_row(config["config"], note=f"tolerance.check {tol['check']!r} is not compared by compare_torch",
                          status="not compared")
    inputs = make_inputs(op_spec, config, args.seed)
    truth = compute_truth(op, config, inputs)
    bindings = {}
    for spec in config["tensors"]:
        if spec["role"] == "input":
            bindings[spec["name"]] = inputs[spec["name"]]
        elif spec["role"] == "inout":
            bindings[spec["name"]] = inputs[spec["name"]].clone()
        else:
            bindings[spec["name"]] = poison(torch.empty(spec["shape"], dtype=tdtype(spec["dtype"]), device=DEVICE))
    try:
        runner = SealRunner(driver, folder, config, bindings)
    except CompareError as e:
        if str(e).startswith("unsupported by compare_torch"):
            return config_row(config["config"], note=str(e), status="not compared")
        raise
    try:
        runner()
        torch.cuda.synchronize()
        ok, max_abs, rel, detail = compare({k: bindings[k] for k in bindings}, truth, config, tol)
        if not ok:
            return config_row(config["config"], correct=False, max_abs_err=max_abs, rel_l2=rel,
                              note=f"seal wrong: {detail}", status="compared")
        if detail:
            notes.append(f"seal: {detail}")
        contenders = [Contender("seal", runner)]
        op_ok = None
        graph_launches = None
        if torch_op is not None:
            op_call = TorchOpCall(torch_op, inputs, config)
            op_ok = check_torch_op(op_call, config, truth, tol, notes)
            if op_ok:
                contenders.append(Contender("op", op_call))
            if op_ok and not args.no_op_graph:
                try:
                    graphed = graphed_op(op_call)
                except Exception as e:
                    if is_sticky(e):
                        raise
                    notes.append(f"op graph: capture failed: {_short(e)}")
                    graphed = None
                # A graph that replays wrong fails the config as a wrong op does.
                if graphed is not None:
                    graph_ok = check_torch_op(graphed, config, truth, tol, notes, "op graph")
                    op_ok = op_ok and graph_ok
                    if graph_ok:
                        contenders.append(Contender("op graph", graphed))
                        graph_launches = graphed.per_call
        contenders += torch_contenders(op, config, inputs, truth, tol, not args.no_compile, notes)
        del truth
        stats = time_contenders(contenders, args.reps, 3, flush)
        for c in contenders:
            if c.error:
                notes.append(f"{c.name} stopped while timed: {c.error}")
        return config_row(config["config"], stats.get("seal"), stats.get("eager"), stats.get("compile"),
                          op_ok is not False, max_abs, rel, "; ".join(notes), op=stats.get("op"),
                          op_graph=stats.get("op graph"), op_graph_launches=graph_launches)
    finally:
        runner.close()


def compare_operator(driver, export_dir, op_spec, seal_id, args, flush, progress, torch_op=None):
    """Every config of one exported seal; a dispatch seal's configs run the kernel its rule picks
    (and so does its torch op, through the library's own rule)."""
    entry = {"op": op_spec["name"], "seal": seal_id, "configs": [], "note": "", "status": "compared"}
    if op_spec["name"] in torch_ops.NOT_EXPRESSIBLE:
        entry.update(note=f"not compared: {torch_ops.NOT_EXPRESSIBLE[op_spec['name']]}", status="not compared")
        return entry
    op = torch_ops.OPS[op_spec["name"]]
    launch = parse_launch(os.path.join(export_dir, "launch.json"))
    dispatch_path = os.path.join(export_dir, "dispatch.json")
    dispatch = parse_dispatch(dispatch_path) if os.path.exists(dispatch_path) else None
    # A dispatch's top-level kernel may refuse some suite configs (launch.json "refused"): the
    # dispatch rule still serves them, so they are compared too.
    for config in launch["configs"] + launch["refused"]:
        progress(f"{op_spec['name']} {config['config']}")
        folder, run_config, kernel = export_dir, config, None
        if "launches" not in config and not dispatch:
            entry["configs"].append(config_row(config["config"], note=f"the seal's kernel refuses it: {config['why']}",
                                               status="failed"))
            continue
        if dispatch:
            served = pick_kernel(export_dir, dispatch, config["config"], config["values"])
            kernel = served["index"]
            if served["kind"] == "reference":
                entry["configs"].append(config_row(config["config"], note=f"dispatch: {served['why']}; nothing of "
                                                   "the seal to run", status="not compared", kernel=kernel))
                continue
            folder = served["dir"]
            run_config = find_config(parse_launch(os.path.join(folder, "launch.json")), config["config"],
                                     config["values"])
            if run_config is None:
                raise CompareError(f"{os.path.join(folder, 'launch.json')}: no config {config['config']}")
        fatal = False
        try:
            row = compare_config(driver, op, op_spec, folder, run_config, args, flush, torch_op)
        except CompareError as e:
            row = config_row(config["config"], note=str(e), status="failed")
        except KeyboardInterrupt:
            raise
        except Exception as e:  # FatalGpuError, a torch error, a bug in torch_ops: this config fails
            fatal = is_sticky(e)
            row = config_row(config["config"], note=f"failed: {_short(e)}", status="failed")
        row["config"], row["kernel"] = config["config"], kernel
        entry["configs"].append(row)
        if fatal:  # nothing more can run in this process
            entry["fatal"] = True
            return entry
        torch.cuda.empty_cache()
    return entry


# ----------------------------------------------------------------------------------------------
# forgek and the command line


def forgek(args, *cmd, timeout=600):
    base = [args.forgek, "--store", args.store, "--operators", args.operators]
    if args.arch:
        base += ["--arch", args.arch]
    line = " ".join(base + list(cmd))
    try:
        p = subprocess.run(base + list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CompareError(f"`{line}` did not finish within {timeout} s") from None
    except OSError as e:
        raise CompareError(f"`{line}` could not start: {e.strerror}") from None
    if p.returncode != 0:
        raise CompareError(f"`{line}` exited {p.returncode}: {p.stderr.strip()[-600:]}")
    return p.stdout


def verify_times(args, sid):
    """config -> (median us, noise) of `forgek --json seal verify SID`: the seal re-timed by forgek's
    worker against the expert reference. Exit 3 (a regression) still gives the times."""
    line = f"{args.forgek} --json seal verify {sid}"
    cmd = [args.forgek, "--store", args.store, "--operators", args.operators] + (["--arch", args.arch] if args.arch
                                                                                  else [])
    try:
        p = subprocess.run(cmd + ["--json", "seal", "verify", sid], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise CompareError(f"`{line}` did not finish within 600 s") from None
    except OSError as e:
        raise CompareError(f"`{line}` could not start: {e.strerror}") from None
    if p.returncode not in (0, 3):
        raise CompareError(f"`{line}` exited {p.returncode}: {p.stderr.strip()[-400:]}")
    return parse_verify(p.stdout, line)


def parse_verify(text, where):
    """config -> (median_us, noise) from seal verify's JSON; a CompareError names what is missing."""
    try:
        v = json.loads(text)
    except json.JSONDecodeError as e:
        raise CompareError(f"{where}: not JSON: {e.msg}") from None
    if not isinstance(v, dict):
        raise CompareError(f"{where}: not a JSON object")
    if "error" in v:
        raise CompareError(f"{where}: {v['error']}")
    out = {}
    for i, c in enumerate(_get(v, "configs", list, where)):
        at = f"{where}: configs[{i}]"
        median = _get(c, "median_us", (int, float), at)
        out[_get(c, "config", str, at)] = (float(median), float(_get(c, "noise", (int, float), at)))
    return out


def newest_seals(args):
    """operator -> id of its newest seal in the store (`forgek --json seal list`, newest first)."""
    out = forgek(args, "--json", "seal", "list")
    try:
        seals = json.loads(out)
    except json.JSONDecodeError as e:
        raise CompareError(f"forgek --json seal list: not JSON: {e.msg}") from None
    newest = {}
    for i, s in enumerate(seals if isinstance(seals, list) else []):
        op, sid = _get(s, "operator", str, f"seal list[{i}]"), _get(s, "id", str, f"seal list[{i}]")
        newest.setdefault(op, sid)
    return newest


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="compare_torch.py", description=__doc__.split("\n\n")[0],
        epilog="example: scripts/compare_torch.py --forgek build/device/forgek --store store.db "
               "--out compare-torch.json --markdown compare-torch.md")
    ap.add_argument("--forgek", required=True, help="the forgek binary")
    ap.add_argument("--store", required=True, help="the store whose seals are compared")
    ap.add_argument("--ops", default="", help="comma-separated operators (default: every operator with a seal)")
    ap.add_argument("--out", help="write the JSON report here")
    ap.add_argument("--markdown", help="write the markdown table here (for docs/PERFORMANCE.md)")
    ap.add_argument("--reps", type=int, default=30, help="timed calls per contender and config (default 30)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the inputs (default 1)")
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out (compile_us null)")
    ap.add_argument("--no-torch-op", action="store_true",
                    help="leave the seal's PyTorch op (seal export --lang torch) out (op_us null)")
    ap.add_argument("--no-op-graph", action="store_true",
                    help="leave the op replayed in a CUDA graph out (op_graph_us null)")
    ap.add_argument("--no-verify", action="store_true", help="leave `forgek seal verify`'s times out (verify_us null)")
    ap.add_argument("--flush-mib", type=int, default=256, help="MiB written before each call, at least 2 x L2 (256)")
    ap.add_argument("--operators", default=os.environ.get("FORGEK_OPERATORS") or os.path.join(ROOT, "operators"),
                    help="operators folder (default $FORGEK_OPERATORS, else the repository's)")
    ap.add_argument("--arch", default="", help="passed to forgek as --arch")
    ap.add_argument("--export-dir", help="keep the exports under this folder (default: a temporary one)")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        if e.code:  # argparse has printed the usage and the error
            raise UsageError("") from None
        raise  # --help
    if not os.path.isfile(a.forgek) or not os.access(a.forgek, os.X_OK):
        raise UsageError(f"--forgek {a.forgek}: not an executable file")
    if not os.path.isfile(a.store):
        raise UsageError(f"--store {a.store}: no such file")
    if a.reps < 3:
        raise UsageError(f"--reps {a.reps}: at least 3")
    if not os.path.isdir(a.operators):
        raise UsageError(f"--operators {a.operators}: not a folder")
    a.op_list = [o.strip() for o in a.ops.split(",") if o.strip()]
    for o in a.op_list:
        if not os.path.isfile(os.path.join(a.operators, o, "operator.json")):
            raise UsageError(f"--ops: no operator {o!r} under {a.operators}")
    for opt in ("out", "markdown"):
        path = getattr(a, opt)
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise UsageError(f"--{opt} {path}: its folder does not exist")
    return a


def write_text(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def method_text(args, flush_bytes):
    return (f"`scripts/compare_torch.py --reps {args.reps}`: one seed of the operator's inputs; the seal (driver "
            f"API, its own launch.json) checked against the float64 PyTorch truth under the operator's tolerance; "
            f"the seal's PyTorch op (its `--lang torch` export: the generated C library) checked the same way, "
            f"called (op) and replayed from a CUDA graph it was captured in (op graph: no host work per call; "
            f"a call under {GRAPH_BELOW_US:g} us captured as often as lasts ~{GRAPH_TARGET_US:g} us and the replay "
            f"divided, the worker's rule; inputs not rotated); "
            f"seal, op, op graph, torch eager and torch.compile (default mode) interleaved, {flush_bytes >> 20} MiB written "
            f"before every call (cold L2), one CUDA event pair per call, median of {args.reps} calls (spread p10/p90 "
            f"in the JSON). seal vs X = X's time / the seal's: above 1 the seal is faster. verify: "
            f"`forgek seal verify`'s median (forgek's worker, CUDA graphs for short kernels).")


def gpu_setup(args):
    """Imports torch, checks the GPU, and returns (device index, flush function, flush bytes)."""
    global torch
    try:
        torch = torch_ops.load()
    except ImportError as e:
        raise CompareError(f"torch is needed on the GPU machine: {e}") from None
    if not torch.cuda.is_available():
        raise CompareError("torch sees no CUDA device")
    torch.set_grad_enabled(False)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.cuda.init()
    device_index = torch.cuda.current_device()
    torch.empty(1, device="cuda")  # the runtime makes its primary context current for the driver calls
    l2 = int(getattr(torch.cuda.get_device_properties(device_index), "L2_cache_size", 0) or 0)
    flush_buf = torch.empty(max(args.flush_mib << 20, 2 * l2), dtype=torch.uint8, device="cuda")
    counter = [0]

    def flush():
        counter[0] = (counter[0] + 1) & 0xFF  # a different value each time: no write can be elided
        flush_buf.fill_(counter[0])

    return device_index, flush, flush_buf.numel()


def compare_one(args, driver, flush, name, sid, export_root):
    """Exports one seal and compares it; failures become the entry's note."""
    entry = {"op": name, "seal": sid, "configs": [], "note": "", "status": "compared"}
    try:
        op_spec = load_operator(args.operators, name)
        if name not in torch_ops.OPS and name not in torch_ops.NOT_EXPRESSIBLE:
            raise CompareError(f"scripts/torch_ops.py: no implementation of {name}")
        folder = os.path.join(export_root, f"{name}-{sid[:12]}")
        if os.path.exists(folder):
            shutil.rmtree(folder)
        forgek(args, "seal", "export", sid, folder)
        progress = (lambda text: print(f"-- {text}", file=sys.stderr, flush=True))
        notes = []
        torch_op = None
        if not args.no_torch_op and name not in torch_ops.NOT_EXPRESSIBLE:
            progress(f"{name}: the seal as a PyTorch op (seal export --lang torch, then its build)")
            try:
                torch_op = load_torch_op(args, name, sid, export_root)
            except CompareError as e:
                notes.append(f"no torch op: {e}")
        verify = {}
        if not args.no_verify:
            progress(f"{name}: forgek seal verify {sid[:12]}")
            try:
                verify = verify_times(args, sid)
            except CompareError as e:
                notes.append(f"no verify times: {e}")
        entry = compare_operator(driver, folder, op_spec, sid, args, flush, progress, torch_op)
        for row in entry["configs"]:
            row["verify_us"], row["verify_noise"] = verify.get(row["config"], (None, None))
        entry["note"] = "; ".join(n for n in [entry["note"]] + notes if n)
        return entry
    except CompareError as e:
        entry.update(status="failed", note=str(e))
        return entry


def compare_all(args, driver, flush, export_root):
    """One entry per wanted operator: its newest seal compared, or why not."""
    seals = newest_seals(args)
    wanted = args.op_list or sorted(seals)
    if not wanted:
        print(f"compare_torch.py: no seal in {args.store}: nothing to compare", file=sys.stderr)
    operators = []
    for i, name in enumerate(wanted):
        if name not in seals:
            operators.append({"op": name, "seal": None, "configs": [], "status": "failed",
                              "note": f"no seal of {name} in {args.store}"})
            continue
        entry = compare_one(args, driver, flush, name, seals[name], export_root)
        operators.append(entry)
        if entry.pop("fatal", False):  # a sticky CUDA error: nothing more can run in this process
            for rest in wanted[i + 1:]:
                operators.append({"op": rest, "seal": seals.get(rest), "configs": [], "status": "failed",
                                  "note": f"not run: a sticky CUDA error in {name} ended the comparison"})
            break
    return operators


def run(args):
    device_index, flush, flush_bytes = gpu_setup(args)
    driver = Driver(device_index)
    export_root = args.export_dir or tempfile.mkdtemp(prefix="compare-torch-")
    os.makedirs(export_root, exist_ok=True)
    try:
        operators = compare_all(args, driver, flush, export_root)
    finally:
        if not args.export_dir:
            shutil.rmtree(export_root, ignore_errors=True)
    date = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    return build_report(operators, torch.cuda.get_device_name(device_index), torch.__version__, date,
                        method_text(args, flush_bytes))


def main(argv=None):
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        if str(e):
            print(f"compare_torch.py: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help
        return e.code or 0
    try:
        report = run(args)
    except CompareError as e:
        print(f"compare_torch.py: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(text_table(report))
    if args.out:
        write_text(args.out, json.dumps(report, indent=2) + "\n")
    if args.markdown:
        write_text(args.markdown, markdown_table(report))
    return exit_code(report)


if __name__ == "__main__":
    sys.exit(main())
