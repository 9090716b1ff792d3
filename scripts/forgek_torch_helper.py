#!/usr/bin/env python3
"""forgek's PyTorch side: describes a KernelBench problem or a FlashInfer-Bench definition for
`forgek ops import`, and answers a framed tensor protocol on stdin/stdout (docs/importing.md,
"The helper").

  forgek_torch_helper.py describe FILE.py [--sizes NAME=V,...]
      Imports FILE.py in this fresh process and prints one JSON object on stdout: the problem's
      size constants (module-level ints), its inputs (get_inputs() then the Model's parameters and
      buffers), its outputs, each with a dtype and a shape whose dimensions are size-constant
      names or integers, and an init for inputs. A problem forgek cannot express is refused:
      exit 1 and {"error": ..., "file": ..., "line": ...} on stdout.
  forgek_torch_helper.py serve [FILE.py [--sizes NAME=V,...]]
      Answers requests on stdin until end of file (see the protocol below). Without FILE.py only
      `echo` is served (the protocol's own test).
  A FILE ending in .json is a FlashInfer-Bench definition instead: the definition itself, or
  forgek's golden.json {"flashinfer": DEFINITION, "scalars": {NAME: VALUE}} that gives its scalar
  inputs their values. `describe` takes its tensors from the definition's axes (--sizes gives the
  var axes; the config holds every axis) and runs the reference once at the config to check the
  outputs' shapes; `run` calls the reference's run(...) with the inputs in float64.

  forgek_torch_helper.py check
      Imports torch and prints {"python", "torch", "cuda"}; exit 1 with {"error"} when it cannot.

  forgek_torch_helper.py seed FILE.py [--sizes NAME=V,...]
      The seed forgek writes for an elementwise KernelBench problem: Model.forward traced with
      torch.fx, each operation (activations, arithmetic with numbers or same-shaped inputs) a
      float expression, one thread per element; prints {"seed": TEXT}. Anything else is refused
      as `describe` refuses (exit 1, {"error", "file", "line"}), naming the operation.

Protocol: every message, both ways, is one header line of UTF-8 JSON ending in "\n", then the raw
bytes of its tensors in header order, each `nbytes` long, little-endian, C-contiguous.
  request  {"op": "echo" | "run" | "time", "tensors": [{"name", "dtype", "shape", "nbytes"}, ...], "sizes": {...}}
  reply    {"ok": true, "tensors": [...], "device": "cpu", "compute_s": 0.01}
           or  {"ok": false, "error": "..."} (no bytes follow)
`time` is the yardstick (docs/importing.md, "PyTorch as the yardstick"): the problem as its users
run it, in its own dtypes on the helper's device (the inputs as sent, not widened), called eagerly
and under torch.compile, interleaved (eager, compile, then compile, eager, ...). On CUDA a buffer of
max(256 MiB, 2 x L2) is written before every call (cold L2) and one event pair brackets the call;
on a CPU the wall clock does. Request members: "reps" (samples per mode, default 50) and
"budget_s" (stop sampling after this much time, at least 5 samples; default 20). It returns no
tensors and {"timing": {"eager": {"us": [...]}, "compile": {"us": [...]} or {"error": "..."}},
"torch": VERSION}: raw samples in microseconds, which the worker summarises as it does its own.
`run` gives the named inputs (and parameters) to the problem's Model (or a definition's run), computes in float64 and
returns every floating output as f32 (the golden's contract, docs/operator-format.md) and integer
outputs in their own dtype. A request's optional `sizes` are the size constants of that request (a
worker sends each config's); without them the Model is the one of `serve --sizes`. The float64
computation runs on CUDA when torch has it (a 4096^3 GEMM in float64 takes minutes on a small CPU),
unless FORGEK_TORCH_DEVICE=cpu. Exit codes: 0 ok, 1 refused or failed, 2 usage.
"""
import argparse
import importlib.util
import json
import math
import os
import sys
import time
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))

# forgek dtype -> (torch dtype name, bytes per element). bool travels as one byte per element.
DTYPES = {
    "f64": ("float64", 8), "f32": ("float32", 4), "f16": ("float16", 2), "bf16": ("bfloat16", 2),
    "i8": ("int8", 1), "u8": ("uint8", 1), "i32": ("int32", 4), "i64": ("int64", 8), "bool": ("bool", 1),
}
FLOATING = {"f64", "f32", "f16", "bf16"}
# Size constants below this are kept as literals (an axis, a kernel size): only larger ones are
# probed and named.
MIN_SIZE_CONSTANT = 16
PROBES = ([17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79],
          [83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163])


class Refused(Exception):
    """A problem forgek cannot express; `line` locates it in the problem file when known."""

    def __init__(self, message, line=0):
        super().__init__(message)
        self.line = line


def import_torch():
    try:
        import torch  # noqa: F401
        return torch
    except ImportError as e:
        raise Refused("PyTorch is not installed for %s (%s); install python3-torch "
                      "(scripts/install-deps.sh) or set FORGEK_PYTHON to a python3 that has torch" % (sys.executable, e))


def forgek_dtype(torch, dt):
    for name, (tname, _) in DTYPES.items():
        if getattr(torch, tname) == dt:
            return name
    return None


def parse_sizes(text):
    sizes = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise Refused("--sizes: expected NAME=V[,NAME=V...], got '%s'" % item)
        try:
            sizes[name.strip()] = int(value)
        except ValueError:
            raise Refused("--sizes: %s: '%s' is not an integer" % (name.strip(), value))
        if sizes[name.strip()] < 1:
            raise Refused("--sizes: %s must be at least 1" % name.strip())
    return sizes


