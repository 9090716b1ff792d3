#!/usr/bin/env python3
"""Tests scripts/compare_torch.py and scripts/torch_ops.py without a GPU or torch (standard library
only): torch_ops covers every operator folder (or says why not) and its functions name exactly the
operator's tensors, params and scalars; launch.json and dispatch.json of hand-written exports
(tests/fixtures/compare_torch/) parse, a broken one is refused naming the file and the field, and
the dispatch rule picks the right kernel per config; the JSON, text and markdown writers produce the
documented schema from fixture results; the statistics, expressions, partitions, driver structures
and argument packing match forgek's; and the command line answers --help and usage errors.

Run: python3 scripts/compare_torch_test.py   (exit 0 when every test passes)
"""
import ctypes
import inspect
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "compare_torch")
OPERATORS = os.path.join(ROOT, "operators")
SCRIPT = os.path.join(HERE, "compare_torch.py")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import compare_torch as ct  # noqa: E402
import torch_ops  # noqa: E402


def operator_names():
    return sorted(d for d in os.listdir(OPERATORS) if os.path.isfile(os.path.join(OPERATORS, d, "operator.json")))


def operator_json(name):
    with open(os.path.join(OPERATORS, name, "operator.json"), encoding="utf-8") as f:
        return json.load(f)


class TorchOpsCoverage(unittest.TestCase):
    def test_modules_import_without_torch(self):
        self.assertIsNone(torch_ops.torch, "torch_ops imported torch at import time")
        self.assertIsNone(ct.torch, "compare_torch imported torch at import time")

    def test_every_operator_is_covered_once(self):
        for name in operator_names():
            with self.subTest(op=name):
                in_ops, in_not = name in torch_ops.OPS, name in torch_ops.NOT_EXPRESSIBLE
                self.assertTrue(in_ops or in_not, f"torch_ops has no entry for operators/{name}")
                self.assertFalse(in_ops and in_not, f"{name} is both implemented and not expressible")
                if in_not:
                    self.assertTrue(torch_ops.NOT_EXPRESSIBLE[name].strip(), f"{name}: no reason given")

    def test_no_entry_without_an_operator(self):
        names = set(operator_names())
        for name in list(torch_ops.OPS) + list(torch_ops.NOT_EXPRESSIBLE):
            self.assertIn(name, names, f"torch_ops names {name}, which operators/ does not hold")

    def test_not_expressible_table_in_the_docstring(self):
        for name, why in torch_ops.NOT_EXPRESSIBLE.items():
            self.assertIn(f"| {name} |", torch_ops.__doc__, f"{name} is missing from the docstring's table")

    def test_functions_name_the_operators_tensors_params_and_scalars(self):
        for name, op in torch_ops.OPS.items():
            spec = operator_json(name)
            tensors = {t["name"]: t["role"] for t in spec["tensors"]}
            names = set(spec["params"]) | {s["name"] for s in spec.get("scalars", [])}
            reads = {n for n, r in tensors.items() if r != "output"}
            results = {n for n, r in tensors.items() if r != "input"}
            outputs = {n for n, r in tensors.items() if r == "output"}
            for fn in {op.fn, op.fast, op.eager} - {None}:
                with self.subTest(op=name, fn=fn.__name__):
                    src = inspect.getsource(fn)
                    self.assertEqual(list(inspect.signature(fn).parameters), ["t", "s", "odt"])
                    used_t = set(re.findall(r'\bt\["(\w+)"\]', src))
                    used_s = set(re.findall(r'\bs\["(\w+)"\]', src))
                    used_odt = set(re.findall(r'\bodt\["(\w+)"\]', src))
                    returned = set()
                    for line in src.splitlines():
                        if line.strip().startswith("return {"):
                            returned |= set(re.findall(r'"(\w+)":', line))
                    self.assertEqual(used_t, reads, "t[...] must read exactly the inputs and inouts")
                    self.assertLessEqual(used_s, names, "s[...] must name params or scalars of the operator")
                    self.assertEqual(returned, results, "must return exactly the outputs and inouts")
                    self.assertEqual(used_odt, outputs, "odt[...] must give every output its dtype")


