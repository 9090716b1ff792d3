#!/usr/bin/env python3
"""Tests scripts/forgek_torch_helper.py on the CPU (needs torch: python3-torch): `describe` of the
KernelBench problems under tests/fixtures/import/kernelbench/ and of the FlashInfer-Bench
definitions under tests/fixtures/import/flashinfer/, refusals located in the file, the framed
protocol's round trip of every dtype it carries, and `run` against the problem's own Model or the
definition's reference.

Run: python3 scripts/forgek_torch_helper_test.py   (exit 0 when every test passes)
"""
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "import", "kernelbench")
FLASHINFER = os.path.join(ROOT, "tests", "fixtures", "import", "flashinfer")
SCRIPT = os.path.join(HERE, "forgek_torch_helper.py")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import forgek_torch_helper as helper  # noqa: E402
import torch  # noqa: E402

# The float64 golden on the CPU even where torch has CUDA: the tests compare it bit for bit.
os.environ["FORGEK_TORCH_DEVICE"] = "cpu"


def describe(path, *extra):
    p = subprocess.run([sys.executable, SCRIPT, "describe", path, *extra], capture_output=True, text=True, timeout=300)
    return p.returncode, json.loads(p.stdout)


def write_problem(folder, text):
    path = os.path.join(folder, "problem.py")
    with open(path, "w") as f:
        f.write(text)
    return path


PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}

rows = 64
cols = 128

def get_inputs():
    return [{inputs}]

def get_init_inputs():
    return []