def load_problem(path, overrides=None):
    """Imports the problem file as a fresh module, with its int constants replaced by `overrides`
    before get_inputs/get_init_inputs run (they read the module's globals when called)."""
    spec = importlib.util.spec_from_file_location("forgek_problem_%d" % len(sys.modules), path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise Refused("syntax error: %s" % e.msg, e.lineno or 0)
    except Exception as e:
        raise Refused("importing it raised %s: %s" % (type(e).__name__, e), error_line(e, path))
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise Refused("no `%s` defined (a KernelBench problem has class Model, get_inputs and get_init_inputs)" % name)
    for name, value in (overrides or {}).items():
        setattr(module, name, value)
    return module


def error_line(exc, path):
    """The line of `path` where `exc` was raised, 0 when it was not raised there."""
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == os.path.abspath(path):
            line = frame.lineno
    return line


def size_constants(module):
    return {k: v for k, v in vars(module).items()
            if not k.startswith("_") and type(v) is int and v >= MIN_SIZE_CONSTANT}


def instantiate(torch, module, path):
    """Model(*get_init_inputs()), its inputs and outputs (CPU, seeded)."""
    torch.manual_seed(0)
    try:
        init = list(module.get_init_inputs())
        model = module.Model(*init)
        inputs = list(module.get_inputs())
    except Exception as e:
        raise Refused("building the problem raised %s: %s" % (type(e).__name__, e), error_line(e, path))
    names = input_names(module, len(inputs))
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise Refused("get_inputs()[%d] (%s) is a %s, not a tensor: forgek's inputs are tensors"
                          % (i, names[i], type(x).__name__), line_of(module.get_inputs))
    try:
        outs = forward_outputs(torch, model, inputs)
    except Exception as e:
        raise Refused("Model.forward raised %s: %s" % (type(e).__name__, e), error_line(e, path))
    for i, y in enumerate(outs):
        if not isinstance(y, torch.Tensor):
            raise Refused("output %d of Model.forward is a %s, not a tensor" % (i, type(y).__name__),
                          line_of(module.Model.forward))
    return model, inputs, names, outs


def forward_outputs(torch, model, inputs):
    """forward's result as a list of its outputs (one, or a tuple's)."""
    with torch.no_grad():
        out = model(*inputs)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def same_outputs(torch, a, b):
    """Whether two calls gave the same outputs bit for bit (NaN where the other has NaN)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.is_floating_point():
            if not bool(((x == y) | (x.isnan() & y.isnan())).all()):
                return False
        elif not torch.equal(x, y):
            return False
    return True


def refuse_if_random(torch, call, first, what, line=0):
    """Calls `call` once more under another random seed and refuses when its outputs differ from
    `first` (the same inputs): the reference draws random numbers, and forgek checks a kernel
    element by element against one golden; it has no check of a distribution."""
    torch.manual_seed(0x5eed)
    again = call()
    if not same_outputs(torch, first, again):
        raise Refused("%s gives different outputs on the same inputs under another random seed: it draws random "
                      "numbers (sampling, dropout, ...), and forgek checks outputs element by element against one "
                      "golden, with no check of a distribution" % what, line)


def line_of(fn):
    code = getattr(fn, "__code__", None)
    return code.co_firstlineno if code else 0


def input_names(module, count):
    """The names of forward's parameters (after self), else x0, x1, ..."""
    code = module.Model.forward.__code__
    args = list(code.co_varnames[1:code.co_argcount])
    return [args[i] if i < len(args) else "x%d" % i for i in range(count)]


def state_tensors(model):
    """The Model's parameters and buffers as (operator name, state_dict key, tensor)."""
    out = []
    for key, t in model.state_dict().items():
        out.append((key.replace(".", "_"), key, t))
    return out


def shapes_of(torch, module, path, sizes):
    """Instantiates the problem with the given int constants and returns every tensor's shape."""
    mod = load_problem(path, sizes)
    model, inputs, names, outs = instantiate(torch, mod, path)
    shapes = {n: list(x.shape) for n, x in zip(names, inputs)}
    for name, _, t in state_tensors(model):
        shapes[name] = list(t.shape)
    for i, y in enumerate(outs):
        shapes[output_name(i, len(outs))] = list(y.shape)
    return shapes


def output_name(i, count):
    return "out" if count == 1 else "out%d" % i


def init_of(torch, t):
    """An init spec (docs/operator-format.md) matching the values drawn."""
    if not t.is_floating_point():
        return {"dist": "int_range", "lo": int(t.min()), "hi": int(t.max()) + 1}
    lo, hi = float(t.min()), float(t.max())
    if t.numel() > 1 and lo >= 0.0 and hi <= 1.0:
        return {"dist": "uniform", "lo": 0, "hi": 1}
    if t.numel() > 1 and -hi <= lo < 0 and abs(lo + hi) <= 0.25 * (hi - lo) and float(t.std()) < 0.65 * hi:
        bound = float("%.3g" % max(-lo, hi))
        return {"dist": "uniform", "lo": -bound, "hi": bound}
    std = float(t.std()) if t.numel() > 1 else 1.0
    return {"dist": "normal", "mean": round(float(t.mean()), 2), "std": float("%.3g" % (std or 1.0))}


def model_at(torch, path, sizes):
    """The Model alone, built at `sizes` (seeded)."""
    module = load_problem(path, sizes)
    torch.manual_seed(0)
    try:
        return module.Model(*module.get_init_inputs())
    except Exception as e:
        raise Refused("building the Model at %s raised %s: %s" % (sizes, type(e).__name__, e), error_line(e, path))


def parameter_init(t):
    """nn's default inits draw uniformly within a bound: uniform[-b, b] with b the largest magnitude
    drawn; a constant parameter (a norm's weight of ones) is drawn around its value."""
    lo, hi = float(t.min()), float(t.max())
    if lo == hi:
        return {"dist": "normal", "mean": lo, "std": 0.1 * max(abs(lo), 1.0)}
    bound = float("%.4g" % max(-lo, hi))
    return {"dist": "uniform", "lo": -bound, "hi": bound}


def name_dims(real, probes, constants, what):
    """Each dimension as a constant's name (it follows that constant in both probes) or an integer
    (it stays the same); else refused naming the tensor and dimension."""
    dims = []
    for d, value in enumerate(real):
        names = [c for c in constants if all(p[d] == pv[c] for p, pv in probes)]
        if len(names) == 1:
            dims.append(names[0])
        elif all(p[d] == value for p, _ in probes):
            dims.append(value)
        else:
            raise Refused("%s: dimension %d (%d) depends on the sizes in a way forgek cannot name "
                          "(not one size constant, not fixed)" % (what, d, value))
    return dims


def describe(path, sizes):
    torch = import_torch()
    path = os.path.abspath(path)
    module = load_problem(path)
    constants = size_constants(module)
    unknown = sorted(set(sizes) - set(constants))
    if unknown:
        raise Refused("--sizes names %s, not a size constant of the problem (its size constants: %s)"
                      % (", ".join(unknown), ", ".join(sorted(constants)) or "none"))
    config = dict(constants, **sizes)
    # The shapes as expressions: two small probes give every size constant a distinct value.
    probes = []
    for values in PROBES:
        pv = {c: values[i % len(values)] for i, c in enumerate(sorted(constants))}
        try:
            probes.append((shapes_of(torch, module, path, pv), pv))
        except Refused as e:
            raise Refused("the problem does not run at small probe sizes (%s): %s" % (pv, e), e.line)
    mod = load_problem(path, {c: probes[0][1][c] for c in constants})
    model, inputs, names, outs = instantiate(torch, mod, path)
    refuse_if_random(torch, lambda: forward_outputs(torch, model, inputs), outs, "Model.forward",
                     line_of(mod.Model.forward))
    tensors = []

    def add(name, t, role):
        dt = forgek_dtype(torch, t.dtype)
        if dt is None or dt == "bool":
            raise Refused("%s %s has dtype %s, which forgek does not support" % (role, name, t.dtype))
        shape = name_dims(list(t.shape), [(p[name], pv) for p, pv in probes], sorted(constants), name)
        if not shape:
            raise Refused("%s %s is a 0-dimensional tensor; forgek's tensors have at least one dimension" % (role, name))
        entry = {"name": name, "role": role, "dtype": dt, "shape": shape}
        if role == "input":
            entry["init"] = init_of(torch, t)
        tensors.append(entry)

    for n, x in zip(names, inputs):
        add(n, x, "input")
    # Parameters' values depend on the sizes (nn.Linear draws within 1/sqrt(in_features)): their
    # init is read from the Model built at the config's sizes (no inputs, no forward).
    real = {n: t for n, _, t in state_tensors(model_at(torch, path, config))}
    for name, key, t in state_tensors(model):
        add(name, t, "input")
        tensors[-1]["state_key"] = key
        tensors[-1]["init"] = parameter_init(real[name])
    for i, y in enumerate(outs):
        add(output_name(i, len(outs)), y, "output")
    scalars = {k: v for k, v in vars(module).items()
               if not k.startswith("_") and type(v) in (int, float) and k not in constants}
    max_abs, magnitude_at = output_magnitudes(torch, path, config, tensors, outs)
    return {"file": path, "params": sorted(constants), "config": config, "tensors": tensors,
            "fixed": scalars, "max_abs": max_abs, "magnitude_at": magnitude_at, "torch": torch.__version__}


# The largest config whose outputs' magnitude `describe` measures by running the problem there (its
# tensors' bytes, float32 on the CPU); above it, the magnitude at the probe sizes stands in.
MAGNITUDE_BYTES = 1 << 30


def output_magnitudes(torch, path, config, tensors, probe_outs):
    """Each output's largest finite |value| (the importer's max_abs follows KernelBench's rtol) and
    where it was measured: "config" (the problem run at the config's sizes) or "probe"."""
    total = 0
    for t in tensors:
        n = DTYPES[t["dtype"]][1]
        for d in t["shape"]:
            n *= config[d] if isinstance(d, str) else int(d)
        total += n
    outs, where = probe_outs, "probe"
    if total <= MAGNITUDE_BYTES:
        _, _, _, outs = instantiate(torch, load_problem(path, config), path)
        where = "config"
    magnitudes = {}
    for i, y in enumerate(outs):
        finite = y.double()[torch.isfinite(y.double())] if y.is_floating_point() else y.double()
        magnitudes[output_name(i, len(outs))] = float(finite.abs().max()) if finite.numel() else 0.0
    return magnitudes, where


# ---- a seed forgek writes itself: elementwise problems ----

# Unary elementwise operations as C expressions of a float `{0}`; parameters (`{a}`, `{b}`) come from
# the call's arguments or the module's attributes with these defaults (PyTorch's).
UNARY = {
    "relu": ("fmaxf({0}, 0.f)", {}),
    "sigmoid": ("(1.f / (1.f + expf(-{0})))", {}),
    "tanh": ("tanhf({0})", {}),
    "exp": ("expf({0})", {}),
    "log": ("logf({0})", {}),
    "abs": ("fabsf({0})", {}),
    "neg": ("(-{0})", {}),
    "sqrt": ("sqrtf({0})", {}),
    "rsqrt": ("rsqrtf({0})", {}),
    "sin": ("sinf({0})", {}),
    "cos": ("cosf({0})", {}),
    "erf": ("erff({0})", {}),
    "square": ("({0} * {0})", {}),
    "reciprocal": ("(1.f / {0})", {}),
    "silu": ("({0} / (1.f + expf(-{0})))", {}),
    "softsign": ("({0} / (1.f + fabsf({0})))", {}),
    "mish": ("({0} * tanhf(log1pf(expf({0}))))", {}),
    "selu": ("(1.0507009873554805f * ({0} > 0.f ? {0} : 1.6732632423543772f * expm1f({0})))", {}),
    "hardsigmoid": ("fminf(fmaxf({0} / 6.f + 0.5f, 0.f), 1.f)", {}),
    "hardswish": ("({0} * fminf(fmaxf({0} + 3.f, 0.f), 6.f) / 6.f)", {}),
    "leaky_relu": ("({0} > 0.f ? {0} : {a} * {0})", {"a": ("negative_slope", 0.01)}),
    "elu": ("({0} > 0.f ? {0} : {a} * expm1f({0}))", {"a": ("alpha", 1.0)}),
    "celu": ("({0} > 0.f ? {0} : {a} * expm1f({0} / {a}))", {"a": ("alpha", 1.0)}),
    "softplus": ("({a} * {0} > {b} ? {0} : log1pf(expf({a} * {0})) / {a})", {"a": ("beta", 1.0), "b": ("threshold", 20.0)}),
    "hardtanh": ("fminf(fmaxf({0}, {a}), {b})", {"a": ("min_val", -1.0), "b": ("max_val", 1.0)}),
    "clamp": ("fminf(fmaxf({0}, {a}), {b})", {"a": ("min", float("-inf")), "b": ("max", float("inf"))}),
    "clip": ("fminf(fmaxf({0}, {a}), {b})", {"a": ("min", float("-inf")), "b": ("max", float("inf"))}),
}
GELU = {"none": "(0.5f * {0} * (1.f + erff({0} * 0.7071067811865476f)))",
        "tanh": "(0.5f * {0} * (1.f + tanhf(0.7978845608028654f * ({0} + 0.044715f * {0} * {0} * {0}))))"}
BINARY = {"add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "truediv": "({0} / {1})",
          "div": "({0} / {1})", "maximum": "fmaxf({0}, {1})", "minimum": "fminf({0}, {1})", "pow": "powf({0}, {1})"}
# nn modules by class name -> the functional name above.
MODULES = {"ReLU": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "GELU": "gelu", "SiLU": "silu", "Mish": "mish",
           "SELU": "selu", "ELU": "elu", "CELU": "celu", "LeakyReLU": "leaky_relu", "Softplus": "softplus",
           "Softsign": "softsign", "Hardtanh": "hardtanh", "Hardsigmoid": "hardsigmoid", "Hardswish": "hardswish"}
C_TYPES = {"f32": ("float", "{0}", "{0}"), "f16": ("__half", "__half2float({0})", "__float2half({0})"),
           "bf16": ("__nv_bfloat16", "__bfloat162float({0})", "__float2bfloat16({0})")}


def c_float(v):
    if v == float("inf"):
        return "__int_as_float(0x7f800000)"
    if v == float("-inf"):
        return "__int_as_float(0xff800000)"
    return "%.9gf" % float(v) if "." in "%.9g" % float(v) or "e" in "%.9g" % float(v) else "%.1ff" % float(v)


def manifest_text(m):
    """A manifest as the shipped kernels write theirs: one launch a line."""
    launches = ",\n    ".join(json.dumps(l) for l in m["launches"])
    return '{ "name": %s, "params": %s,\n  "launches": [\n    %s\n  ] }' % (
        json.dumps(m["name"]), json.dumps(m["params"]), launches)


def elementwise_seed(path, sizes):
    """A seed kernel for a problem whose forward is a chain of elementwise operations over tensors
    of the output's shape (and numbers): traced with torch.fx, each operation a float expression,
    one thread per element. Refused, naming why, for anything else."""
    torch = import_torch()
    import torch.fx  # noqa: F401
    d = describe(path, sizes)
    outputs = [t for t in d["tensors"] if t["role"] == "output"]
    inputs = [t for t in d["tensors"] if t["role"] == "input"]
    if len(outputs) != 1:
        raise Refused("forgek writes a seed for one output; the problem has %d" % len(outputs))
    out = outputs[0]
    for t in inputs:
        if t.get("state_key"):
            raise Refused("the Model has parameters (%s): not an elementwise problem" % t["name"])
        if t["shape"] != out["shape"]:
            raise Refused("input %s has shape %s, the output %s: forgek writes seeds only where every input "
                          "has the output's shape" % (t["name"], t["shape"], out["shape"]))
    for t in inputs + outputs:
        if t["dtype"] not in C_TYPES:
            raise Refused("tensor %s is %s: forgek writes seeds for f32, f16 and bf16 tensors" % (t["name"], t["dtype"]))
    # The trace does not depend on the sizes: the problem is built at small ones (a benchmark's own
    # may be gigabytes).
    small = {c: PROBES[0][i % len(PROBES[0])] for i, c in enumerate(sorted(d["params"]))}
    module = load_problem(os.path.abspath(path), small)
    model, _, names, _ = instantiate(torch, module, path)
    try:
        graph = torch.fx.symbolic_trace(model).graph
    except Exception as e:
        raise Refused("torch.fx cannot trace Model.forward (%s: %s)" % (type(e).__name__, e), line_of(module.Model.forward))
    by_name = {t["name"]: t for t in inputs}
    modules = dict(model.named_modules())
    values, lines, placeholders, result = {}, [], [], None

    def operand(a):
        if isinstance(a, torch.fx.Node):
            return values[a.name]
        if isinstance(a, bool) or not isinstance(a, (int, float)):
            raise Refused("an operand %r is neither a tensor of the forward nor a number" % (a,))
        return c_float(a)

    def param(node, index, key, default):
        v = node.kwargs.get(key, node.args[index] if len(node.args) > index else default)
        if v is None:
            v = default
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise Refused("%s of %s is %r, not a number" % (key, node.target, v))
        return c_float(v)

    def unary(node, name, x, attrs=None):
        if name == "gelu":
            approx = (attrs or {}).get("approximate", node.kwargs.get("approximate", "none"))
            if approx not in GELU:
                raise Refused("gelu with approximate=%r" % approx)
            return GELU[approx].format(x)
        form, params = UNARY[name]
        filled = {}
        for i, (slot, (key, default)) in enumerate(sorted(params.items())):
            if attrs is not None:
                v = attrs.get(key, default)
                filled[slot] = c_float(default if v is None else v)
            else:
                filled[slot] = param(node, 1 + i, key, default)
        return form.format(x, **filled)

    for node in graph.nodes:
        if node.op == "placeholder":
            if node.name not in by_name and node.target not in by_name:
                raise Refused("forward's argument %s is not one of the problem's inputs" % node.target)
            t = by_name.get(node.target, by_name.get(node.name))
            placeholders.append(t["name"])
            values[node.name] = "v%d" % len(lines)
            lines.append("const float v%d = %s;" % (len(lines), C_TYPES[t["dtype"]][1].format(t["name"] + "[i]")))
            continue
        if node.op == "output":
            if not isinstance(node.args[0], torch.fx.Node):
                raise Refused("forward returns %r: forgek writes a seed for one tensor" % (node.args[0],))
            result = values[node.args[0].name]
            continue
        if node.op == "call_module":
            m = modules.get(node.target)
            kind = MODULES.get(type(m).__name__)
            if kind is None:
                raise Refused("forward calls module %s (%s), which is not an elementwise activation forgek writes"
                              % (node.target, type(m).__name__))
            attrs = {k: getattr(m, k) for k in ("negative_slope", "alpha", "beta", "threshold", "min_val", "max_val",
                                                 "approximate") if hasattr(m, k)}
            expr = unary(node, kind, operand(node.args[0]), attrs)
        elif node.op in ("call_function", "call_method"):
            name = node.target if node.op == "call_method" else getattr(node.target, "__name__", str(node.target))
            name = name.rstrip("_") if name.endswith("_") and not name.startswith("_") else name
            if name in BINARY and len(node.args) >= 2:
                expr = BINARY[name].format(operand(node.args[0]), operand(node.args[1]))
            elif name in UNARY or name == "gelu":
                expr = unary(node, name, operand(node.args[0]))
            else:
                raise Refused("forward calls %s, which is not an elementwise operation forgek writes a seed for "
                              "(give --seed FILE or --agent llm)" % name)
        else:
            raise Refused("forward reads %s (%s): not an elementwise problem" % (node.target, node.op))
        values[node.name] = "v%d" % len(lines)
        lines.append("const float v%d = %s;" % (len(lines), expr))
    if result is None:
        raise Refused("forward returns nothing forgek can write")
    dims = [x for x in out["shape"] if isinstance(x, str)]
    literal = 1
    for x in out["shape"]:
        if not isinstance(x, str):
            literal *= int(x)
    count = " * ".join(["(long)" + n for n in dims] + ([str(literal)] if literal != 1 or not dims else []))
    grid_count = " * ".join(dims + ([str(literal)] if literal != 1 or not dims else []))
    tensors = [n for n in names if n in by_name] + [out["name"]]
    c_args = ["const %s* __restrict__ %s" % (C_TYPES[by_name[n]["dtype"]][0], n) for n in tensors[:-1]]
    c_args.append("%s* __restrict__ %s" % (C_TYPES[out["dtype"]][0], out["name"]))
    c_args += ["int %s" % n for n in dims]
    manifest = {"name": "elementwise_seed", "params": {"THREADS": 256},
                "launches": [{"kernel": "elementwise_seed", "grid": ["ceil_div(%s, THREADS)" % grid_count],
                              "block": ["THREADS"], "args": tensors + dims}]}
    headers = ""
    if any(t["dtype"] == "f16" for t in inputs + outputs):
        headers += "#include <cuda_fp16.h>\n"
    if any(t["dtype"] == "bf16" for t in inputs + outputs):
        headers += "#include <cuda_bf16.h>\n"
    body = "\n".join("  " + l for l in lines)
    store = C_TYPES[out["dtype"]][2].format(result)
    return ("/* forgek\n%s\n*/\n// Written by forgek from the problem's traced forward (%s): one thread per element, each\n"
            "// operation of the forward as a float expression.\n%s"
            "extern \"C\" __global__ void elementwise_seed(%s) {\n"
            "  const long i = (long)blockIdx.x * THREADS + threadIdx.x;\n"
            "  if (i >= %s) return;\n%s\n  %s[i] = %s;\n}\n"
            % (manifest_text(manifest), os.path.basename(path), headers, ", ".join(c_args), count, body,
               out["name"], store))


# ---- FlashInfer-Bench definitions (docs/flashinfer-trace/definition.mdx of flashinfer-bench) ----

# A definition's tensor dtypes that forgek has, by forgek name.
FI_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int64": "i64", "int32": "i32", "int8": "i8"}
# Its scalar inputs (shape null) arrive as Python numbers: forgek's scalars are f32, i32 or i64.
FI_SCALAR_DTYPES = {"float32": "f32", "float16": "f32", "bfloat16": "f32", "int32": "i32", "int64": "i64"}
# FlashInfer-Bench's random integers (flashinfer_bench/bench/utils.py, _rand_tensor): [lo, hi).
FI_INT_RANGES = {"i8": (-128, 128), "i32": (-1024, 1024), "i64": (-1024, 1024)}


def is_definition(path):
    return path.endswith(".json")


def load_definition(path):
    """The definition and its scalar inputs' values, from a definition file or forgek's golden.json."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise Refused("invalid JSON at column %d: %s" % (e.colno, e.msg), e.lineno)
    if not isinstance(doc, dict):
        raise Refused("a FlashInfer-Bench definition is a JSON object")
    defn, scalars = (doc["flashinfer"], doc.get("scalars", {})) if "flashinfer" in doc else (doc, {})
    if not isinstance(defn, dict):
        raise Refused("flashinfer: a FlashInfer-Bench definition is a JSON object")
    for key, kind in (("axes", dict), ("inputs", dict), ("outputs", dict), ("reference", str)):
        if not isinstance(defn.get(key), kind):
            raise Refused("%s: missing or not a%s %s" % (key, "n" if kind is dict else "", "object" if kind is dict else "string"))
    return defn, scalars


def definition_config(defn, sizes):
    """Every axis's value: const axes their own, var axes from `sizes`."""
    config, missing = {}, []
    for name, axis in defn["axes"].items():
        kind = axis.get("type") if isinstance(axis, dict) else None
        if kind == "const":
            value = axis.get("value")
            if type(value) is not int or value < 1:
                raise Refused("axes.%s: a const axis needs a positive integer value" % name)
            if name in sizes and sizes[name] != value:
                raise Refused("--sizes: %s is a const axis of the definition (%d), not %d" % (name, value, sizes[name]))
            config[name] = value
        elif kind == "var":
            if name in sizes:
                config[name] = sizes[name]
            else:
                missing.append(name)
        else:
            raise Refused("axes.%s.type: %r is neither \"const\" nor \"var\"" % (name, kind))
    unknown = sorted(set(sizes) - set(config) - set(missing))
    if unknown:
        raise Refused("--sizes names %s, not an axis of the definition (its axes: %s)"
                      % (", ".join(unknown), ", ".join(defn["axes"])))
    if missing:
        raise Refused("no value for the var axis %s: give it in --sizes" % ", ".join(missing))
    return config


def definition_tensors(defn, scalars):
    """The tensors (inputs, then outputs) and the scalar inputs, in forgek's terms; refused where
    forgek has no way to say them."""
    tensors, scalar_list = [], []
    input_axes = set()
    for role, group in (("input", "inputs"), ("output", "outputs")):
        for name, spec in defn[group].items():
            what = "%s.%s" % (group, name)
            if not isinstance(spec, dict) or "dtype" not in spec or "shape" not in spec:
                raise Refused("%s: a tensor has shape and dtype" % what)
            dtype, shape = spec["dtype"], spec["shape"]
            if shape is None:
                if role == "output":
                    raise Refused("%s: a scalar output; forgek's outputs are tensors" % what)
                if dtype not in FI_SCALAR_DTYPES:
                    raise Refused("%s.dtype: a %s scalar, which forgek's scalars (f32, i32, i64) cannot hold" % (what, dtype))
                if name not in scalars:
                    raise Refused("%s: a scalar input with no value (a workload gives it)" % what)
                scalar_list.append({"name": name, "dtype": FI_SCALAR_DTYPES[dtype], "value": scalars[name]})
                continue
            if dtype not in FI_DTYPES:
                raise Refused("%s.dtype: %s, which forgek does not support (%s)" % (what, dtype, ", ".join(FI_DTYPES)))
            if not isinstance(shape, list) or not shape:
                raise Refused("%s.shape: a 0-dimensional tensor; forgek's tensors have at least one dimension" % what)
            for d in shape:
                if d not in defn["axes"]:
                    raise Refused("%s.shape: %r is not an axis of the definition" % (what, d))
                if role == "input":
                    input_axes.add(d)
                elif d not in input_axes:
                    raise Refused("%s.shape: axis %s is in no input's shape, so the output's size depends on the "
                                  "data, which forgek cannot express" % (what, d))
            entry = {"name": name, "role": role, "dtype": FI_DTYPES[dtype], "shape": list(shape)}
            if role == "input":
                entry["init"] = definition_init(defn, name, entry["dtype"])
            tensors.append(entry)
    return tensors, scalar_list


def definition_init(defn, name, dtype):
    """FlashInfer-Bench's random inputs: randn for floats (a sampling definition's probs softmaxed),
    randint over a fixed range for integers."""
    if dtype in FI_INT_RANGES:
        lo, hi = FI_INT_RANGES[dtype]
        return {"dist": "int_range", "lo": lo, "hi": hi}
    if defn.get("op_type") == "sampling" and name == "probs":
        return {"dist": "probs", "axis": -1}
    return {"dist": "normal", "mean": 0, "std": 1}


def reference_run(defn):
    """The reference's run(...), exec'd into a fresh module registered in sys.modules: torch.compile
    imports the module a function names (run.__module__), as it would a reference in a file."""
    try:
        code = compile(defn["reference"], "<reference>", "exec")
    except SyntaxError as e:
        raise Refused("reference: syntax error at its line %d: %s" % (e.lineno or 0, e.msg))
    module = types.ModuleType("forgek_flashinfer_reference_%d" % len(sys.modules))
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    try:
        exec(code, namespace)
    except Exception as e:
        raise Refused("reference: running its text raised %s: %s" % (type(e).__name__, e))
    if not callable(namespace.get("run")):
        raise Refused("reference: defines no function run(...)")
    return namespace["run"]


def reference_outputs(torch, defn, out):
    """run's result as one tensor per output, in the definition's order (a tensor, a tuple or list,
    or a dict by name, as FlashInfer-Bench accepts)."""
    names = list(defn["outputs"])
    if isinstance(out, dict):
        outs = [out.get(n) for n in names]
    else:
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(outs) != len(names):
        raise ValueError("the reference returns %d output(s), the definition has %d" % (len(outs), len(names)))
    for n, y in zip(names, outs):
        if not isinstance(y, torch.Tensor):
            raise ValueError("the reference's output %s is a %s, not a tensor" % (n, type(y).__name__))
    return list(zip(names, outs))


def call_reference(torch, defn, run, scalars, tensors):
    """run(...) with every input in the definition's order: tensors in float64 (integers as they
    are), scalar inputs their values."""
    args = []
    for name, spec in defn["inputs"].items():
        if spec.get("shape") is None:
            args.append(scalars[name])
            continue
        if name not in tensors:
            raise ValueError("missing input tensor %s" % name)
        t = tensors[name]
        args.append(t.double() if t.is_floating_point() else t)
    with torch.no_grad():
        return reference_outputs(torch, defn, run(*args))


def random_input(torch, entry, config):
    shape = [config[d] for d in entry["shape"]]
    init = entry["init"]
    if init["dist"] == "int_range":
        return torch.randint(init["lo"], init["hi"], shape, dtype=getattr(torch, DTYPES[entry["dtype"]][0]))
    x = torch.randn(shape, dtype=torch.float64)
    return torch.softmax(x, dim=-1) if init["dist"] == "probs" else x


def describe_definition(path, sizes):
    torch = import_torch()
    path = os.path.abspath(path)
    defn, scalars = load_definition(path)
    config = definition_config(defn, sizes)
    tensors, scalar_list = definition_tensors(defn, scalars)
    run = reference_run(defn)
    # One run at the config checks the outputs' shapes and gives their magnitude, from which the
    # importer sets max_abs (FlashInfer-Bench's tolerance is relative).
    torch.manual_seed(0)
    inputs = {t["name"]: random_input(torch, t, config) for t in tensors if t["role"] == "input"}
    try:
        outs = call_reference(torch, defn, run, scalars, inputs)
    except Exception as e:
        raise Refused("reference: run(...) at %s raised %s: %s" % (config, type(e).__name__, e))
    refuse_if_random(torch, lambda: [y for _, y in call_reference(torch, defn, run, scalars, inputs)],
                     [y for _, y in outs], "reference: run(...)")
    max_abs = {}
    for entry, (name, y) in zip([t for t in tensors if t["role"] == "output"], outs):
        want = [config[d] for d in entry["shape"]]
        if list(y.shape) != want:
            raise Refused("outputs.%s: the reference returns shape %s at %s, the definition says %s = %s"
                          % (name, list(y.shape), config, entry["shape"], want))
        max_abs[name] = float(y.double().abs().max()) if y.numel() and y.is_floating_point() else 0.0
    return {"file": path, "kind": "flashinfer", "params": list(defn["axes"]), "config": config, "tensors": tensors,
            "scalars": scalar_list, "fixed": {}, "max_abs": max_abs, "torch": torch.__version__}


class DefinitionGolden:
    """A FlashInfer-Bench definition's reference, computing in float64."""

    def __init__(self, torch, path, device="cpu"):
        self.torch = torch
        self.device = device
        self.defn, self.scalars = load_definition(os.path.abspath(path))
        definition_tensors(self.defn, self.scalars)  # refuses what forgek cannot express
        self.fn = reference_run(self.defn)

    def run(self, tensors):
        tensors = {n: t.to(self.device) for n, t in tensors.items()}
        outs = call_reference(self.torch, self.defn, self.fn, self.scalars, tensors)
        return [(n, y.float() if y.is_floating_point() else y) for n, y in outs]


# ---- the framed protocol ----

def read_message(stream):
    line = stream.readline()
    if not line:
        return None, []
    header = json.loads(line.decode("utf-8"))
    blobs = []
    for t in header.get("tensors", []):
        n = int(t["nbytes"])
        # Read into the buffer the tensor will use: a large input is touched once, not copied again.
        data = bytearray(n)
        view, got = memoryview(data), 0
        while got < n:
            k = stream.readinto(view[got:])
            if not k:
                raise ValueError("tensor %s: %d of %d bytes before end of input" % (t.get("name"), got, n))
            got += k
        blobs.append(data)
    return header, blobs


def write_message(stream, header, blobs=()):
    stream.write((json.dumps(header) + "\n").encode("utf-8"))
    for b in blobs:
        stream.write(b)
    stream.flush()


def wire_layout(meta, nbytes):
    """The torch dtype name and shape a tensor's meta gives, checked against its byte count."""
    dt = meta.get("dtype")
    if dt not in DTYPES:
        raise ValueError("tensor %s: dtype %s is not one the helper carries (%s)" % (meta.get("name"), dt, " ".join(DTYPES)))
    tname, size = DTYPES[dt]
    shape = [int(d) for d in meta["shape"]]
    if math.prod(shape) * size != nbytes:
        raise ValueError("tensor %s: %d bytes for shape %s of %s" % (meta.get("name"), nbytes, shape, dt))
    return tname, shape


def to_tensor(torch, meta, data):
    tname, shape = wire_layout(meta, len(data))
    if not data:
        return torch.empty(shape, dtype=getattr(torch, tname))
    flat = torch.frombuffer(data if isinstance(data, bytearray) else bytearray(data), dtype=getattr(torch, tname))
    return flat.reshape(shape)


def from_tensor(torch, name, t):
    t = t.detach().cpu().contiguous()
    dt = forgek_dtype(torch, t.dtype)
    if dt is None:
        raise ValueError("output %s has dtype %s, which the helper does not carry" % (name, t.dtype))
    if t.numel() == 0:
        data = b""
    elif dt in ("bf16", "f16"):  # no numpy for these: their bits as int16
        data = t.view(torch.int16).numpy().tobytes()
    else:
        data = t.numpy().tobytes()
    return {"name": name, "dtype": dt, "shape": list(t.shape), "nbytes": len(data)}, data


def problem_model(torch, path, sizes, device, wide):
    """The problem's Model at `sizes` on `device` (in float64 when `wide`), the names of forward's
    inputs, and its state keys by operator tensor name (dots as underscores)."""
    module = load_problem(os.path.abspath(path), sizes)
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs())
    model = (model.double() if wide else model).eval().to(device)
    names = input_names(module, len(module.Model.forward.__code__.co_varnames) - 1)
    return model, names, {k.replace(".", "_"): k for k in model.state_dict()}


