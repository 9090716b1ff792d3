"""softmax_example: a softmax_fp32 seal exported for PyTorch, called eagerly and under torch.compile,
checked against torch.softmax and timed (docs/seal-format.md, "The torch export").

Export the seal, then run from anywhere (the export in out/):

    forgek seal export SEAL_ID out --lang torch
    python3 examples/torch/softmax_example.py out              # the suite's sizes and one outside it
    python3 examples/torch/softmax_example.py out 1000x2000    # the given sizes (ROWSxCOLS)

Importing the package builds its C once with the system cc against the CUDA toolkit (CUDA_HOME,
CUDA_PATH or /usr/local/cuda) into ~/.cache/forgek/torch. The times are CUDA-event medians of the
op alone on the current stream, comparable with `forgek seal verify SEAL_ID`'s per-config times.
Exit status 0 when every size matched torch.softmax within the operator's tolerance, 1 otherwise.
"""

import statistics
import sys

import torch

SIZES = [(4096, 32768), (65536, 1024), (16384, 4096), (333, 5000)]
REL_L2, MAX_ABS = 2e-5, 5e-6  # operators/softmax_fp32/operator.json's tolerance


def error(y, x):
    """max_abs and rel_l2 of y against torch.softmax in float64."""
    ref = torch.softmax(x.double(), dim=-1)
    d = y.double() - ref
    return d.abs().max().item(), (d.norm() / ref.norm()).item()


def median_us(fn, x, reps=50):
    """The median time of fn(x) in microseconds, each call between two CUDA events."""
    for _ in range(5):
        fn(x)
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return statistics.median(times)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 1
    sys.path.insert(0, argv[1])
    import forgek_softmax_fp32  # registers torch.ops.forgek.softmax_fp32

    sizes = [tuple(int(v) for v in a.split("x")) for a in argv[2:]] or SIZES
    eager = torch.ops.forgek.softmax_fp32
    compiled = torch.compile(lambda t: torch.ops.forgek.softmax_fp32(t) * 1.0, fullgraph=True)
    ok = True
    print(f"seal {forgek_softmax_fp32.SEAL_ID[:12]} ({forgek_softmax_fp32.ARCH})")
    for m, n in sizes:
        x = torch.randn(m, n, device="cuda") * 2
        try:
            y, yc = eager(x), compiled(x)
        except (ValueError, forgek_softmax_fp32.ForgekError) as e:
            print(f"{m}x{n}: not served: {e}")
            continue
        (abs_e, rel_e), (abs_c, rel_c) = error(y, x), error(yc, x)
        good = max(abs_e, abs_c) <= MAX_ABS and max(rel_e, rel_c) <= REL_L2
        ok = ok and good
        print(f"{m}x{n}: eager max_abs {abs_e:.2g} rel_l2 {rel_e:.2g}, compiled max_abs {abs_c:.2g} "
              f"rel_l2 {rel_c:.2g}, {median_us(eager, x):.1f} us (torch.softmax "
              f"{median_us(lambda t: torch.softmax(t, -1), x):.1f} us){'' if good else '  MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
