#!/usr/bin/env python3
"""A scripted model for `forgek run --op softmax_fp32 --agent llm` with no network: an
OpenAI-compatible /v1/chat/completions server (python3 standard library only) that serves real
softmax kernels and answers the run's feedback the way a model would: a kernel that is `slower`
or `same` (or `faster`) is followed by the next rung of a ladder of improvements, a request for a
new architecture gets a family (params with lists, which the run's search tunes), a parent is
improved by one rung, a compile error or a wrong result falls back to a kernel known to work.

    python3 scripts/scripted_model.py --port 8765 &
    OPENAI_API_KEY=dummy forgek run --op softmax_fp32 --agent llm --model scripted \
        --base-url http://127.0.0.1:8765/v1
    python3 scripts/scripted_model.py --print-kernels DIR   # write every kernel it serves to DIR

--rename x=x,y=out,M=batch_size,N=dim serves the same kernels to an operator whose tensors and
params are named otherwise (an imported softmax: `forgek ops import kernelbench level1_23_Softmax.py`):
the names are replaced in each kernel's manifest (args, grid, constraints), never in its code.
"""
import argparse
import http.server
import json
import os
import re
import sys

# The seed's design (one CTA per row, three passes, shared-memory tree reductions), THREADS given.
THREE_PASS = r'''/* forgek
{
  "name": "scripted_softmax_r{rung}_three_pass",
  "mechanisms": ["smem_tree_reduction"],
  "params": {"THREADS": {threads}},
  "launches": [
    {"kernel": "softmax_three_pass", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
__device__ float block_reduce(float value, bool take_max) {
  __shared__ float partial[THREADS];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int width = THREADS / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) {
      const float other = partial[threadIdx.x + width];
      partial[threadIdx.x] = take_max ? fmaxf(partial[threadIdx.x], other) : partial[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float result = partial[0];
  __syncthreads();
  return result;
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_three_pass(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;
  float local_max = __int_as_float(0xff800000);
  for (int j = threadIdx.x; j < N; j += THREADS) local_max = fmaxf(local_max, xrow[j]);
  const float row_max = block_reduce(local_max, true);
  float local_sum = 0.f;
  for (int j = threadIdx.x; j < N; j += THREADS) local_sum += expf(xrow[j] - row_max);
  const float row_sum = block_reduce(local_sum, false);
  for (int j = threadIdx.x; j < N; j += THREADS) yrow[j] = expf(xrow[j] - row_max) / row_sum;
}
'''

# One CTA per row, two passes: an online (max, sum) pair per thread merged by warp shuffles and
# one shared-memory step, then the write pass; VEC = 4 reads and writes float4.
ONLINE = r'''/* forgek
{
  "name": "{name}",
  "mechanisms": {mechanisms},
  "params": {params},
  "constraints": ["N % VEC == 0", "THREADS % 32 == 0", "THREADS <= 1024"],
  "launches": [
    {"kernel": "softmax_online", "grid": ["M"], "block": ["THREADS"], "args": ["x", "y", "M", "N"]}
  ]
}
*/
// (m, s) pairs: s is the sum of exp(v - m) over the values seen; merging rescales to the larger max.
__device__ __forceinline__ void merge(float& m, float& s, float om, float os) {
  const float nm = fmaxf(m, om);
  s = (m == nm ? s : s * expf(m - nm)) + (om == nm ? os : os * expf(om - nm));
  m = nm;
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_online(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
  const int row = blockIdx.x;
  if (row >= M) return;
  const float* xrow = x + static_cast<size_t>(row) * N;
  float* yrow = y + static_cast<size_t>(row) * N;
  float m = __int_as_float(0xff800000);  // -inf
  float s = 0.f;
#if VEC == 4
  const float4* x4 = reinterpret_cast<const float4*>(xrow);
  for (int j = threadIdx.x; j < N / 4; j += THREADS) {
    const float4 v = x4[j];
    const float lm = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
    merge(m, s, lm, expf(v.x - lm) + expf(v.y - lm) + expf(v.z - lm) + expf(v.w - lm));
  }
#else
  for (int j = threadIdx.x; j < N; j += THREADS) merge(m, s, xrow[j], 1.f);
#endif
  for (int offset = 16; offset > 0; offset >>= 1)
    merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
  __shared__ float warp_m[32], warp_s[32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    warp_m[warp] = m;
    warp_s[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < THREADS / 32 ? warp_m[lane] : __int_as_float(0xff800000);
    s = lane < THREADS / 32 ? warp_s[lane] : 0.f;
    for (int offset = 16; offset > 0; offset >>= 1)
      merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
    if (lane == 0) {
      warp_m[0] = m;
      warp_s[0] = s;
    }
  }
  __syncthreads();
  const float row_max = warp_m[0];
  const float inv_sum = 1.f / warp_s[0];
#if VEC == 4
  float4* y4 = reinterpret_cast<float4*>(yrow);
  for (int j = threadIdx.x; j < N / 4; j += THREADS) {
    float4 v = x4[j];
    v.x = expf(v.x - row_max) * inv_sum;
    v.y = expf(v.y - row_max) * inv_sum;
    v.z = expf(v.z - row_max) * inv_sum;
    v.w = expf(v.w - row_max) * inv_sum;
    y4[j] = v;
  }
#else
  for (int j = threadIdx.x; j < N; j += THREADS) yrow[j] = expf(xrow[j] - row_max) * inv_sum;
#endif
}
'''