class Golden:
    """The problem's Model at one config, computing in float64."""

    def __init__(self, torch, path, sizes, device="cpu"):
        self.torch = torch
        self.device = device
        self.model, self.names, self.state = problem_model(torch, path, sizes, device, wide=True)

    def run(self, tensors):
        torch = self.torch
        inputs, state = {}, {}
        for name, t in tensors.items():
            x = (t.double() if t.is_floating_point() else t).to(self.device)
            if name in self.state:
                state[self.state[name]] = x
            else:
                inputs[name] = x
        missing = sorted(set(self.state) - set(tensors))
        if missing:
            raise ValueError("missing parameter tensors: %s" % ", ".join(missing))
        self.model.load_state_dict(state)
        args = [inputs[n] for n in self.names if n in inputs]
        with torch.no_grad():
            out = self.model(*args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        result = []
        for i, y in enumerate(outs):
            result.append((output_name(i, len(outs)), y.float() if y.is_floating_point() else y))
        return result


class Yardstick:
    """The problem in its own dtypes, as PyTorch users call it: a KernelBench Model built by
    get_init_inputs() with the worker's parameters loaded, or a definition's run(...)."""

    def __init__(self, torch, path, sizes, device):
        self.torch, self.device = torch, device
        path = os.path.abspath(path)
        if is_definition(path):
            self.defn, self.scalars = load_definition(path)
            definition_tensors(self.defn, self.scalars)
            self.model, self.fn = None, reference_run(self.defn)
        else:
            self.model, self.names, self.state = problem_model(torch, path, sizes, device, wide=False)
            self.fn = self.model

    def arguments(self, tensors):
        """The call's arguments on the device; a Model gets the worker's parameters loaded."""
        tensors = {n: t.to(self.device) for n, t in tensors.items()}
        if self.model is None:
            args = []
            for name, spec in self.defn["inputs"].items():
                if spec.get("shape") is None:
                    args.append(self.scalars[name])
                elif name not in tensors:
                    raise ValueError("missing input tensor %s" % name)
                else:
                    args.append(tensors[name])
            return args
        state = {self.state[n]: t for n, t in tensors.items() if n in self.state}
        missing = sorted(set(self.state) - set(tensors))
        if missing:
            raise ValueError("missing parameter tensors: %s" % ", ".join(missing))
        self.model.load_state_dict(state)
        return [tensors[n] for n in self.names if n in tensors and n not in self.state]


def torch_ops_calls(torch, name, config, device):
    """scripts/torch_ops.py's NAME as the yardstick of a built-in operator: its inputs drawn on the
    device from the config's inits as scripts/compare_torch.py draws them, bound as compare_torch's
    TorchCall does (inouts updated in place, scalars as the kernels get them). Returns the eager
    call (the op's fused `eager` kernel where torch has one, else its timed form), the function to
    compile, and a callable that binds a function to the same inputs."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import compare_torch  # noqa: E402  (scripts/: standard library at import time)
    import torch_ops  # noqa: E402
    torch_ops.load()
    compare_torch.torch = torch
    compare_torch.DEVICE = device
    if not isinstance(config, dict) or not isinstance(config.get("tensors"), list):
        raise ValueError("time with torch_ops needs the config (values, tensors, scalars)")
    if name in getattr(torch_ops, "NOT_EXPRESSIBLE", {}):
        raise ValueError("scripts/torch_ops.py: %s is not expressible: %s" % (name, torch_ops.NOT_EXPRESSIBLE[name]))
    if name not in torch_ops.OPS:
        raise ValueError("scripts/torch_ops.py has no operator %s" % name)
    op = torch_ops.OPS[name]
    config = dict(config, scalars=config.get("scalars") or [], values=config.get("values") or {})
    spec = {"path": "operator " + str(config.get("op", name)), "tensors": {t["name"]: t for t in config["tensors"]}}
    inputs = compare_torch.make_inputs(spec, config, 1)
    bind = lambda fn: compare_torch.TorchCall(fn, inputs, config)  # noqa: E731
    eager = None
    if op.eager is not None:
        try:  # the fused kernel where this torch has it and it runs on these inputs
            eager = bind(op.eager)
            eager()
        except Exception:
            eager = None
    return eager or bind(op.timed), op.timed, bind


def compiled_or_why(torch, fn):
    """torch.compile(fn), or the reason there is none (an old torch, a compile that fails)."""
    if not hasattr(torch, "compile"):
        return None, "torch %s has no torch.compile" % torch.__version__
    try:
        # A fresh start per config, as scripts/compare_torch.py does: without it the second shape
        # recompiles with dynamic dimensions (slower code), and past dynamo's cache limit runs eager.
        torch._dynamo.reset()
        return torch.compile(fn), ""
    except Exception as e:
        return None, "torch.compile: %s: %s" % (type(e).__name__, e)


def time_modes(torch, modes, args, device, reps, budget_s):
    """Samples in microseconds per mode ({name: {"us": [...]}} or {"error": ...} for a mode that
    failed), interleaved so that clock drift falls on every mode alike."""
    out, live = {}, {}
    with torch.no_grad():
        for name, fn in modes.items():
            if fn is None:
                continue
            try:  # warm-up: torch.compile compiles here, and every lazy init happens
                for _ in range(2):
                    fn(*args)
                if device == "cuda":
                    torch.cuda.synchronize()
                live[name] = fn
                out[name] = {"us": []}
            except Exception as e:
                out[name] = {"error": "%s: %s" % (type(e).__name__, e)}
        flush = None
        if device == "cuda":
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            l2 = int(getattr(props, "L2_cache_size", 0) or 0)
            flush = torch.empty(max(256 << 20, 2 * l2) // 4, dtype=torch.int32, device="cuda")
            start_ev, end_ev = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        order = list(live)
        began = time.perf_counter()
        for r in range(max(int(reps), 1)):
            if r >= 5 and time.perf_counter() - began > budget_s:
                break
            for name in (order if r % 2 == 0 else order[::-1]):
                if flush is not None:
                    flush.fill_(r)
                    start_ev.record()
                    live[name](*args)
                    end_ev.record()
                    end_ev.synchronize()
                    out[name]["us"].append(start_ev.elapsed_time(end_ev) * 1000.0)
                else:
                    t0 = time.perf_counter()
                    live[name](*args)
                    out[name]["us"].append((time.perf_counter() - t0) * 1e6)
    return out


class CudaIpc:
    """Another process's GPU memory mapped here through its CUDA IPC handle (the driver's
    cuIpcOpenMemHandle, from libcuda.so.1 as the worker's): `run` with "on_device" reads the
    worker's inputs and writes its truths where they lie, with no copy through the host."""

    def __init__(self, torch):
        import ctypes
        self.torch, self.ctypes = torch, ctypes
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # the primary context current on this thread, as the driver calls need
        lib = ctypes.CDLL("libcuda.so.1")

        class Handle(ctypes.Structure):
            _fields_ = [("reserved", ctypes.c_ubyte * 64)]

        self.Handle = Handle
        self._open = getattr(lib, "cuIpcOpenMemHandle_v2", None) or lib.cuIpcOpenMemHandle
        self._open.argtypes = [ctypes.POINTER(ctypes.c_uint64), Handle, ctypes.c_uint]
        self._open.restype = ctypes.c_int
        self._close = lib.cuIpcCloseMemHandle
        self._close.argtypes = [ctypes.c_uint64]
        self._close.restype = ctypes.c_int
        self.mapped = []  # base pointers opened by the request under way

    def tensor(self, meta):
        """The tensor `meta` describes ({name, dtype, shape, handle: 128 hex digits, offset, nbytes}),
        a view of the other process's memory."""
        name, nbytes, offset = meta.get("name"), int(meta["nbytes"]), int(meta["offset"])
        tname, shape = wire_layout(meta, nbytes)
        if nbytes <= 0 or offset < 0:
            raise ValueError("tensor %s: %d bytes at offset %d: nothing to map" % (name, nbytes, offset))
        raw = bytes.fromhex(meta["handle"])
        if len(raw) != 64:
            raise ValueError("tensor %s: an IPC handle is 64 bytes, not %d" % (name, len(raw)))
        base = self.ctypes.c_uint64()
        rc = self._open(self.ctypes.byref(base), self.Handle.from_buffer_copy(raw), 1)  # lazy peer access
        if rc != 0:
            raise RuntimeError("tensor %s: cuIpcOpenMemHandle failed with CUDA error %d" % (name, rc))
        self.mapped.append(base.value)
        view = _DeviceBytes(base.value + offset, nbytes)
        return self.torch.as_tensor(view, device="cuda").view(getattr(self.torch, tname)).reshape(shape)

    def synchronize(self):
        self.torch.cuda.synchronize()

    def close(self):
        """Unmaps every handle this request opened (after the device is synchronized)."""
        errors = [rc for rc in (self._close(b) for b in self.mapped) if rc != 0]
        self.mapped = []
        if errors:
            raise RuntimeError("cuIpcCloseMemHandle failed with CUDA error %d" % errors[0])


class _DeviceBytes:
    """`nbytes` bytes at a device address, as torch.as_tensor reads __cuda_array_interface__."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 2}


def run_on_device(torch, golden, on_device, ipc):
    """`run` with its tensors left on the GPU: the inputs mapped, the golden computed, each output
    written into the worker's truth where its dtype and shape are the ones asked for (the worker
    checks the list it gets back, as it checks outputs sent through the pipes)."""
    if not isinstance(on_device, dict) or not all(isinstance(on_device.get(k), list) for k in ("inputs", "outputs")):
        raise ValueError("on_device holds the lists inputs and outputs")
    try:
        inputs = {m["name"]: ipc.tensor(m) for m in on_device["inputs"]}
        truths = [ipc.tensor(m) for m in on_device["outputs"]]
        outs = golden.run(inputs)
        written = []
        for i, (name, y) in enumerate(outs):
            dt = forgek_dtype(torch, y.dtype)
            if dt is None:
                raise ValueError("output %s has dtype %s, which the helper does not carry" % (name, y.dtype))
            if i < len(truths) and on_device["outputs"][i]["dtype"] == dt and list(truths[i].shape) == list(y.shape):
                truths[i].copy_(y)
            written.append({"name": name, "dtype": dt, "shape": list(y.shape), "nbytes": y.numel() * DTYPES[dt][1]})
        return written
    finally:
        inputs = truths = outs = y = None
        ipc.synchronize()  # every write done before the worker reads its truths or frees the memory
        ipc.close()


def compute_device(torch):
    """Where `run` computes in float64: FORGEK_TORCH_DEVICE (cpu, cuda), else CUDA when torch has it."""
    want = os.environ.get("FORGEK_TORCH_DEVICE", "auto")
    if want not in ("auto", "cpu", "cuda"):
        raise Refused("FORGEK_TORCH_DEVICE=%s: expected cpu, cuda or auto" % want)
    if want == "cuda" and not torch.cuda.is_available():
        raise Refused("FORGEK_TORCH_DEVICE=cuda, but torch %s has no CUDA device here" % torch.__version__)
    if want == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return want


class Goldens:
    """The Model of the last sizes asked for (only one is kept: a Model at benchmark sizes can be
    gigabytes in float64). A definition's reference takes its sizes from the tensors: one for all."""

    def __init__(self, torch, path, sizes, device):
        self.torch, self.path, self.sizes, self.device = torch, path, sizes, device
        self.key, self.golden = None, None

    def drop(self):
        self.key, self.golden = None, None

    def get(self, sizes):
        if is_definition(self.path):
            if self.golden is None:
                self.golden = DefinitionGolden(self.torch, self.path, self.device)
            return self.golden
        sizes = dict(self.sizes, **{k: int(v) for k, v in (sizes or {}).items()})
        key = tuple(sorted(sizes.items()))
        if key != self.key:
            self.golden = None
            if self.device == "cuda":
                self.torch.cuda.empty_cache()
            self.golden = Golden(self.torch, self.path, sizes, self.device)
            self.key = key
        return self.golden


