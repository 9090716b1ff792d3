"""PyTorch implementations of every operator under operators/, for scripts/compare_torch.py.

Each operator is one function `fn(t, s, odt)`:
  t    name -> tensor for every input and inout of the operator (operator.json `tensors`);
       inouts are updated in place, as the kernels update them;
  s    name -> value for every param of the config and every scalar (f32 scalars already rounded
       to fp32, as the kernels receive them);
  odt  name -> torch dtype each output is returned in.
It returns name -> tensor for every output and inout.

compare_torch.py calls the same function twice over:
  - as the truth: floating inputs widened to float64, outputs returned as float32 (what the golden
    kernels write, docs/operator-format.md) and inouts rounded once to their own dtype; the seal is
    checked against this under the operator's tolerance;
  - as the PyTorch contender, timed eagerly and under torch.compile, on the native dtypes (bf16,
    fp8, ...). Where the exact-semantics form is not what a PyTorch user would run, `fast` is timed
    instead (its own agreement with the truth is reported), and `eager` names a fused PyTorch kernel
    timed eagerly when this torch has it (else `fast`/`fn`).

u32 tensors travel as int32 tensors holding the same bits (torch has no general uint32 support);
the kernels see identical bytes.

Operators whose semantics cannot be expressed in PyTorch (NOT_EXPRESSIBLE: name -> reason):

| operator | reason |
|---|---|
| (none) | every operator of the suite is expressed below |

How some operators are expressed (the timed PyTorch form; the truth is always exact):

| operator | PyTorch form |
|---|---|
| adamw_step_fp32 | in-place tensor ops (AdamW's single-tensor math); eager: torch._fused_adamw_ (fused=True) |
| attention_decode_paged_bf16 | pages gathered into dense K/V (index_select), then SDPA(enable_gqa) |
| attention_prefill_bf16 | SDPA(is_causal, enable_gqa); the float64 truth in query chunks |
| conv2d_fprop_bf16, depthwise_conv2d_bf16 | F.conv2d on channels-last views of NHWC (depthwise: groups=C) |
| gemm_bias_gelu_bf16 | gelu(A @ B + bias); eager: torch._addmm_activation (cuBLASLt GELU epilogue) |
| gemm_fp8_e4m3 | torch._scaled_mm(A, B.t(), scale_a, scale_b, out_dtype=bf16) |
| grouped_gemm_bf16 | one matmul per expert from group_sizes read on the host; eager: torch._grouped_mm |
| moe_topk_softmax, topk_rows_fp32 | truth: stable descending sort (the tie rule); timed: torch.topk |
| radix_sort_pairs_u32 | stable torch.sort of the keys with the sign bit flipped (u32 order as int32), values gathered |
| top_p_sampling_fp32 | sorted cumulative mass for the threshold, then the column-order inverse CDF (no sampling RNG) |
"""

torch = None  # set by load(): importing this module must not need torch (the CI machine has none)
F = None


def load():
    """Imports torch (on the GPU machine only) and returns it."""
    global torch, F
    if torch is None:
        import torch as _torch
        import torch.nn.functional as _F
        torch, F = _torch, _F
    return torch


class Op:
    """One operator's PyTorch implementation: `fn` (exact semantics), optional `fast` (timed instead
    of fn, eager and compiled) and `eager` (a fused kernel timed eagerly when it runs)."""

    def __init__(self, fn, fast=None, eager=None):
        self.fn = fn
        self.fast = fast
        self.eager = eager

    @property
    def timed(self):
        return self.fast or self.fn


def up(x):
    """x widened to float32 when it is a low-precision float; float32 and float64 stay as they are."""
    if x.dtype in (torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2):
        return x.float()
    return x