# The ladder: each rung is what the model tries after the previous one was measured.
LADDER = [
    ("three_pass", 64, 1, "first try: the three-pass design with a small block (64 threads)"),
    ("three_pass", 256, 1, "THREADS 64 -> 256: more threads per row to hide memory latency"),
    ("online", 256, 1, "two passes instead of three: an online max and sum merged by warp shuffles"),
    ("online", 256, 4, "VEC 1 -> 4: 16-byte float4 loads and stores"),
    ("online", 512, 4, "THREADS 256 -> 512: more bytes in flight per row"),
    ("online", 1024, 4, "THREADS 512 -> 1024"),
]


def kernel(rung):
    design, threads, vec, _ = LADDER[rung]
    if design == "three_pass":
        return THREE_PASS.replace("{rung}", str(rung)).replace("{threads}", str(threads))
    mechanisms = '["warp_shuffle_reduction"' + (', "vector_16B"]' if vec == 4 else "]")
    return (ONLINE.replace("{name}", f"scripted_softmax_r{rung}_online")
            .replace("{mechanisms}", mechanisms)
            .replace("{params}", json.dumps({"THREADS": threads, "VEC": vec})))


def family(variant):
    """The online design as a family; `variant` rotates the lists (another source, same space)."""
    threads = [256, 512, 1024, 128]
    k = variant % len(threads)
    threads = threads[k:] + threads[:k]
    return (ONLINE.replace("{name}", f"scripted_softmax_family_v{variant}")
            .replace("{mechanisms}", '["warp_shuffle_reduction", "vector_16B"]')
            .replace("{params}", json.dumps({"THREADS": threads, "VEC": [4, 1]})))


def rung_of(text):
    m = re.search(r"scripted_softmax_r(\d+)_", text or "")
    return int(m.group(1)) if m else None


def family_variant_of(text):
    m = re.search(r"scripted_softmax_family_v(\d+)", text or "")
    return int(m.group(1)) if m else None


RENAME = {}  # softmax_fp32's tensor and param names -> the served operator's (--rename)


def renamed(code):
    """`code` with the manifest's names replaced by RENAME (whole identifiers only)."""
    if not RENAME:
        return code
    end = code.index("*/")
    pattern = re.compile(r"\b(" + "|".join(re.escape(k) for k in RENAME) + r")\b")
    return pattern.sub(lambda m: RENAME[m.group(1)], code[:end]) + code[end:]


def reply(text, code):
    return f"{text}\n\n```cuda\n{renamed(code)}```\n"


def answer(last, previous):
    """The reply to a request whose last user message is `last` (previous reply: `previous`)."""
    if previous:
        if "compile_error" in last or "`wrong`" in last or "launch_error" in last:
            return reply("Back to a kernel known to compile and be correct (rung 2).", kernel(2))
        if "identical to one already tried" in last:
            v = family_variant_of(previous)
            r = rung_of(previous)
            if v is not None or r is None or r + 1 >= len(LADDER):
                nv = (v or 0) + 1
                return reply(f"family variant {nv}: the same search space, listed in another order", family(nv))
            return reply(LADDER[r + 1][3], kernel(r + 1))
        # Feedback on a measured kernel: the next rung (a family once the ladder is climbed).
        r = rung_of(previous)
        verdict = "slower" if "`slower`" in last else "same" if "`same`" in last else "faster"
        if r is None or r + 1 >= len(LADDER):
            v = family_variant_of(previous)
            nv = 0 if v is None else v + 1
            return reply(f"it was {verdict}: let the search pick THREADS and VEC (family)", family(nv))
        return reply(f"it was {verdict}; {LADDER[r + 1][3]}", kernel(r + 1))
    if "### Parent A" not in last:
        return reply(LADDER[0][3], kernel(0))
    parent = last[last.index("### Parent A"):]
    parent = parent[:parent.find("```", parent.find("```cuda") + 7)]
    if "NEW ARCHITECTURE" in last:
        return reply("a new architecture for the search: the online design as a family", family(0))
    r = rung_of(parent)
    if r is None or r + 1 >= len(LADDER):
        return reply("parent A's design, its sizes searched (family)", family((family_variant_of(parent) or 0) + 1))
    return reply(f"improving parent A: {LADDER[r + 1][3]}", kernel(r + 1))


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        if not self.path.endswith("/chat/completions"):
            self.send_error(404, "only /v1/chat/completions is served")
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        last = previous = ""
        for m in body.get("messages", []):
            if m.get("role") == "user":
                last = m.get("content", "")
            elif m.get("role") == "assistant":
                previous = m.get("content", "")
        text = answer(last, previous)
        prompt_tokens = sum(len(m.get("content", "")) for m in body.get("messages", [])) // 4
        out = json.dumps({
            "id": "scripted", "object": "chat.completion", "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(text) // 4,
                      "total_tokens": prompt_tokens + len(text) // 4},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, fmt, *args):
        sys.stderr.write("scripted-model: " + fmt % args + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--print-kernels", metavar="DIR", help="write every kernel served to DIR and exit")
    p.add_argument("--rename", default="", metavar="OLD=NEW,...",
                   help="names of softmax_fp32 (x, y, M, N) as the served operator has them")
    a = p.parse_args()
    for item in filter(None, a.rename.split(",")):
        old, _, new = item.partition("=")
        if old not in ("x", "y", "M", "N") or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", new):
            p.error(f"--rename {item}: expected OLD=NEW with OLD one of x, y, M, N")
        RENAME[old] = new
    if a.print_kernels:
        os.makedirs(a.print_kernels, exist_ok=True)
        for r in range(len(LADDER)):
            with open(os.path.join(a.print_kernels, f"rung{r}.cu"), "w") as f:
                f.write(renamed(kernel(r)))
        for v in range(4):
            with open(os.path.join(a.print_kernels, f"family{v}.cu"), "w") as f:
                f.write(renamed(family(v)))
        return
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(f"scripted model on http://127.0.0.1:{a.port}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