def serve(path, sizes, stdin, stdout):
    torch = import_torch()
    device = compute_device(torch)
    goldens = Goldens(torch, path, sizes, device) if path else None
    yardstick = None
    ipc = None  # CudaIpc, at the first `run` with on_device
    while True:
        header, blobs = read_message(stdin)
        if header is None:
            return 0
        try:
            tensors = {m["name"]: to_tensor(torch, m, b) for m, b in zip(header.get("tensors", []), blobs)}
            start = time.perf_counter()
            if header.get("op") == "echo":
                outs = list(tensors.items())
            elif header.get("op") == "run":
                if goldens is None:
                    raise ValueError("run needs a problem file: serve FILE.py (or a definition FILE.json)")
                sizes_asked = header.get("sizes") or {}
                if not isinstance(sizes_asked, dict):
                    raise ValueError("sizes must be an object of NAME: integer")
                yardstick = None  # one model on the device at a time
                if header.get("on_device") is not None:
                    if device != "cuda":
                        raise ValueError("on_device: this helper computes on the %s, so it cannot map the worker's GPU "
                                         "memory (CUDA IPC needs torch with CUDA)" % device)
                    ipc = ipc or CudaIpc(torch)
                    written = run_on_device(torch, goldens.get(sizes_asked), header["on_device"], ipc)
                    torch.cuda.empty_cache()
                    write_message(stdout, {"ok": True, "tensors": [], "written": written, "device": device,
                                           "compute_s": time.perf_counter() - start})
                    continue
                outs = goldens.get(sizes_asked).run(tensors)
                if device == "cuda":
                    torch.cuda.synchronize()
            elif header.get("op") == "time" and header.get("torch_ops"):
                # A built-in operator's yardstick: no problem file, inputs drawn here.
                if goldens is not None:
                    goldens.drop()
                yardstick = None
                eager, target, bind = torch_ops_calls(torch, str(header["torch_ops"]), header.get("config"), device)
                compiled, why = compiled_or_why(torch, target)
                timing = time_modes(torch, {"eager": eager, "compile": bind(compiled) if compiled else None}, [],
                                    device, header.get("reps", 50), float(header.get("budget_s", 20)))
                if compiled is None:
                    timing["compile"] = {"error": why}
                eager = compiled = target = bind = None
                if device == "cuda":
                    torch.cuda.empty_cache()
                write_message(stdout, {"ok": True, "tensors": [], "device": device, "torch": torch.__version__,
                                       "timing": timing, "compute_s": time.perf_counter() - start})
                continue
            elif header.get("op") == "time":
                if not path:
                    raise ValueError("time needs a problem file: serve FILE.py (or a definition FILE.json)")
                sizes_asked = dict(sizes, **{k: int(v) for k, v in (header.get("sizes") or {}).items()})
                goldens.drop()  # the float64 Model makes room for the native one
                if device == "cuda":
                    torch.cuda.empty_cache()
                if yardstick is None or yardstick[0] != sizes_asked:
                    yardstick = None
                    yardstick = (sizes_asked, Yardstick(torch, path, sizes_asked, device))
                ys = yardstick[1]
                args = ys.arguments(tensors)
                compiled, why = compiled_or_why(torch, ys.fn)
                timing = time_modes(torch, {"eager": ys.fn, "compile": compiled}, args, device,
                                    header.get("reps", 50), float(header.get("budget_s", 20)))
                if compiled is None:
                    timing["compile"] = {"error": why}
                args = None
                if device == "cuda":
                    torch.cuda.empty_cache()
                write_message(stdout, {"ok": True, "tensors": [], "device": device, "torch": torch.__version__,
                                       "timing": timing, "compute_s": time.perf_counter() - start})
                continue
            else:
                raise ValueError("unknown op %r (echo, run, time)" % header.get("op"))
            metas, datas = zip(*[from_tensor(torch, n, t) for n, t in outs]) if outs else ((), ())
            outs = None
            if device == "cuda":
                # The worker times kernels on the same GPU next, with input copies sized by free memory.
                torch.cuda.empty_cache()
            compute_s = time.perf_counter() - start
            write_message(stdout, {"ok": True, "tensors": list(metas), "device": device, "compute_s": compute_s}, datas)
        except Exception as e:  # the request fails; the helper goes on
            write_message(stdout, {"ok": False, "error": "%s: %s" % (type(e).__name__, e)})