def _attention(q, k, v, scale, causal):
    """softmax(scale * q k^T [causal]) v with grouped-query heads. q [B,HQ,S,D], k and v
    [B,HKV,Skv,D]. float64 (the truth) is computed in query chunks so that the scores fit memory."""
    if q.dtype != torch.float64:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, enable_gqa=True)
    B, HQ, S, _ = q.shape
    HKV, SKV = k.shape[1], k.shape[2]
    G = HQ // HKV
    rows = max(1, (1 << 27) // (G * SKV))  # at most 2^27 scores (1 GiB of float64) per chunk
    o = torch.empty_like(q)
    cols = torch.arange(SKV, device=q.device)
    for b in range(B):
        for h in range(HKV):
            kk, vv = k[b, h], v[b, h]
            for i0 in range(0, S, rows):
                i1 = min(S, i0 + rows)
                sc = torch.matmul(q[b, h * G:(h + 1) * G, i0:i1], kk.transpose(0, 1)) * scale
                if causal:
                    pos = torch.arange(i0, i1, device=q.device)
                    sc = sc.masked_fill(cols[None, :] > pos[:, None], float("-inf"))
                o[b, h * G:(h + 1) * G, i0:i1] = torch.matmul(torch.softmax(sc, dim=-1), vv)
    return o


def adamw_step_fp32(t, s, odt):
    p, g, m, v = t["p"], t["g"], t["m"], t["v"]
    lr, b1, b2, eps, wd = s["lr"], s["beta1"], s["beta2"], s["eps"], s["weight_decay"]
    bc1 = 1.0 - b1 ** s["step"]
    bc2 = 1.0 - b2 ** s["step"]
    p.mul_(1.0 - lr * wd)
    m.mul_(b1).add_(g, alpha=1.0 - b1)
    v.mul_(b2).addcmul_(g, g, value=1.0 - b2)
    denom = (v / bc2).sqrt_().add_(eps)
    p.addcdiv_(m, denom, value=-lr / bc1)
    return {"p": p, "m": m, "v": v}


def adamw_step_fp32_fused(t, s, odt):
    p, g, m, v = t["p"], t["g"], t["m"], t["v"]
    step = torch.full((), float(s["step"]), dtype=torch.float32, device=p.device)
    torch._fused_adamw_([p], [g], [m], [v], [], [step], lr=s["lr"], beta1=s["beta1"], beta2=s["beta2"],
                        weight_decay=s["weight_decay"], eps=s["eps"], amsgrad=False, maximize=False)
    return {"p": p, "m": m, "v": v}


def argmax_rows_bf16(t, s, odt):
    # torch.argmax returns the first occurrence of the maximum: the operator's tie rule.
    return {"y": torch.argmax(t["x"], dim=1).to(odt["y"])}


def attention_decode_paged_bf16(t, s, odt):
    q, pages = t["q"], t["page_table"]
    B, HQ, D = q.shape
    PAGE, HKV = s["PAGE"], s["HKV"]
    ctx = pages.shape[1] * PAGE
    flat = pages.reshape(-1)
    k = t["k_cache"].index_select(0, flat).reshape(B, ctx, HKV, D).transpose(1, 2)
    v = t["v_cache"].index_select(0, flat).reshape(B, ctx, HKV, D).transpose(1, 2)
    o = _attention(q.unsqueeze(2), k, v, s["softmax_scale"], causal=False)
    return {"o": o.squeeze(2).to(odt["o"])}


def attention_prefill_bf16(t, s, odt):
    o = _attention(t["q"], t["k"], t["v"], s["softmax_scale"], causal=True)
    return {"o": o.to(odt["o"])}


def batched_gemm_bf16(t, s, odt):
    return {"C": torch.bmm(t["A"], t["B"]).to(odt["C"])}


def conv2d_fprop_bf16(t, s, odt):
    x = t["x"].permute(0, 3, 1, 2)  # NHWC as an NCHW view in channels-last memory
    w = t["w"].permute(0, 3, 1, 2)  # KRSC as KCRS, channels last
    y = F.conv2d(x, w, padding=(s["R"] // 2, s["S"] // 2))
    return {"y": y.permute(0, 2, 3, 1).contiguous().to(odt["y"])}


def cross_entropy_fp32(t, s, odt):
    loss = F.cross_entropy(t["logits"], t["targets"].long(), reduction="none")
    return {"loss": loss.to(odt["loss"])}


def cumsum_fp32(t, s, odt):
    return {"y": torch.cumsum(t["x"], dim=-1).to(odt["y"])}  # each row of x[M, N]


def depthwise_conv2d_bf16(t, s, odt):
    x = t["x"].permute(0, 3, 1, 2)
    w = t["w"].permute(0, 3, 1, 2)  # [C,R,S,1] as [C,1,R,S]
    y = F.conv2d(x, w, padding=(s["R"] // 2, s["S"] // 2), groups=s["C"])
    return {"y": y.permute(0, 2, 3, 1).contiguous().to(odt["y"])}


def embedding_gather_bf16(t, s, odt):
    return {"out": F.embedding(t["ids"], t["table"]).to(odt["out"])}


def fused_add_rmsnorm_bf16(t, s, odt):
    residual = t["residual"]
    r = up(t["x"]) + up(residual)
    y = r * torch.rsqrt(r.pow(2).mean(dim=-1, keepdim=True) + s["eps"]) * up(t["w"])
    residual.copy_(r)  # the truth's residual is r rounded once to bf16, by compare_torch
    return {"residual": residual, "y": y.to(odt["y"])}


def gelu_tanh_bf16(t, s, odt):
    return {"y": F.gelu(t["x"], approximate="tanh").to(odt["y"])}


def gemm_bf16(t, s, odt):
    return {"C": torch.matmul(t["A"], t["B"]).to(odt["C"])}


def gemm_bias_gelu_bf16(t, s, odt):
    v = torch.matmul(t["A"], t["B"]) + t["bias"]
    return {"C": F.gelu(v, approximate="tanh").to(odt["C"])}


def gemm_bias_gelu_bf16_fused(t, s, odt):
    c = torch._addmm_activation(t["bias"], t["A"], t["B"], use_gelu=True)
    return {"C": c.to(odt["C"])}


def gemm_fp8_e4m3(t, s, odt):
    A, B, sa, sb = t["A"], t["B"], t["scale_a"], t["scale_b"]
    if A.dtype == torch.float64:  # the truth: e4m3 values widened exactly
        c = torch.matmul(A, B.t()) * (sa * sb)
    else:
        c = torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    return {"C": c.to(odt["C"])}


def gemv_bf16(t, s, odt):
    return {"y": torch.matmul(t["x"], t["W"]).to(odt["y"])}


def grouped_gemm_bf16(t, s, odt):
    A, B = t["A"], t["B"]
    T, E = s["T"], s["E"]
    sizes = t["group_sizes"].tolist()
    C = A.new_empty((T, B.shape[2]))
    consumed = 0
    for e in range(E):  # start = min(sum of earlier sizes, T); the last expert ends at T
        start = min(consumed, T)
        end = T if e == E - 1 else min(start + sizes[e], T)
        if end > start:
            C[start:end] = torch.matmul(A[start:end], B[e])
        consumed += sizes[e]
    return {"C": C.to(odt["C"])}


def grouped_gemm_bf16_fused(t, s, odt):
    offs = torch.cumsum(t["group_sizes"], dim=0, dtype=torch.int32).clamp(max=s["T"])
    offs[-1] = s["T"]
    c = torch._grouped_mm(t["A"], t["B"], offs=offs, out_dtype=torch.bfloat16)
    return {"C": c.to(odt["C"])}


def histogram_u8(t, s, odt):
    return {"hist": torch.bincount(t["x"], minlength=256).to(odt["hist"])}


def layernorm_bf16(t, s, odt):
    y = F.layer_norm(t["x"], (s["N"],), t["gamma"], t["beta"], s["eps"])
    return {"y": y.to(odt["y"])}


def moe_topk_softmax(t, s, odt):
    values, ids = torch.sort(t["logits"], dim=1, descending=True, stable=True)
    values, ids = values[:, :s["K"]], ids[:, :s["K"]]
    return {"weights": torch.softmax(values, dim=1).to(odt["weights"]), "ids": ids.to(odt["ids"])}


def moe_topk_softmax_topk(t, s, odt):
    values, ids = torch.topk(t["logits"], s["K"], dim=1)
    return {"weights": torch.softmax(values, dim=1).to(odt["weights"]), "ids": ids.to(odt["ids"])}


def quantize_fp8_per_token(t, s, odt):
    x = t["x"]
    amax = up(x.abs().amax(dim=1))
    scales = torch.clamp(amax / 448.0, min=1.0 / (448.0 * 512.0)).to(torch.float32)
    q = (up(x) / scales[:, None]).clamp(-448.0, 448.0)
    return {"q": q.to(odt["q"]), "scales": scales.to(odt["scales"])}


def radix_sort_pairs_u32(t, s, odt):
    sign = -(1 << 31)  # flipping the sign bit orders u32 bit patterns as int32
    keys, order = torch.sort(t["keys_in"] ^ sign, stable=True)
    values = t["values_in"].index_select(0, order)
    return {"keys_out": (keys ^ sign).to(odt["keys_out"]), "values_out": values.to(odt["values_out"])}


def reduce_sum_rows_fp32(t, s, odt):
    return {"y": t["x"].sum(dim=1).to(odt["y"])}


def rmsnorm_bf16(t, s, odt):
    y = F.rms_norm(t["x"], (s["N"],), weight=t["w"], eps=s["eps"])
    return {"y": y.to(odt["y"])}


def rope_bf16(t, s, odt):
    q = up(t["q"])
    half = s["D"] // 2
    cs = t["cos_sin_cache"].index_select(0, t["positions"])[:, None, :]  # [T, 1, D]
    c, sn = cs[..., :half], cs[..., half:]
    x1, x2 = q[..., :half], q[..., half:]
    out = torch.cat([x1 * c - x2 * sn, x2 * c + x1 * sn], dim=-1)
    return {"q_rot": out.to(odt["q_rot"])}


def silu_and_mul_bf16(t, s, odt):
    x = t["x"]
    n = s["N"]
    return {"out": (F.silu(x[:, :n]) * x[:, n:]).to(odt["out"])}


def softmax_fp32(t, s, odt):
    return {"y": torch.softmax(t["x"], dim=-1).to(odt["y"])}


def top_p_sampling_fp32(t, s, odt):
    x, u = t["logits"], t["u"]
    V = x.shape[1]
    w = torch.exp(x - x.amax(dim=1, keepdim=True))
    needed = s["top_p"] * w.sum(dim=1, keepdim=True)
    # theta: the largest logit whose mass (w over logits >= it) reaches needed; in descending
    # order that is the value at the first position where the running mass reaches needed.
    sorted_x, order = torch.sort(x, dim=1, descending=True)
    mass = torch.cumsum(torch.gather(w, 1, order), dim=1)
    first = torch.searchsorted(mass, needed).clamp(max=V - 1)
    theta = torch.gather(sorted_x, 1, first)
    nucleus = x >= theta
    wn = torch.where(nucleus, w, torch.zeros_like(w))
    r = u[:, None] * wn.sum(dim=1, keepdim=True)
    past = (torch.cumsum(wn, dim=1) > r) & nucleus
    first_past = torch.argmax(past.to(torch.int32), dim=1)
    last_in = V - 1 - torch.argmax(torch.flip(nucleus, dims=[1]).to(torch.int32), dim=1)
    samples = torch.where(past.any(dim=1), first_past, last_in)
    return {"samples": samples.to(odt["samples"])}


def topk_rows_fp32(t, s, odt):
    values, indices = torch.sort(t["x"], dim=1, descending=True, stable=True)
    return {"values": values[:, :s["K"]].to(odt["values"]), "indices": indices[:, :s["K"]].to(odt["indices"])}


def topk_rows_fp32_topk(t, s, odt):
    values, indices = torch.topk(t["x"], s["K"], dim=1)
    return {"values": values.to(odt["values"]), "indices": indices.to(odt["indices"])}


def transpose_bf16(t, s, odt):
    return {"out": t["in"].t().contiguous().to(odt["out"])}


OPS = {
    "adamw_step_fp32": Op(adamw_step_fp32, eager=adamw_step_fp32_fused),
    "argmax_rows_bf16": Op(argmax_rows_bf16),
    "attention_decode_paged_bf16": Op(attention_decode_paged_bf16),
    "attention_prefill_bf16": Op(attention_prefill_bf16),
    "batched_gemm_bf16": Op(batched_gemm_bf16),
    "conv2d_fprop_bf16": Op(conv2d_fprop_bf16),
    "cross_entropy_fp32": Op(cross_entropy_fp32),
    "cumsum_fp32": Op(cumsum_fp32),
    "depthwise_conv2d_bf16": Op(depthwise_conv2d_bf16),
    "embedding_gather_bf16": Op(embedding_gather_bf16),
    "fused_add_rmsnorm_bf16": Op(fused_add_rmsnorm_bf16),
    "gelu_tanh_bf16": Op(gelu_tanh_bf16),
    "gemm_bf16": Op(gemm_bf16),
    "gemm_bias_gelu_bf16": Op(gemm_bias_gelu_bf16, eager=gemm_bias_gelu_bf16_fused),
    "gemm_fp8_e4m3": Op(gemm_fp8_e4m3),
    "gemv_bf16": Op(gemv_bf16),
    "grouped_gemm_bf16": Op(grouped_gemm_bf16, eager=grouped_gemm_bf16_fused),
    "histogram_u8": Op(histogram_u8),
    "layernorm_bf16": Op(layernorm_bf16),
    "moe_topk_softmax": Op(moe_topk_softmax, fast=moe_topk_softmax_topk),
    "quantize_fp8_per_token": Op(quantize_fp8_per_token),
    "radix_sort_pairs_u32": Op(radix_sort_pairs_u32),
    "reduce_sum_rows_fp32": Op(reduce_sum_rows_fp32),
    "rmsnorm_bf16": Op(rmsnorm_bf16),
    "rope_bf16": Op(rope_bf16),
    "silu_and_mul_bf16": Op(silu_and_mul_bf16),
    "softmax_fp32": Op(softmax_fp32),
    "top_p_sampling_fp32": Op(top_p_sampling_fp32),
    "topk_rows_fp32": Op(topk_rows_fp32, fast=topk_rows_fp32_topk),
    "transpose_bf16": Op(transpose_bf16),
}

NOT_EXPRESSIBLE = {}