"""


class DescribeTest(unittest.TestCase):
    def test_relu_names_both_sizes(self):
        rc, d = describe(os.path.join(FIXTURES, "level1_19_ReLU.py"))
        self.assertEqual(rc, 0, d)
        self.assertEqual(d["params"], ["batch_size", "dim"])
        self.assertEqual(d["config"], {"batch_size": 4096, "dim": 393216})
        x, out = d["tensors"]
        self.assertEqual((x["name"], x["role"], x["dtype"], x["shape"]), ("x", "input", "f32", ["batch_size", "dim"]))
        self.assertEqual(x["init"], {"dist": "uniform", "lo": 0, "hi": 1})
        self.assertEqual((out["name"], out["role"], out["shape"]), ("out", "output", ["batch_size", "dim"]))

    def test_cumsum_keeps_a_tuple_size_literal_and_the_axis_fixed(self):
        rc, d = describe(os.path.join(FIXTURES, "level1_89_cumsum.py"))
        self.assertEqual(rc, 0, d)
        self.assertEqual(d["tensors"][0]["shape"], ["batch_size", 32768])
        self.assertEqual(d["fixed"], {"dim": 1})
        # 32768 x 32768 is 8 GiB: the outputs' magnitude comes from the probe sizes, whose rows are as long.
        self.assertEqual(d["magnitude_at"], "probe")
        self.assertGreater(d["max_abs"]["out"], 10000)

    def test_outputs_magnitude_at_the_config_sizes(self):
        # A running sum of 32768 uniform [0, 1) values ends near 16384: KernelBench's rtol is of that.
        rc, d = describe(os.path.join(FIXTURES, "level1_89_cumsum.py"), "--sizes", "batch_size=2")
        self.assertEqual(rc, 0, d)
        self.assertEqual(d["magnitude_at"], "config")
        self.assertGreater(d["max_abs"]["out"], 15000)
        self.assertLess(d["max_abs"]["out"], 17500)

    def test_sizes_override_the_config(self):
        rc, d = describe(os.path.join(FIXTURES, "level1_23_Softmax.py"), "--sizes", "batch_size=128,dim=4096")
        self.assertEqual(rc, 0, d)
        self.assertEqual(d["config"], {"batch_size": 128, "dim": 4096})

    def test_unknown_size_is_refused_naming_the_constants(self):
        rc, d = describe(os.path.join(FIXTURES, "level1_23_Softmax.py"), "--sizes", "rows=3")
        self.assertEqual(rc, 1)
        self.assertIn("rows", d["error"])
        self.assertIn("batch_size, dim", d["error"])

    def test_model_parameters_are_inputs_with_the_real_bound(self):
        rc, d = describe(os.path.join(FIXTURES, "level2_9_Matmul_Subtract_Multiply_ReLU.py"))
        self.assertEqual(rc, 0, d)
        by = {t["name"]: t for t in d["tensors"]}
        self.assertEqual(by["linear_weight"]["shape"], ["out_features", "in_features"])
        self.assertEqual(by["linear_weight"]["state_key"], "linear.weight")
        self.assertEqual(by["linear_bias"]["shape"], ["out_features"])
        bound = by["linear_weight"]["init"]["hi"]
        self.assertAlmostEqual(bound, 8192 ** -0.5, delta=1e-4)  # nn.Linear's, at in_features=8192
        self.assertEqual(d["fixed"], {"subtract_value": 2.0, "multiply_value": 1.5})

    def test_rmsnorm_four_dimensions(self):
        rc, d = describe(os.path.join(FIXTURES, "level1_36_RMSNorm_.py"))
        self.assertEqual(rc, 0, d)
        self.assertEqual(d["tensors"][-1]["shape"], ["batch_size", "features", "dim1", "dim2"])

    def test_syntax_error_is_located(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_problem(tmp, PROBLEM.format(body="torch.relu(x", inputs="torch.rand(rows, cols)"))
            rc, d = describe(path)
            self.assertEqual(rc, 1)
            self.assertIn("syntax error", d["error"])
            self.assertEqual(d["file"], path)
            self.assertGreater(d["line"], 0)

    def test_forward_error_is_located(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_problem(tmp, PROBLEM.format(body="x @ x", inputs="torch.rand(rows, cols)"))
            rc, d = describe(path)
            self.assertEqual(rc, 1)
            self.assertIn("Model.forward raised", d["error"])
            self.assertEqual(d["line"], 9)

    def test_non_tensor_output_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, d = describe(write_problem(tmp, PROBLEM.format(body="x.sum().item()", inputs="torch.rand(rows, cols)")))
            self.assertEqual(rc, 1)
            self.assertIn("not a tensor", d["error"])

    def test_data_dependent_shape_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, d = describe(write_problem(tmp, PROBLEM.format(body="x[x > 0.5]", inputs="torch.rand(rows, cols)")))
            self.assertEqual(rc, 1)
            self.assertIn("out: dimension 0", d["error"])

    def test_bool_output_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, d = describe(write_problem(tmp, PROBLEM.format(body="x > 0.5", inputs="torch.rand(rows, cols)")))
            self.assertEqual(rc, 1)
            self.assertIn("torch.bool", d["error"])

    def test_a_random_forward_is_refused_at_its_line(self):
        # nn.Dropout in training mode (a Model's default) draws a new mask on every call.
        with tempfile.TemporaryDirectory() as tmp:
            body = "torch.nn.functional.dropout(x, 0.5, training=True)"
            rc, d = describe(write_problem(tmp, PROBLEM.format(body=body, inputs="torch.rand(rows, cols)")))
            self.assertEqual(rc, 1)
            self.assertIn("Model.forward gives different outputs on the same inputs", d["error"])
            self.assertIn("no check of a distribution", d["error"])
            self.assertEqual(d["line"], 8)

    def test_a_seeded_forward_is_not_random(self):
        # A forward that seeds its own generator gives the same outputs on every call: imported.
        with tempfile.TemporaryDirectory() as tmp:
            body = "x + torch.rand(x.shape, generator=torch.Generator().manual_seed(7))"
            rc, d = describe(write_problem(tmp, PROBLEM.format(body=body, inputs="torch.rand(rows, cols)")))
            self.assertEqual(rc, 0, d)

    def test_missing_model_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, d = describe(write_problem(tmp, "x = 1\n"))
            self.assertEqual(rc, 1)
            self.assertIn("no `Model`", d["error"])


def definition(name):
    with open(os.path.join(FLASHINFER, name)) as f:
        return json.load(f)


def write_json(folder, doc, name="golden.json"):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


ACTIVATIONS = os.path.join(ROOT, "tests", "fixtures", "import", "written", "activations_bf16.py")


class SeedTest(unittest.TestCase):
    def seed(self, path, *extra):
        p = subprocess.run([sys.executable, SCRIPT, "seed", path, *extra], capture_output=True, text=True, timeout=300)
        return p.returncode, json.loads(p.stdout)

    def test_relu_is_one_thread_per_element(self):
        rc, d = self.seed(os.path.join(FIXTURES, "level1_19_ReLU.py"))
        self.assertEqual(rc, 0, d)
        text = d["seed"]
        self.assertIn('"args": ["x", "out", "batch_size", "dim"]', text)
        self.assertIn('"grid": ["ceil_div(batch_size * dim, THREADS)"]', text)
        self.assertIn("const float v1 = fmaxf(v0, 0.f);", text)
        self.assertIn("out[i] = v1;", text)

    def test_a_chain_of_activations_and_numbers_in_bf16(self):
        rc, d = self.seed(ACTIVATIONS)
        self.assertEqual(rc, 0, d)
        text = d["seed"]
        for piece in ("#include <cuda_bf16.h>", "const __nv_bfloat16* __restrict__ a", "__bfloat162float(b[i])",
                      "(v0 > 0.f ? v0 : 0.2f * v0)", "(v2 * 2.0f)", "(1.f / (1.f + expf(-v1)))",
                      "tanhf(0.7978845608028654f", "fminf(fmaxf(v6, -1.0f), __int_as_float(0x7f800000))",
                      "out[i] = __float2bfloat16(v7);"):
            self.assertIn(piece, text)

    def test_what_is_not_elementwise_is_refused_naming_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, d = self.seed(write_problem(tmp, PROBLEM.format(body="torch.matmul(x, x)", inputs="torch.rand(rows, rows)")))
        self.assertEqual(rc, 1)
        self.assertIn("forward calls matmul", d["error"])
        rc, d = self.seed(os.path.join(FIXTURES, "level2_9_Matmul_Subtract_Multiply_ReLU.py"))
        self.assertEqual(rc, 1)
        self.assertIn("every input has the output's shape", d["error"])


class DefinitionTest(unittest.TestCase):
    def test_gemm_tensors_follow_the_axes(self):
        rc, d = describe(os.path.join(FLASHINFER, "gemm_n4096_k4096.json"), "--sizes", "M=3")
        self.assertEqual(rc, 0, d)
        self.assertEqual(d["kind"], "flashinfer")
        self.assertEqual(d["params"], ["M", "N", "K"])
        self.assertEqual(d["config"], {"M": 3, "N": 4096, "K": 4096})
        a, b, c = d["tensors"]
        self.assertEqual((a["name"], a["role"], a["dtype"], a["shape"]), ("A", "input", "f16", ["M", "K"]))
        self.assertEqual(a["init"], {"dist": "normal", "mean": 0, "std": 1})
        self.assertEqual((b["name"], b["shape"]), ("B", ["N", "K"]))
        self.assertEqual((c["name"], c["role"], c["shape"]), ("C", "output", ["M", "N"]))
        # randn rows of 4096: outputs of standard deviation 64, the largest a few times that.
        self.assertGreater(d["max_abs"]["C"], 64)
        self.assertLess(d["max_abs"]["C"], 640)

    def test_golden_json_gives_the_scalar_inputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_json(tmp, {"flashinfer": definition("rmsnorm_d4096.json"), "scalars": {"eps": 1e-6}})
            rc, d = describe(path, "--sizes", "batch_size=2")
            self.assertEqual(rc, 0, d)
            self.assertEqual([t["name"] for t in d["tensors"]], ["input", "weight", "output"])
            self.assertEqual(d["scalars"], [{"name": "eps", "dtype": "f32", "value": 1e-6}])

    def refused(self, doc, sizes, want):
        with tempfile.TemporaryDirectory() as tmp:
            rc, d = describe(write_json(tmp, doc, "def.json"), "--sizes", sizes)
            self.assertEqual(rc, 1, d)
            self.assertIn(want, d["error"])
            return d

    def test_refusals_name_the_field(self):
        gemm = definition("gemm_n4096_k4096.json")
        self.refused(gemm, "", "no value for the var axis M")
        self.refused(gemm, "M=2,N=8", "N is a const axis of the definition (4096), not 8")
        self.refused(gemm, "M=2,Q=8", "--sizes names Q, not an axis")
        bad = json.loads(json.dumps(gemm))
        bad["inputs"]["A"]["dtype"] = "float8_e4m3fn"
        self.refused(bad, "M=2", "inputs.A.dtype: float8_e4m3fn, which forgek does not support")
        bad = json.loads(json.dumps(gemm))
        bad["outputs"]["C"]["shape"] = ["M", "P"]
        self.refused(bad, "M=2", "outputs.C.shape: 'P' is not an axis")
        bad = json.loads(json.dumps(gemm))
        bad["axes"]["NNZ"] = {"type": "var"}
        bad["outputs"]["C"]["shape"] = ["NNZ"]
        self.refused(bad, "M=2,NNZ=5", "axis NNZ is in no input's shape")
        self.refused(definition("rmsnorm_d4096.json"), "batch_size=2", "inputs.eps: a scalar input with no value")

    def test_reference_errors_are_refused(self):
        gemm = definition("gemm_n4096_k4096.json")
        gemm["reference"] = "import torch\n\ndef run(A, B):\n    return torch.matmul(A, B.T\n"
        self.refused(gemm, "M=2", "reference: syntax error at its line 4")
        gemm["reference"] = "import torch\n\ndef run(A, B):\n    return A[:, :8]\n"
        self.refused(gemm, "M=2", "outputs.C: the reference returns shape [2, 8]")
        gemm["reference"] = "import torch\n"
        self.refused(gemm, "M=2", "defines no function run")

    def test_a_sampling_reference_is_refused(self):
        # FlashInfer-Bench's sampling definitions draw from probs: no one golden to check against.
        sampling = {
            "name": "top_k_sampling_from_probs_v8", "op_type": "sampling",
            "axes": {"batch_size": {"type": "var"}, "vocab_size": {"type": "const", "value": 8}},
            "inputs": {"probs": {"shape": ["batch_size", "vocab_size"], "dtype": "float32"}},
            "outputs": {"samples": {"shape": ["batch_size"], "dtype": "int64"}},
            "reference": "import torch\n\ndef run(probs):\n    return torch.multinomial(probs, 1).squeeze(-1)\n",
        }
        d = self.refused(sampling, "batch_size=64", "reference: run(...) gives different outputs on the same inputs")
        self.assertIn("no check of a distribution", d["error"])
        # The same definition made deterministic (argmax) imports.
        sampling["reference"] = "import torch\n\ndef run(probs):\n    return probs.argmax(-1)\n"
        with tempfile.TemporaryDirectory() as tmp:
            rc, d = describe(write_json(tmp, sampling, "def.json"), "--sizes", "batch_size=64")
            self.assertEqual(rc, 0, d)

    def test_the_reference_lives_in_an_importable_module(self):
        # torch.compile imports run.__module__; a namespace of its own made it fail with ModuleNotFoundError.
        import importlib
        run = helper.reference_run(definition("gemm_n4096_k4096.json"))
        module = importlib.import_module(run.__module__)
        self.assertIs(module.run, run)

    def test_invalid_json_is_located(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "def.json")
            with open(path, "w") as f:
                f.write('{\n  "name": "x",\n  "axes": {,\n}\n')
            rc, d = describe(path)
            self.assertEqual(rc, 1)
            self.assertEqual(d["line"], 3)
            self.assertIn("invalid JSON", d["error"])


def request(op, tensors, **extra):
    """One framed request of (name, tensor) pairs, with more header members (sizes) in `extra`."""
    buf = io.BytesIO()
    metas, datas = [], []
    for name, t in tensors:
        m, data = helper.from_tensor(torch, name, t)
        metas.append(m)
        datas.append(data)
    helper.write_message(buf, dict({"op": op, "tensors": metas}, **extra), datas)
    return buf.getvalue()


def exchange(raw, path=None, sizes=None):
    out = io.BytesIO()
    helper.serve(path, sizes or {}, io.BytesIO(raw), out)
    out.seek(0)
    replies = []
    while True:
        header, blobs = helper.read_message(out)
        if header is None:
            return replies
        tensors = [helper.to_tensor(torch, m, b) for m, b in zip(header.get("tensors", []), blobs)]
        replies.append((header, tensors))


class ProtocolTest(unittest.TestCase):
    def sample(self, dtype):
        g = torch.Generator().manual_seed(1)
        if dtype == torch.bool:
            return torch.rand(3, 5, generator=g) > 0.5
        if dtype.is_floating_point:
            return (torch.randn(3, 5, generator=g, dtype=torch.float64) * 100).to(dtype)
        info = torch.iinfo(dtype)
        return torch.randint(info.min, info.max, (3, 5), generator=g, dtype=torch.int64).to(dtype)

    def test_every_dtype_round_trips_bit_exact(self):
        for dt, (tname, size) in helper.DTYPES.items():
            with self.subTest(dtype=dt):
                t = self.sample(getattr(torch, tname))
                (header, tensors), = exchange(request("echo", [("t", t)]))
                self.assertTrue(header["ok"], header)
                self.assertEqual(header["tensors"][0]["dtype"], dt)
                self.assertEqual(header["tensors"][0]["nbytes"], 15 * size)
                self.assertEqual(tensors[0].dtype, t.dtype)
                self.assertTrue(torch.equal(tensors[0], t))

    def test_many_tensors_and_empty_and_several_requests(self):
        a, b = self.sample(torch.float16), torch.zeros(0, 4, dtype=torch.int32)
        raw = request("echo", [("a", a), ("b", b)]) + request("echo", [("c", self.sample(torch.int64))])
        replies = exchange(raw)
        self.assertEqual(len(replies), 2)
        self.assertEqual([m["name"] for m in replies[0][0]["tensors"]], ["a", "b"])
        self.assertEqual(list(replies[0][1][1].shape), [0, 4])

    def test_wrong_size_is_an_error_reply_and_serving_goes_on(self):
        bad = b'{"op": "echo", "tensors": [{"name": "t", "dtype": "f32", "shape": [4], "nbytes": 8}]}\n' + bytes(8)
        replies = exchange(bad + request("echo", [("u", self.sample(torch.uint8))]))
        self.assertFalse(replies[0][0]["ok"])
        self.assertIn("8 bytes for shape [4] of f32", replies[0][0]["error"])
        self.assertTrue(replies[1][0]["ok"])

    def test_unknown_dtype_and_op(self):
        bad = b'{"op": "echo", "tensors": [{"name": "t", "dtype": "e4m3", "shape": [1], "nbytes": 1}]}\n' + bytes(1)
        replies = exchange(bad + request("sum", []))
        self.assertIn("dtype e4m3", replies[0][0]["error"])
        self.assertIn("unknown op", replies[1][0]["error"])

    def test_truncated_input_raises(self):
        raw = request("echo", [("t", self.sample(torch.float32))])[:-3]
        with self.assertRaises(ValueError):
            exchange(raw)

    def test_run_matches_the_model_in_float64_and_returns_f32(self):
        path = os.path.join(FIXTURES, "level2_9_Matmul_Subtract_Multiply_ReLU.py")
        sizes = {"batch_size": 8, "in_features": 32, "out_features": 16}
        x = torch.rand(8, 32)
        w, b = torch.rand(16, 32) - 0.5, torch.rand(16) - 0.5
        (header, tensors), = exchange(request("run", [("x", x), ("linear_weight", w), ("linear_bias", b)]), path, sizes)
        self.assertTrue(header["ok"], header)
        self.assertEqual(header["tensors"][0]["name"], "out")
        self.assertEqual(header["tensors"][0]["dtype"], "f32")
        want = torch.relu(((x.double() @ w.double().T + b.double()) - 2.0) * 1.5).float()
        self.assertTrue(torch.equal(tensors[0], want))

    def test_on_device_from_a_helper_on_the_cpu_is_refused_and_serving_goes_on(self):
        path = os.path.join(FIXTURES, "level2_9_Matmul_Subtract_Multiply_ReLU.py")
        on_device = {"inputs": [], "outputs": []}
        replies = exchange(request("run", [], on_device=on_device) + request("echo", []), path, {"batch_size": 8})
        self.assertFalse(replies[0][0]["ok"])
        self.assertIn("computes on the cpu, so it cannot map the worker's GPU memory", replies[0][0]["error"])
        self.assertTrue(replies[1][0]["ok"])

    def test_run_on_device_writes_each_output_asked_for_and_always_unmaps(self):
        # The mapping faked by CPU tensors: what is written where, and the unmapping, are the helper's.
        class FakeIpc:
            def __init__(self, tensors):
                self.tensors, self.closed, self.synced = tensors, 0, 0

            def tensor(self, meta):
                return self.tensors[meta["name"]]

            def synchronize(self):
                self.synced += 1

            def close(self):
                self.closed += 1

        path = os.path.join(FIXTURES, "level2_9_Matmul_Subtract_Multiply_ReLU.py")
        sizes = {"batch_size": 8, "in_features": 32, "out_features": 16}
        golden = helper.Golden(torch, path, sizes)
        x, w, b = torch.rand(8, 32), torch.rand(16, 32) - 0.5, torch.rand(16) - 0.5
        truth = torch.full((8, 16), float("nan"))
        ipc = FakeIpc({"x": x, "linear_weight": w, "linear_bias": b, "out": truth})
        meta = lambda n, dt, shape: {"name": n, "dtype": dt, "shape": shape}  # noqa: E731
        on_device = {"inputs": [meta("x", "f32", [8, 32]), meta("linear_weight", "f32", [16, 32]),
                                meta("linear_bias", "f32", [16])],
                     "outputs": [meta("out", "f32", [8, 16])]}
        written = helper.run_on_device(torch, golden, on_device, ipc)
        self.assertEqual(written, [{"name": "out", "dtype": "f32", "shape": [8, 16], "nbytes": 512}])
        want = torch.relu(((x.double() @ w.double().T + b.double()) - 2.0) * 1.5).float()
        self.assertTrue(torch.equal(truth, want))
        self.assertEqual((ipc.synced, ipc.closed), (1, 1))
        # A truth of another shape is left as it was, and the list says what was computed.
        small = torch.full((8, 8), float("nan"))
        ipc.tensors["out"] = small
        on_device["outputs"] = [meta("out", "f32", [8, 8])]
        written = helper.run_on_device(torch, golden, on_device, ipc)
        self.assertEqual(written[0]["shape"], [8, 16])
        self.assertTrue(bool(small.isnan().all()))
        # A golden that raises still unmaps what was mapped.
        del ipc.tensors["linear_bias"]
        on_device["inputs"][2]["name"] = "linear_bias"
        ipc.tensors["out"] = truth
        with self.assertRaises(KeyError):
            helper.run_on_device(torch, golden, on_device, ipc)
        self.assertEqual(ipc.closed, 3)

    def test_run_without_a_parameter_is_an_error(self):
        path = os.path.join(FIXTURES, "level2_9_Matmul_Subtract_Multiply_ReLU.py")
        sizes = {"batch_size": 8, "in_features": 32, "out_features": 16}
        (header, _), = exchange(request("run", [("x", torch.rand(8, 32))]), path, sizes)
        self.assertFalse(header["ok"])
        self.assertIn("linear_bias, linear_weight", header["error"])

    def test_run_calls_the_definition_reference(self):
        path = os.path.join(FLASHINFER, "fused_add_rmsnorm_h4096.json")
        g = torch.Generator().manual_seed(2)
        hs, res = (torch.randn(3, 4096, generator=g).bfloat16() for _ in range(2))
        w = torch.randn(4096, generator=g).bfloat16()
        (header, tensors), = exchange(request("run", [("hidden_states", hs), ("residual", res), ("weight", w)]), path)
        self.assertTrue(header["ok"], header)
        self.assertEqual([(m["name"], m["dtype"], m["shape"]) for m in header["tensors"]], [("output", "f32", [3, 4096])])
        x = hs.float() + res.float()
        want = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-5) * w.float()
        self.assertTrue(torch.allclose(tensors[0], want, rtol=1e-6, atol=1e-6))

    def test_run_gives_the_scalars_of_golden_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_json(tmp, {"flashinfer": definition("rmsnorm_d4096.json"), "scalars": {"eps": 0.5}})
            x = torch.randn(2, 4096).half()
            w = torch.randn(4096).half()
            (header, tensors), = exchange(request("run", [("input", x), ("weight", w)]), path)
            self.assertTrue(header["ok"], header)
            xd = x.double()
            want = (xd * torch.rsqrt(xd.float().pow(2).mean(-1, keepdim=True) + 0.5) * w.double()).float()
            self.assertTrue(torch.allclose(tensors[0], want, rtol=1e-6, atol=1e-6))
            (header, _), = exchange(request("run", [("input", x)]), path)
            self.assertFalse(header["ok"])
            self.assertIn("missing input tensor weight", header["error"])

    def test_each_run_may_bring_its_own_sizes(self):
        path = os.path.join(FIXTURES, "level2_9_Matmul_Subtract_Multiply_ReLU.py")
        raw = b""
        cases = []
        for batch, inf, outf in ((4, 8, 2), (3, 16, 5)):
            x = torch.rand(batch, inf)
            w, b = torch.rand(outf, inf) - 0.5, torch.rand(outf) - 0.5
            cases.append((x, w, b))
            raw += request("run", [("x", x), ("linear_weight", w), ("linear_bias", b)],
                           sizes={"batch_size": batch, "in_features": inf, "out_features": outf})
        replies = exchange(raw, path)
        self.assertEqual(len(replies), 2)
        for (header, tensors), (x, w, b) in zip(replies, cases):
            self.assertTrue(header["ok"], header)
            self.assertEqual(header["device"], "cpu")
            self.assertGreaterEqual(header["compute_s"], 0)
            want = torch.relu(((x.double() @ w.double().T + b.double()) - 2.0) * 1.5).float()
            self.assertTrue(torch.equal(tensors[0], want))
        bad = exchange(request("run", [("x", torch.rand(2, 2))], sizes=[1, 2]), path)
        self.assertIn("sizes must be an object", bad[0][0]["error"])

    def test_time_samples_eager_and_compile_then_run_still_computes_the_golden(self):
        path = os.path.join(FIXTURES, "level2_9_Matmul_Subtract_Multiply_ReLU.py")
        sizes = {"batch_size": 8, "in_features": 32, "out_features": 16}
        x = torch.rand(8, 32)
        w, b = torch.rand(16, 32) - 0.5, torch.rand(16) - 0.5
        tensors = [("x", x), ("linear_weight", w), ("linear_bias", b)]
        raw = request("time", tensors, sizes=sizes, reps=7, budget_s=30) + request("run", tensors, sizes=sizes)
        (timed, none), (ran, outs) = exchange(raw, path)
        self.assertTrue(timed["ok"], timed)
        self.assertEqual(none, [])
        self.assertEqual(timed["torch"], torch.__version__)
        eager = timed["timing"]["eager"]["us"]
        self.assertEqual(len(eager), 7)
        self.assertTrue(all(t > 0 for t in eager), eager)
        compiled = timed["timing"]["compile"]
        if hasattr(torch, "compile"):  # torch 2: sampled as often as eager, or the compile's failure
            self.assertTrue(len(compiled.get("us", [])) == 7 or "error" in compiled, compiled)
        else:
            self.assertEqual(compiled, {"error": "torch %s has no torch.compile" % torch.__version__})
        # The golden after the yardstick: the float64 Model is built again, not the native one reused.
        self.assertTrue(ran["ok"], ran)
        want = torch.relu(((x.double() @ w.double().T + b.double()) - 2.0) * 1.5).float()
        self.assertTrue(torch.equal(outs[0], want))

    def test_time_stops_at_its_budget_with_five_samples_at_least(self):
        path = os.path.join(FLASHINFER, "fused_add_rmsnorm_h4096.json")
        hs, res = (torch.randn(2, 4096).bfloat16() for _ in range(2))
        w = torch.randn(4096).bfloat16()
        (header, _), = exchange(request("time", [("hidden_states", hs), ("residual", res), ("weight", w)],
                                        reps=100000, budget_s=0), path)
        self.assertTrue(header["ok"], header)
        self.assertEqual(len(header["timing"]["eager"]["us"]), 5)

    def test_time_without_a_parameter_or_a_problem_is_an_error(self):
        path = os.path.join(FIXTURES, "level2_9_Matmul_Subtract_Multiply_ReLU.py")
        sizes = {"batch_size": 8, "in_features": 32, "out_features": 16}
        (header, _), = exchange(request("time", [("x", torch.rand(8, 32))], sizes=sizes), path)
        self.assertFalse(header["ok"])
        self.assertIn("linear_bias, linear_weight", header["error"])
        (header, _), = exchange(request("time", []))
        self.assertIn("time needs a problem file", header["error"])

    def test_time_of_a_torch_ops_yardstick_draws_its_own_inputs(self):
        config = {"op": "softmax_fp32", "name": "small", "values": {"M": 4, "N": 8}, "scalars": [],
                  "tensors": [{"name": "x", "role": "input", "dtype": "f32", "shape": [4, 8],
                               "init": {"dist": "normal", "mean": 0, "std": 2}},
                              {"name": "y", "role": "output", "dtype": "f32", "shape": [4, 8]}]}
        raw = request("time", [], torch_ops="softmax_fp32", config=config, reps=6, budget_s=30)
        raw += request("time", [], torch_ops="no_such_op", config=config)
        raw += request("time", [], torch_ops="softmax_fp32")
        (timed, none), (unknown, _), (no_config, _) = exchange(raw)
        self.assertTrue(timed["ok"], timed)
        self.assertEqual(none, [])
        self.assertEqual(len(timed["timing"]["eager"]["us"]), 6)
        self.assertTrue("us" in timed["timing"]["compile"] or "error" in timed["timing"]["compile"])
        self.assertFalse(unknown["ok"])
        self.assertIn("scripts/torch_ops.py has no operator no_such_op", unknown["error"])
        self.assertIn("needs the config", no_config["error"])

    def test_every_shipped_yardstick_names_a_torch_ops_entry(self):
        import torch_ops
        ops = os.path.join(ROOT, "operators")
        named = 0
        for name in sorted(os.listdir(ops)):
            path = os.path.join(ops, name, "operator.json")
            if not os.path.isfile(path):
                continue
            with open(path) as f:
                y = json.load(f).get("yardstick")
            if y is None:
                continue
            named += 1
            self.assertIn(y["torch_ops"], torch_ops.OPS, path)
        self.assertGreater(named, 0)

    def test_compute_device(self):
        os.environ["FORGEK_TORCH_DEVICE"] = "tpu"
        try:
            with self.assertRaises(helper.Refused):
                helper.compute_device(torch)
        finally:
            os.environ["FORGEK_TORCH_DEVICE"] = "cpu"
        self.assertEqual(helper.compute_device(torch), "cpu")

    def test_check_names_the_interpreter_and_torch(self):
        p = subprocess.run([sys.executable, SCRIPT, "check"], capture_output=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        j = json.loads(p.stdout)
        self.assertEqual(j["torch"], torch.__version__)
        p = subprocess.run([sys.executable, "-S", SCRIPT, "check"], capture_output=True, timeout=300)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("PyTorch is not installed for", json.loads(p.stdout)["error"])

    def test_serve_process_over_pipes(self):
        t = self.sample(torch.bfloat16)
        p = subprocess.run([sys.executable, SCRIPT, "serve"], input=request("echo", [("t", t)]), capture_output=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        header, blobs = helper.read_message(io.BytesIO(p.stdout))
        self.assertTrue(torch.equal(helper.to_tensor(torch, header["tensors"][0], blobs[0]), t))


if __name__ == "__main__":
    unittest.main()