class LaunchParsing(unittest.TestCase):
    def test_single_export(self):
        launch = ct.parse_launch(os.path.join(FIXTURES, "single", "launch.json"))
        self.assertEqual(launch["operator"], "softmax_fp32")
        first, second = launch["configs"]
        self.assertEqual(first["config"], "4096x32768")
        self.assertEqual(first["values"], {"M": 4096, "N": 32768})
        self.assertEqual([t["role"] for t in first["tensors"]], ["input", "output"])
        self.assertEqual(first["workspaces"], [{"name": "partials", "bytes": 1048576, "zero": True}])
        self.assertEqual(first["tensor_maps"][0]["box"], [4, 256])
        self.assertEqual(first["tensor_maps"][0]["swizzle"], "128B")
        l0, l1 = first["launches"]
        self.assertEqual((l0["kernel"], l0["grid"], l0["cluster"], l0["smem"]),
                         ("softmax_partials", [1024, 8, 1], [1, 8, 1], 98304))
        self.assertEqual([a["kind"] for a in l0["args"]], ["tensor_map", "workspace", "i32", "i64"])
        self.assertEqual(l0["args"][3]["value"], 32768)
        self.assertEqual(l1["args"][3], {"kind": "f32", "name": "scale", "value": 0.5})
        self.assertEqual(second["scalars"], [{"name": "eps", "dtype": "f32", "value": 1e-05}])
        s = ct.config_scalars(second)
        self.assertEqual(s["M"], 65536)
        self.assertEqual(s["eps"], struct.unpack("<f", struct.pack("<f", 1e-05))[0])
        self.assertEqual(ct.find_config(launch, "65536x1024", {"M": 65536, "N": 1024}), second)
        self.assertEqual(ct.find_config(launch, "other name", {"M": 4096, "N": 32768}), first)
        self.assertIsNone(ct.find_config(launch, "nope", {"M": 1, "N": 1}))

    def test_bad_launch_names_file_and_field(self):
        path = os.path.join(FIXTURES, "bad-launch.json")
        with self.assertRaises(ct.CompareError) as cm:
            ct.parse_launch(path)
        self.assertIn(path, str(cm.exception))
        self.assertIn("configs[0].launches[0]", str(cm.exception))
        self.assertIn('"grid"', str(cm.exception))

    def test_refused_documents(self):
        with tempfile.TemporaryDirectory() as d:
            cases = {
                "format": ({"format": "other/1", "operator": "x", "params": {}, "configs": []}, '"format"'),
                "dtype": ({"format": "forgek-seal-launch/1", "operator": "x", "params": {}, "configs": [
                    {"config": "c", "values": {}, "tensors": [{"name": "a", "role": "input", "dtype": "f8",
                                                               "shape": [1]}],
                     "scalars": [], "workspaces": [], "tensor_maps": [], "launches": []}]}, "tensors[0]"),
                "kind": ({"format": "forgek-seal-launch/1", "operator": "x", "params": {}, "configs": [
                    {"config": "c", "values": {}, "tensors": [], "scalars": [], "workspaces": [], "tensor_maps": [],
                     "launches": [{"kernel": "k", "grid": [1, 1, 1], "block": [1, 1, 1], "cluster": [1, 1, 1],
                                   "dynamic_smem_bytes": 0, "args": [{"kind": "u16", "name": "a"}]}]}]}, "args[0]"),
            }
            for what, (doc, needle) in cases.items():
                with self.subTest(what=what):
                    path = os.path.join(d, f"{what}.json")
                    with open(path, "w", encoding="utf-8") as f:
                        json.dump(doc, f)
                    with self.assertRaises(ct.CompareError) as cm:
                        ct.parse_launch(path)
                    self.assertIn(path, str(cm.exception))
                    self.assertIn(needle, str(cm.exception))
            path = os.path.join(d, "broken.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write("{not json")
            with self.assertRaises(ct.CompareError) as cm:
                ct.parse_launch(path)
            self.assertIn(path, str(cm.exception))

    def test_every_operator_json_loads(self):
        for name in operator_names():
            with self.subTest(op=name):
                spec = ct.load_operator(OPERATORS, name)
                self.assertEqual(spec["name"], name)
                tol = spec["tolerance"]
                self.assertTrue(tol["exact"] or tol["rel_l2"] > 0 or tol["max_abs"] > 0)
                for t in spec["tensors"].values():
                    self.assertIn(t["dtype"], ct.TORCH_DTYPES)
                    if t["role"] != "output":
                        self.assertIn(t.get("init", {}).get("dist", "normal"),
                                      ("normal", "uniform", "int_range", "probs", "partition"))
                        init, values = t.get("init", {}), operator_json(name)["configs"][0]["values"]
                        keys = {"int_range": ("lo", "hi"), "partition": ("total", "multiple", "min")}
                        for key in keys.get(init.get("dist"), ()):  # expressions compare_torch evaluates
                            if key in init:
                                self.assertIsInstance(ct.eval_expr(init[key], values), int)


class DispatchRule(unittest.TestCase):
    def setUp(self):
        self.export = os.path.join(FIXTURES, "dispatch")
        self.dispatch = ct.parse_dispatch(os.path.join(self.export, "dispatch.json"))

    def pick(self, name, values):
        return ct.pick_kernel(self.export, self.dispatch, name, values)

    def test_table_row_names_a_kernel_folder(self):
        served = self.pick("small", {"M": 64, "N": 64})
        self.assertEqual((served["kind"], served["index"]), ("kernel", 0))
        self.assertEqual(served["dir"], os.path.join(self.export, "kernels/0"))
        launch = ct.parse_launch(os.path.join(served["dir"], "launch.json"))
        self.assertEqual(ct.find_config(launch, "small", {"M": 64, "N": 64})["launches"][0]["kernel"], "tiled_k0")

    def test_table_row_matches_by_values_not_name(self):
        served = self.pick("renamed", {"M": 64, "N": 64})
        self.assertEqual(served["index"], 0)

    def test_table_row_names_the_reference(self):
        served = self.pick("mid", {"M": 128, "N": 128})
        self.assertEqual((served["kind"], served["index"]), ("reference", 1))
        self.assertIn("cublas.gemm_bf16", served["why"])

    def test_fallback_serves_a_shape_it_accepts(self):
        served = self.pick("large", {"M": 4096, "N": 4096})
        self.assertEqual((served["kind"], served["index"], served["why"]), ("kernel", 2, "fallback"))

    def test_reference_where_the_fallback_refuses(self):
        served = self.pick("huge", {"M": 8192, "N": 8192})
        self.assertEqual((served["kind"], served["index"]), ("reference", -1))

    def test_unknown_kernel_index_is_refused(self):
        broken = dict(self.dispatch, table=[{"config": "small", "values": {"M": 64, "N": 64}, "kernel": 7, "why": ""}])
        with self.assertRaises(ct.CompareError) as cm:
            ct.pick_kernel(self.export, broken, "small", {"M": 64, "N": 64})
        self.assertIn("dispatch.json", str(cm.exception))
        self.assertIn("kernel 7", str(cm.exception))


def fixture_report():
    with open(os.path.join(FIXTURES, "results.json"), encoding="utf-8") as f:
        doc = json.load(f)
    operators = []
    for op in doc["operators"]:
        configs = []
        for c in op["configs"]:
            row = ct.config_row(c["config"], ct.summarize(c["seal"] or []), ct.summarize(c["eager"] or []),
                                ct.summarize(c["compile"] or []), c["correct"], c["max_abs_err"], c["rel_l2"],
                                c["note"], c["status"], c["kernel"], op=ct.summarize(c.get("op") or []),
                                op_graph=ct.summarize(c.get("op_graph") or []))
            row["verify_us"], row["verify_noise"] = c.get("verify", (None, None))
            configs.append(row)
        operators.append({"op": op["op"], "seal": op["seal"], "configs": configs, "note": op["note"],
                          "status": op["status"]})
    return ct.build_report(operators, doc["device"], doc["torch"], doc["date"], doc["method"])


class Writers(unittest.TestCase):
    CONFIG_KEYS = {"config", "seal_us", "eager_us", "compile_us", "seal_spread", "eager_spread", "compile_spread",
                   "correct", "max_abs_err", "speedup_vs_eager", "speedup_vs_compile", "note", "op_us", "op_spread",
                   "op_over_seal", "op_graph_us", "op_graph_spread", "op_graph_over_seal", "op_graph_launches", "verify_us",
                   "verify_noise"}

    def test_json_schema(self):
        report = json.loads(json.dumps(fixture_report()))
        self.assertEqual(report["format"], "forgek-compare-torch/1")
        for key, kind in (("date", str), ("device", str), ("torch", str), ("operators", list)):
            self.assertIsInstance(report[key], kind)
        for op in report["operators"]:
            self.assertLessEqual({"op", "seal", "configs"}, set(op))
            for c in op["configs"]:
                self.assertLessEqual(self.CONFIG_KEYS, set(c))
                for k in ("seal_us", "eager_us", "compile_us", "max_abs_err", "speedup_vs_eager",
                          "speedup_vs_compile"):
                    self.assertTrue(c[k] is None or isinstance(c[k], (int, float)), k)
                for k in ("seal_spread", "eager_spread", "compile_spread"):
                    self.assertTrue(c[k] is None or set(c[k]) == {"p10", "p90", "rel_noise", "samples"}, k)
                self.assertIn(c["correct"], (True, False, None))
        first = report["operators"][0]["configs"][0]
        self.assertEqual((first["seal_us"], first["eager_us"], first["compile_us"]), (82.0, 102.0, 92.0))
        self.assertAlmostEqual(first["speedup_vs_eager"], 102.0 / 82.0)
        self.assertAlmostEqual(first["speedup_vs_compile"], 92.0 / 82.0)
        self.assertEqual(first["seal_spread"]["samples"], 5)
        self.assertEqual((first["op_us"], first["verify_us"], first["verify_noise"]), (87.0, 81.5, 0.004))
        self.assertAlmostEqual(first["op_over_seal"], 87.0 / 82.0)
        self.assertEqual(first["op_graph_us"], 82.5)
        self.assertAlmostEqual(first["op_graph_over_seal"], 82.5 / 82.0)
        self.assertEqual(set(first["op_graph_spread"]), {"p10", "p90", "rel_noise", "samples"})
        second = report["operators"][0]["configs"][1]
        self.assertIsNone(second["compile_us"])
        self.assertIsNone(second["speedup_vs_compile"])
        self.assertIsNone(second["compile_spread"])
        self.assertEqual((second["op_us"], second["op_spread"], second["op_over_seal"], second["verify_us"]),
                         (None, None, None, None))
        self.assertEqual((second["op_graph_us"], second["op_graph_spread"], second["op_graph_over_seal"]),
                         (None, None, None))

    def test_text_table(self):
        text = ct.text_table(fixture_report())
        lines = text.splitlines()
        for col in ct.HEADER:
            self.assertIn(col, lines[0])
        self.assertTrue(set(lines[1]) <= {"-", " "})
        row = next(line for line in lines if line.startswith("rmsnorm_bf16") and "16384x4096" in line)
        cells = row.split()
        self.assertEqual(cells[2:], ["82.00", "87.00", "82.50", "81.50", "102.0", "92.00", "1.24x", "1.12x", "yes"])
        self.assertTrue(any("gemm_bf16" in line and "NO" in line for line in lines))
        self.assertIn("histogram_u8: no seal of histogram_u8 in store.db", text)

    def test_markdown_table(self):
        md = ct.markdown_table(fixture_report())
        lines = md.splitlines()
        self.assertTrue(lines[0].startswith("### Seals against PyTorch (2026-11-30, NVIDIA H200, torch 2.11.0+cu130)"))
        self.assertIn("fixture method line", md)
        rows = [line for line in lines if line.startswith("| ") and not line.startswith("| operator")]
        self.assertEqual(len(rows), 5)  # four configs and one operator without any
        for row in rows:
            self.assertEqual(row.count(" | "), 10, row)
        self.assertIn("| rmsnorm_bf16 | 16384x4096 | 82.00 | 87.00 | 82.50 | 81.50 | 102.0 | 92.00 | 1.24x | 1.12x | yes |",
                      md)
        self.assertIn("| gemm_bf16 | 8192^3 | — | — | — | — | — | — | — | — | — |", md)
        self.assertIn("- gemm_bf16 4096^3: seal wrong", md)

    def test_exit_code(self):
        report = fixture_report()
        self.assertEqual(ct.exit_code(report), 1)  # a wrong config, an operator without a seal
        report["operators"] = [report["operators"][0]]
        self.assertEqual(ct.exit_code(report), 0)
        report["operators"][0]["configs"][1]["status"] = "not compared"
        self.assertEqual(ct.exit_code(report), 0)
        report["operators"][0]["configs"][0]["status"] = "failed"
        self.assertEqual(ct.exit_code(report), 1)


class GraphLaunches(unittest.TestCase):
    """"op graph" sizes its graphs by forgek's worker's rule (TimingPolicy: graph_below_us 20,
    graph_target_us 200, at most 1000 launches)."""

    def test_long_calls_are_one_launch(self):
        self.assertEqual(ct.launches_per_graph(20.0), 1)
        self.assertEqual(ct.launches_per_graph(93.3), 1)

    def test_short_calls_fill_the_target(self):
        self.assertEqual(ct.launches_per_graph(5.0), 40)
        self.assertEqual(ct.launches_per_graph(19.9), 10)

    def test_a_call_counts_as_half_a_microsecond_at_least(self):
        self.assertEqual(ct.launches_per_graph(0.1), 400)
        self.assertEqual(ct.launches_per_graph(0.0), 400)
        self.assertGreaterEqual(ct.launches_per_graph(0.21), 1)


class TorchOpAndVerify(unittest.TestCase):
    """The torch op's call (argument order from its package's tables) and seal verify's times."""

    def test_torch_op_call_passes_tensors_scalars_and_keyword_sizes_in_the_packages_order(self):
        class Shapes:
            ARGUMENTS = ("x", "res")
            RESULTS = ("y", "res")
            KEYWORD_SIZES = ("G",)
        seen = []

        def fn(*args):
            seen.append(args)
            return ("Y", "RES")
        op = ct.TorchOp(fn, Shapes, (("eps", "f32"), ("k", "i32")), "/tmp/x")
        config = {"values": {"M": 4, "N": 8, "G": 3},
                  "scalars": [{"name": "k", "dtype": "i32", "value": 2}, {"name": "eps", "dtype": "f32", "value": 0.1}]}
        call = ct.TorchOpCall(op, {"x": "X", "res": "R", "w": "W"}, config)
        self.assertEqual(call(), {"y": "Y", "res": "RES"})
        self.assertEqual(seen, [("X", "R", ct.f32(0.1), 2, 3)])
        one = ct.TorchOpCall(ct.TorchOp(lambda *a: "Y", Shapes, (), ""), {"x": "X", "res": "R"}, config)
        one.results = ("y",)
        self.assertEqual(one(), {"y": "Y"})

    def test_verify_times_by_config(self):
        text = json.dumps({"seal": "abc", "ok": False, "configs": [
            {"config": "16384x4096", "correct": True, "median_us": 81.5, "noise": 0.004},
            {"config": "128x8192", "correct": True, "median_us": 4, "noise": 0.02}]})
        self.assertEqual(ct.parse_verify(text, "verify"), {"16384x4096": (81.5, 0.004), "128x8192": (4.0, 0.02)})

    def test_verify_errors_name_the_field(self):
        for text, want in (("nope", "not JSON"), ("[]", "not a JSON object"),
                           ('{"seal": "a", "ok": false, "error": "no GPU"}', "no GPU"),
                           ('{"configs": [{"config": "a", "noise": 0.1}]}', "configs[0]"),
                           ('{"ok": true}', "configs")):
            with self.assertRaises(ct.CompareError) as cm:
                ct.parse_verify(text, "seal verify x")
            self.assertIn(want, str(cm.exception), text)
            self.assertIn("seal verify x", str(cm.exception))


class Helpers(unittest.TestCase):
    def test_percentile_and_noise_match_forgek(self):
        us = [10.0, 12.0, 11.0, 13.0, 30.0, 11.5, 12.5, 10.5, 11.0, 12.0]
        self.assertAlmostEqual(ct.percentile(us, 50), 11.75)
        self.assertAlmostEqual(ct.percentile(us, 10), 10.45)
        self.assertAlmostEqual(ct.percentile(us, 90), 14.7)
        s = ct.summarize(us)
        self.assertAlmostEqual(s["rel_noise"], (14.7 - 10.45) / 2 / 11.75)
        self.assertEqual(s["samples"], 10)
        self.assertIsNone(ct.summarize([]))
        self.assertEqual(ct.percentile([], 50), 0.0)

    def test_expressions(self):
        v = {"BATCH": 64, "CTX": 4096, "PAGE": 16, "T": 64, "P": 4096, "V": 128256}
        self.assertEqual(ct.eval_expr("BATCH*CTX/PAGE", v), 16384)
        self.assertEqual(ct.eval_expr("min(T, P)", v), 64)
        self.assertEqual(ct.eval_expr("V", v), 128256)
        self.assertEqual(ct.eval_expr(4294967296, v), 4294967296)
        self.assertEqual(ct.eval_expr("-7 / 2", {}), -3)
        self.assertEqual(ct.eval_expr("-7 % 2", {}), -1)
        self.assertEqual(ct.eval_expr("ceil_div(1000, 128)", {}), 8)
        self.assertEqual(ct.eval_expr("pow2(10) + log2(1024)", {}), 1034)
        for bad in ("X + 1", "1 / 0", "2 ** 3", "__import__('os')"):
            with self.subTest(bad=bad), self.assertRaises(ct.CompareError):
                ct.eval_expr(bad, v)

    def test_partition(self):
        import random
        for seed in range(20):
            parts = ct.make_partition(16384, 8, 8, 256, random.Random(seed))
            self.assertEqual(sum(parts), 16384)
            self.assertEqual(len(parts), 8)
            self.assertTrue(all(p % 8 == 0 and p >= 256 for p in parts), parts)
        self.assertNotEqual(ct.make_partition(16384, 8, 8, 256, random.Random(1)),
                            ct.make_partition(16384, 8, 8, 256, random.Random(2)))
        with self.assertRaises(ct.CompareError):
            ct.make_partition(1000, 8, 8, 256, random.Random(0))

    def test_f32_rounding(self):
        self.assertEqual(ct.f32(0.9), 0.8999999761581421)
        self.assertEqual(ct.f32(1e-8), struct.unpack("<f", struct.pack("<f", 1e-8))[0])

    def test_driver_structures_match_cuda_h(self):
        # sizeof / offsetof of CUDA 13's cuda.h (checked with a C compiler against the header).
        self.assertEqual(ctypes.sizeof(ct.LaunchAttribute), 72)
        self.assertEqual(ct.LaunchAttribute.value.offset, 8)
        self.assertEqual(ctypes.sizeof(ct.LaunchConfig), 56)
        self.assertEqual((ct.LaunchConfig.hStream.offset, ct.LaunchConfig.attrs.offset,
                          ct.LaunchConfig.numAttrs.offset), (32, 40, 48))
        m = ct.TensorMapStorage()
        self.assertEqual(m.address % 128, 0)
        self.assertEqual(len(m.raw()), 128)

    def test_launch_config_with_cluster(self):
        launch = {"grid": [4, 2, 1], "block": [128, 1, 1], "smem": 1024, "cluster": [2, 1, 1]}
        cfg, attr = ct.launch_config(launch, 0)
        self.assertEqual((cfg.gridDimX, cfg.gridDimY, cfg.blockDimX, cfg.sharedMemBytes), (4, 2, 128, 1024))
        self.assertEqual(cfg.numAttrs, 1)
        self.assertEqual(cfg.attrs[0].id, ct.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
        self.assertEqual((attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z), (2, 1, 1))
        cfg, _ = ct.launch_config(dict(launch, cluster=[1, 1, 1]), 0)
        self.assertEqual(cfg.numAttrs, 0)

    def test_tensor_map_geometry(self):
        dims, strides, box, elem = ct.tensor_map_geometry([4096, 32768], [4, 256], 4)
        self.assertEqual((dims, strides, box, elem), ([32768, 4096], [131072], [256, 4], [1, 1]))
        dims, strides, box, _ = ct.tensor_map_geometry([8, 64, 128], [1, 64, 64], 2)
        self.assertEqual((dims, strides, box), ([128, 64, 8], [256, 16384], [64, 64, 1]))
        with self.assertRaises(ct.CompareError):
            ct.tensor_map_geometry([4, 4], [4], 2)

    def test_pack_args(self):
        tm = ct.TensorMapStorage()
        ctypes.memmove(tm.address, bytes(range(128)), 128)
        args = [{"kind": "tensor", "name": "x"}, {"kind": "workspace", "name": "w"},
                {"kind": "tensor_map", "name": "tm"}, {"kind": "i32", "name": "M", "value": -5},
                {"kind": "i64", "name": "N", "value": 1 << 40}, {"kind": "f32", "name": "eps", "value": 0.5}]
        storage, array = ct.pack_args(args, {"x": 0x7F0000001000, "w": 0x7F0000002000}, {"tm": tm})
        got = [ct.arg_bytes(s) for s in storage]
        self.assertEqual(got[0], struct.pack("<Q", 0x7F0000001000))
        self.assertEqual(got[1], struct.pack("<Q", 0x7F0000002000))
        self.assertEqual(got[2], bytes(range(128)))
        self.assertEqual(got[3], struct.pack("<i", -5))
        self.assertEqual(got[4], struct.pack("<q", 1 << 40))
        self.assertEqual(got[5], struct.pack("<f", 0.5))
        self.assertEqual(array[2], tm.address)
        self.assertEqual(array[3], ctypes.addressof(storage[3]))
        with self.assertRaises(ct.CompareError):
            ct.pack_args([{"kind": "tensor", "name": "missing"}], {}, {})


class ForgekCalls(unittest.TestCase):
    """`forgek --json seal list` read through a stand-in binary that records its arguments."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.dir.name, "args.log")
        self.bin = os.path.join(self.dir.name, "forgek")
        seals = [{"id": "bbbb2222", "operator": "softmax_fp32", "arch": "sm90"},
                 {"id": "aaaa1111", "operator": "gemm_bf16", "arch": "sm90"},
                 {"id": "0000old0", "operator": "softmax_fp32", "arch": "sm90"}]
        with open(self.bin, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n"
                    f"echo \"$@\" >> {self.log}\n"
                    "case \"$*\" in *'seal list'*) cat <<'EOF'\n" + json.dumps(seals) + "\nEOF\n;;\n"
                    "*) echo 'error: no such seal' >&2; exit 1;; esac\n")
        os.chmod(self.bin, 0o755)

    def tearDown(self):
        self.dir.cleanup()

    def args(self, arch=""):
        class A:
            pass
        a = A()
        a.forgek, a.store, a.operators, a.arch = self.bin, "/tmp/store.db", OPERATORS, arch
        return a

    def test_newest_seal_per_operator(self):
        self.assertEqual(ct.newest_seals(self.args("sm90")), {"softmax_fp32": "bbbb2222", "gemm_bf16": "aaaa1111"})
        with open(self.log, encoding="utf-8") as f:
            line = f.read().strip()
        self.assertEqual(line, f"--store /tmp/store.db --operators {OPERATORS} --arch sm90 --json seal list")

    def test_a_failing_command_is_named(self):
        with self.assertRaises(ct.CompareError) as cm:
            ct.forgek(self.args(), "seal", "export", "nope", "/tmp/x")
        self.assertIn("seal export nope", str(cm.exception))
        self.assertIn("no such seal", str(cm.exception))


class CommandLine(unittest.TestCase):
    def run_script(self, *args):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env, timeout=60)

    def test_help(self):
        p = self.run_script("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        for option in ("--forgek", "--store", "--ops", "--out", "--markdown", "--reps", "--no-torch-op", "--no-op-graph",
                       "--no-verify"):
            self.assertIn(option, p.stdout)

    def test_usage_errors_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            store = os.path.join(d, "store.db")
            open(store, "w").close()
            cases = [
                ([], "--forgek"),
                (["--forgek", os.path.join(d, "nope"), "--store", store], "--forgek"),
                (["--forgek", sys.executable, "--store", os.path.join(d, "none.db")], "--store"),
                (["--forgek", sys.executable, "--store", store, "--ops", "gemm_bf16,no_such_op"], "no_such_op"),
                (["--forgek", sys.executable, "--store", store, "--reps", "1"], "--reps"),
                (["--forgek", sys.executable, "--store", store, "--out", os.path.join(d, "x", "y.json")], "--out"),
            ]
            for argv, needle in cases:
                with self.subTest(argv=argv):
                    p = self.run_script(*argv)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertIn(needle, p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