def main(argv):
    parser = argparse.ArgumentParser(prog="forgek_torch_helper.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("describe")
    d.add_argument("file")
    d.add_argument("--sizes", default="")
    s = sub.add_parser("serve")
    s.add_argument("file", nargs="?")
    s.add_argument("--sizes", default="")
    sub.add_parser("check")
    w = sub.add_parser("seed")
    w.add_argument("file")
    w.add_argument("--sizes", default="")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "check":
            torch = import_torch()
            print(json.dumps({"python": sys.executable, "torch": torch.__version__,
                              "cuda": bool(torch.cuda.is_available())}))
            return 0
        sizes = parse_sizes(args.sizes)
        if args.cmd == "seed":
            if not os.path.isfile(args.file):
                raise Refused("no such file")
            print(json.dumps({"seed": elementwise_seed(args.file, sizes)}))
            return 0
        if args.cmd == "describe":
            if not os.path.isfile(args.file):
                raise Refused("no such file")
            what = describe_definition if is_definition(args.file) else describe
            print(json.dumps(what(args.file, sizes), indent=1))
            return 0
        return serve(args.file, sizes, sys.stdin.buffer, sys.stdout.buffer)
    except Refused as e:
        where = getattr(args, "file", "") or ""
        print(json.dumps({"error": str(e), "file": os.path.abspath(where) if where else "", "line": e.line}))
        return 1


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv[1:]))
