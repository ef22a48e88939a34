#!/usr/bin/env python3
"""commscale compute probe: kernel-level figures of one GPU for the step predictor's compute model.

Measures, with PyTorch on the first visible CUDA device, the kernel-level quantities that
include/commscale/predict/compute.hpp models, and writes them as one JSON document:

* GEMMs: the best shape of a brute-force search (ml-engineering's "MAMF" method), square
  sizes, and the forward, input-gradient and weight-gradient GEMMs of Llama 3 8B and 70B layers
  at several token counts and tensor-parallel sizes, in BF16 (torch.matmul with nn.Linear's
  layouts) and FP8 E4M3 with per-tensor scales (torch._scaled_mm, TN layout as Transformer
  Engine runs it), FP8 with and without cuBLASLt's fast accumulation.
* Attention: scaled_dot_product_attention with the FlashAttention-2 and cuDNN backends, causal
  and not, head dimension 64 and 128, 512 to 32,768 tokens at 16,384 tokens per batch (the
  configuration of the flash-attention README's benchmarks), forward and backward apart.
* GEMM M sweep (gemm_m_sweep): six TP-sharded Llama 3 forward GEMMs at 64 to 8,192 tokens, BF16
  and FP8, timed as CUDA-graph replays, for the tile and wave effects of small token counts.
* Attention at today's models' shapes (attention_shapes): grouped-query, MLA (query and key head
  192, value 128) with cuDNN and FlashAttention-2, 8,192 tokens, causal.
* MoE (moe): the routed experts' FC1 and FC2 of Qwen3 30B-A3B, DeepSeek-V3, GPT-OSS 120B and
  Mixtral 8x7B on one expert-parallel rank at 1,024-8,192 tokens, as one grouped GEMM
  (torch._grouped_mm), a per-expert loop and one dense GEMM; the token gather and index sort.
* Attention against heads per rank (attention_heads): cuDNN and FlashAttention-2, causal, head
  dimension 128, 1-128 query heads (8 per KV head), 2,048-32,768 tokens, micro-batch 1.
* Whole layers (layers): one Llama 3 8B (TP 1) or 70B (TP 4, TP 8) decoder layer on one rank,
  eager PyTorch with cuDNN attention, BF16 and FP8 (per-tensor current scaling through
  torch._scaled_mm), 2,048-32,768 tokens, forward and backward timed and split by kernel
  (torch.profiler): the compute model's parts (GEMMs, attention, the rest) measured in place.
* Sustained layers (sustained): the Llama 3 8B, 70B (TP 4) and 405B (TP 8) layers at 8,192 tokens
  run back to back for 30 s each (8 s with --quick), BF16 and FP8, with the time per iteration
  per second of the run and nvidia-smi's clock, power and temperature every half second: the
  steady clock a layer settles at under the power limit, against its first second's rate.
* Unfused attention (unfused_attention): Megatron-Core's DotProductAttention core (GQA repeat,
  baddbmm, Gemma 2's eager soft-cap, FusedScaleMaskSoftmax's fused kernel up to 4,096 keys and its
  PyTorch fallback beyond, bmm) and Hugging Face's eager attention at Gemma 2 9B / 27B and Llama 3
  8B shapes per tensor-parallel rank, 2,048-8,192 tokens, forward and backward timed and split by
  kernel, with the bytes the forward keeps for the backward.
* Memory-bound kernels: copy, RMSNorm forward and backward, SiLU x multiply, a BF16 -> FP8 cast,
  an absolute-maximum reduction and cross-entropy over a 128,256-token vocabulary, each with the
  bytes it must move.
* Kernel overhead: back-to-back tiny kernels launched eagerly from Python and replayed from a
  CUDA graph.

Each figure is the mean over timed iterations (CUDA events) after untimed warm-up ones, on
random normal data; --heat=SECONDS first runs large GEMMs for that long, so that what follows
runs at the clocks of a GPU under sustained load. Usage: python3 compute_probe.py OUTPUT.json
[--quick] [--heat=SECONDS] [--only=gemm,gemm_m_sweep,attention,attention_shapes,attention_heads,
moe,layers,unfused_attention,memory,overhead,sustained]. Needs PyTorch with CUDA; FP8 needs compute capability 8.9 or later.
"""

import json
import math
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

QUICK = "--quick" in sys.argv
TARGET_S = 0.02 if QUICK else 0.05  # timed seconds per measurement
SUSTAIN_S = 30.0  # seconds each case of the sustained section runs
dev = torch.device("cuda")


def bench(fn, target_s=TARGET_S, min_iters=3, max_iters=500, warmup=3):
    """Mean seconds per call of fn over enough iterations to fill target_s (CUDA events)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    one = max(start.elapsed_time(end) * 1e-3, 1e-6)
    iters = int(min(max_iters, max(min_iters, math.ceil(target_s / one))))
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e-3 / iters


def smi(fields):
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader,nounits", "-i", "0"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
        return dict(zip(fields.split(","), [v.strip() for v in out.split(",")]))
    except Exception as e:  # noqa: BLE001 - recorded, not fatal
        return {"error": repr(e)}


def section(name, fn, doc):
    t0 = time.time()
    try:
        doc[name] = fn()
    except Exception as e:  # noqa: BLE001 - a failed section is recorded and the others still run
        doc.setdefault("errors", []).append({"section": name, "error": repr(e)})
    print(f"{name}: {time.time() - t0:.1f} s", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------- GEMMs
def bf16_gemm(m, n, k, layout, timer=bench):
    """Times one BF16 GEMM with output m x n and reduction k in nn.Linear's layouts:
    'fprop' Y = X W^T (X m x k, W n x k); 'dgrad' dX = dY W (dY m x k, W k x n);
    'wgrad' dW = dY^T X (dY k x m transposed, X k x n); 'nn' plain row-major. `timer`: bench, or
    graph_bench for CUDA-graph replays."""
    if layout == "fprop":
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=dev, dtype=torch.bfloat16).t()
    elif layout == "wgrad":
        a = torch.randn(k, m, device=dev, dtype=torch.bfloat16).t()
        b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    else:  # dgrad and nn: both row-major
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
    out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
    s = timer(lambda: torch.matmul(a, b, out=out))
    del a, b, out
    return s


def fp8_gemm(m, n, k, fast_accum, timer=bench):
    """Times one FP8 E4M3 GEMM, output m x n (BF16), reduction k, per-tensor scales, TN layout."""
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16).to(torch.float8_e4m3fn).t()
    sa = torch.tensor(1.0, device=dev)
    sb = torch.tensor(1.0, device=dev)
    s = timer(lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                       use_fast_accum=fast_accum))
    del a, b
    return s


def row(kind, m, n, k, seconds, **extra):
    r = {"dtype": kind, "m": m, "n": n, "k": k, "seconds": seconds, "tflops": 2.0 * m * n * k / seconds / 1e12}
    r.update(extra)
    return r


LLAMA = {  # hidden, heads, kv heads, head dim, ffn (Llama 3 model cards / config.json)
    "llama3-8b": (4096, 32, 8, 128, 14336),
    "llama3-70b": (8192, 64, 8, 128, 28672),
    "llama3-405b": (16384, 128, 8, 128, 53248),
}


def layer_gemms(model, tp):
    """(name, n, k) of a Llama layer's four GEMMs on one of tp ranks: fused QKV, attention output,
    fused gate-and-up (SwiGLU), down projection (Megatron-Core's column/row split)."""
    h, heads, kv, d, f = LLAMA[model]
    return [("qkv", (heads + 2 * kv) * d // tp, h), ("proj", h, heads * d // tp),
            ("fc1", 2 * f // tp, h), ("fc2", h, f // tp)]


def gemms():
    rows = []
    sizes = [4096, 6144, 8192, 12288, 16384] if not QUICK else [4096, 8192]
    best = {}
    for kind in ("bf16", "fp8"):
        for m in sizes:
            for n in sizes:
                for k in sizes:
                    if kind == "bf16":
                        s = bf16_gemm(m, n, k, "fprop")
                    else:
                        s = fp8_gemm(m, n, k, True)
                    r = row(kind, m, n, k, s, layout="fprop" if kind == "bf16" else "tn", search="mamf",
                            fast_accum=True if kind == "fp8" else None)
                    rows.append(r)
                    if r["tflops"] > best.get(kind, {"tflops": 0})["tflops"]:
                        best[kind] = r
    for x in [256, 512, 1024, 2048, 4096, 8192, 16384]:
        rows.append(row("bf16", x, x, x, bf16_gemm(x, x, x, "nn"), layout="nn", search="square"))
        rows.append(row("fp8", x, x, x, fp8_gemm(x, x, x, True), layout="tn", search="square", fast_accum=True))
    configs = [("llama3-8b", 1), ("llama3-8b", 2), ("llama3-70b", 4), ("llama3-70b", 8)]
    tokens = [1024, 2048, 4096, 8192, 16384] if not QUICK else [4096]
    for model, tp in configs:
        for t in tokens:
            for name, n, k in layer_gemms(model, tp):
                for phase, (mm, nn, kk) in (("fprop", (t, n, k)), ("dgrad", (t, k, n)), ("wgrad", (n, k, t))):
                    tag = dict(model=model, tp=tp, tokens=t, gemm=name, phase=phase)
                    rows.append(row("bf16", mm, nn, kk, bf16_gemm(mm, nn, kk, phase), layout=phase, search="layer", **tag))
                    for fast in (True, False):
                        rows.append(row("fp8", mm, nn, kk, fp8_gemm(mm, nn, kk, fast), layout="tn", search="layer",
                                        fast_accum=fast, **tag))
    return {"rows": rows, "best": best}


def graph_bench(fn, reps=20, target_s=TARGET_S):
    """Mean GPU seconds per call of fn, captured `reps` times into a CUDA graph and replayed: the
    kernels run back to back with no host launch between them (the GPU time of short kernels,
    which a Python loop cannot keep fed)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            fn()
    return bench(graph.replay, target_s=target_s) / reps


def gemm_m_sweep():
    """Tile and wave effects: the forward GEMMs of TP-sharded Llama 3 layers (output M x N,
    reduction K) at 64 to 8,192 tokens, BF16 and FP8 (fast accumulation), timed as CUDA-graph
    replays (graph_bench)."""
    rows = []
    shapes = [("llama3-70b tp8 qkv", 1280, 8192), ("llama3-70b tp8 proj", 8192, 1024),
              ("llama3-70b tp8 fc1", 7168, 8192), ("llama3-70b tp8 fc2", 8192, 3584),
              ("llama3-8b tp1 qkv", 6144, 4096), ("llama3-8b tp8 qkv", 768, 4096)]
    ms = list(range(64, 2048, 64)) + list(range(2048, 8193, 256))
    for name, n, k in shapes:
        for m in ms:
            rows.append(row("bf16", m, n, k, bf16_gemm(m, n, k, "fprop", timer=graph_bench), layout="fprop",
                            search="m_sweep", timing="graph", gemm=name))
            rows.append(row("fp8", m, n, k, fp8_gemm(m, n, k, True, timer=graph_bench), layout="tn",
                            search="m_sweep", timing="graph", gemm=name, fast_accum=True))
    return {"rows": rows}

# ----------------------------------------------------------------------------------- attention
def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows = []
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    seqs = [512, 1024, 2048, 4096, 8192, 16384, 32768] if not QUICK else [1024, 8192]
    for backend, sdp in backends.items():
        for d in (64, 128):
            heads = 2048 // d
            for causal in (True, False):
                if d == 64 and not causal:
                    continue
                for s in seqs:
                    b = max(1, 16384 // s)
                    try:
                        q, k, v = (torch.randn(b, heads, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                                   for _ in range(3))
                        g = torch.randn(b, heads, s, d, device=dev, dtype=torch.bfloat16)
                        with sdpa_kernel([sdp]):
                            fwd = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))

                            def step():
                                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                                torch.autograd.grad(o, (q, k, v), g)

                            both = bench(step)
                        flops = 4.0 * b * heads * s * s * d * (0.5 if causal else 1.0)
                        rows.append({"backend": backend, "causal": causal, "batch": b, "seq": s, "heads": heads,
                                     "head_dim": d, "fwd_s": fwd, "bwd_s": both - fwd, "fwd_flops": flops,
                                     "fwd_tflops": flops / fwd / 1e12, "bwd_tflops": 2.5 * flops / (both - fwd) / 1e12,
                                     "fwd_bwd_tflops": 3.5 * flops / both / 1e12})
                        del q, k, v, g
                    except Exception as e:  # noqa: BLE001 - an unsupported shape is recorded
                        rows.append({"backend": backend, "causal": causal, "seq": s, "head_dim": d, "error": repr(e)})
    return {"rows": rows, "flop_convention": "forward 4 b h s^2 d (halved when causal), backward 2.5 x forward"}


# ------------------------------------------------------------------------------- memory-bound
def memory():
    rows = []
    t, h = 16384, 8192  # 128 Mi elements, 256 MiB in BF16: several times the L2
    x = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    w = torch.ones(h, device=dev, dtype=torch.bfloat16)
    e = x.numel()

    def add(name, seconds, nbytes, note):
        rows.append({"kernel": name, "seconds": seconds, "bytes": nbytes, "bytes_per_s": nbytes / seconds, "note": note})

    add("copy", bench(lambda: y.copy_(x)), 4 * e, "read and write BF16")
    add("rmsnorm_fwd", bench(lambda: F.rms_norm(x, (h,), w, 1e-5)), 4 * e, "torch.nn.functional.rms_norm, read x, write y")
    xr = x.detach().clone().requires_grad_(True)
    gy = torch.randn_like(x)

    def rms_fb():
        o = F.rms_norm(xr, (h,), w, 1e-5)
        torch.autograd.grad(o, (xr,), gy)

    add("rmsnorm_fwd_bwd", bench(rms_fb), 4 * e + 6 * e, "forward, then backward reading x and dy, writing dx (eager autograd)")
    a = torch.randn(t, h, device=dev, dtype=torch.bfloat16)
    add("silu_mul", bench(lambda: F.silu(x) * a), 10 * e, "two eager kernels: silu (read, write), multiply (2 reads, write)")
    add("cast_bf16_fp8", bench(lambda: x.to(torch.float8_e4m3fn)), 3 * e, "read BF16, write FP8 E4M3")
    add("amax", bench(lambda: x.abs().amax()), 6 * e, "two eager kernels: abs (read, write), max (read)")
    del a, xr, gy
    vocab, tokens = 128256, 4096
    logits = torch.randn(tokens, vocab, device=dev, dtype=torch.bfloat16, requires_grad=True)
    target = torch.randint(0, vocab, (tokens,), device=dev)
    ce_f = bench(lambda: F.cross_entropy(logits, target))

    def ce_fb():
        loss = F.cross_entropy(logits, target)
        torch.autograd.grad(loss, (logits,))

    ce_fb_s = bench(ce_fb)
    n = tokens * vocab
    add("cross_entropy_fwd", ce_f, 2 * n, "BF16 logits 4096 x 128256, eager; bytes: the logits read once")
    add("cross_entropy_fwd_bwd", ce_fb_s, 2 * n * 3, "bytes: logits read forward and backward, gradient written once")
    return {"rows": rows}


# ------------------------------------------------------------------------------ MoE expert GEMMs
MOE = {  # experts, hidden, expert FFN width, top-k, expert-parallel size of a typical run (config.json files)
    "qwen3-30b-a3b": (128, 2048, 768, 8, 8),
    "deepseek-v3": (256, 7168, 2048, 8, 32),
    "gpt-oss-120b": (128, 2880, 2880, 4, 8),
    "mixtral-8x7b": (8, 4096, 14336, 2, 8),
}


def grouped_mm(a, b, offs):
    return torch._grouped_mm(a, b, offs=offs, out_dtype=torch.bfloat16)


def moe():
    """The routed experts' GEMMs of one GPU: its E/ep local experts receive tokens x top-k rows in
    all under balanced routing (tokens per expert = tokens x top-k / local experts). Each GEMM
    (FC1: gate and up, 2f x h; FC2: h x f) timed three ways: one grouped GEMM (torch._grouped_mm),
    one torch.matmul per expert from Python (as a per-expert loop launches them), and one dense
    GEMM of all the rows (the same FLOPs at the dense shape). Also the token permutation (a row
    gather of tokens x top-k rows) and the sort of the routing indices."""
    rows = []
    for tokens, (name, (experts, h, f, topk, ep)) in ((t, c) for t in (1024, 4096, 8192) for c in MOE.items()):
        local = experts // ep
        total = tokens * topk
        per = total // local
        offs = torch.arange(per, total + 1, per, device=dev, dtype=torch.int32)[:local]
        for gemm, (n, k) in (("fc1", (2 * f, h)), ("fc2", (h, f))):
            a = torch.randn(per * local, k, device=dev, dtype=torch.bfloat16)
            r = {"model": name, "tokens": tokens, "gemm": gemm, "local_experts": local, "rows_per_expert": per, "n": n, "k": k,
                 "flops": 2.0 * per * local * n * k}
            try:
                b = torch.randn(local, n, k, device=dev, dtype=torch.bfloat16).transpose(-2, -1)
                r["grouped_s"] = bench(lambda: grouped_mm(a, b, offs))
            except Exception as e:  # noqa: BLE001
                r["grouped_error"] = repr(e)[:300]
                b = torch.randn(local, k, n, device=dev, dtype=torch.bfloat16)
            ws = [b[i] for i in range(local)]
            parts = [a[i * per:(i + 1) * per] for i in range(local)]

            def loop():
                for i in range(local):
                    torch.matmul(parts[i], ws[i])

            r["per_expert_loop_s"] = bench(loop)
            wd = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
            r["dense_s"] = bench(lambda: torch.matmul(a, wd))
            for key in ("grouped_s", "per_expert_loop_s", "dense_s"):
                if key in r:
                    r[key.replace("_s", "_tflops")] = r["flops"] / r[key] / 1e12
            rows.append(r)
            del a, b, ws, parts, wd
        x = torch.randn(tokens, h, device=dev, dtype=torch.bfloat16)
        idx = torch.randint(0, tokens, (total,), device=dev)
        gather = bench(lambda: x.index_select(0, idx))
        keys = torch.randint(0, experts, (total,), device=dev)
        sort = bench(lambda: torch.sort(keys, stable=True))
        rows.append({"model": name, "tokens": tokens, "kernel": "permute_gather", "rows": total, "hidden": h, "seconds": gather,
                     "bytes": 2 * 2 * total * h, "bytes_per_s": 4 * total * h / gather})
        rows.append({"model": name, "tokens": tokens, "kernel": "sort_indices", "rows": total, "seconds": sort})
    return {"rows": rows}


def causal_sdpa_times(sdp, b, hq, hkv, s, dqk, dv):
    """(forward, forward + backward) seconds of causal scaled_dot_product_attention on backend
    `sdp`: b sequences of s tokens, hq query heads over hkv KV heads, query/key head dimension dqk
    and value head dimension dv."""
    from torch.nn.attention import sdpa_kernel
    q = torch.randn(b, hq, s, dqk, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, hkv, s, dqk, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, hkv, s, dv, device=dev, dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(b, hq, s, dv, device=dev, dtype=torch.bfloat16)
    gqa = hq != hkv
    with sdpa_kernel([sdp]):
        fwd = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa))

        def step():
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
            torch.autograd.grad(o, (q, k, v), g)

        both = bench(step)
    return fwd, both


def attention_shapes():
    """cuDNN attention at the shapes of today's models, causal, 8,192 tokens, forward and backward:
    grouped-query (Llama 3 70B per TP-8 rank: 8 query heads of 128, 1 KV head), DeepSeek-V3's MLA
    (query and key head 192, value 128, 128 heads over TP 8 = 16) and a sliding window."""
    from torch.nn.attention import SDPBackend
    rows = []
    s, b = 8192, 1
    cases = [("gqa_8q_1kv_d128", 8, 1, 128, 128), ("mha_8_d128", 8, 8, 128, 128), ("mla_16_d192_v128", 16, 16, 192, 128)]
    for backend, sdp in {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}.items():
        for name, hq, hkv, dqk, dv in cases:
            try:
                fwd, both = causal_sdpa_times(sdp, b, hq, hkv, s, dqk, dv)
                flops = 2.0 * b * hq * s * s * (dqk + dv) * 0.5
                rows.append({"backend": backend, "case": name, "seq": s, "q_heads": hq, "kv_heads": hkv, "qk_dim": dqk,
                             "v_dim": dv, "fwd_s": fwd, "bwd_s": both - fwd, "fwd_flops": flops,
                             "fwd_tflops": flops / fwd / 1e12, "fwd_bwd_tflops": 3.5 * flops / both / 1e12})
            except Exception as e:  # noqa: BLE001
                rows.append({"backend": backend, "case": name, "error": repr(e)[:300]})
    return {"rows": rows, "flop_convention": "forward 2 b h s^2 (d_qk + d_v) / 2 (causal), backward 2.5 x forward"}


def attention_heads():
    """Attention's efficiency against the parallelism a rank's heads give the kernel: causal, head
    dimension 128, micro-batch 1, 1 to 128 query heads (grouped-query, 8 per KV head, as Llama 3's
    layers split over tensor-parallel ranks), 2,048 to 32,768 tokens, cuDNN and FlashAttention-2,
    forward and backward apart."""
    from torch.nn.attention import SDPBackend
    rows = []
    for backend, sdp in {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}.items():
        for hq in (1, 2, 4, 8, 16, 32, 64, 128):
            hkv = max(1, hq // 8)
            for s in (2048, 4096, 8192, 16384, 32768):
                try:
                    fwd, both = causal_sdpa_times(sdp, 1, hq, hkv, s, 128, 128)
                    flops = 2.0 * hq * s * s * 128  # forward, causal: 4 h s^2 d / 2
                    rows.append({"backend": backend, "q_heads": hq, "kv_heads": hkv, "seq": s, "fwd_s": fwd,
                                 "bwd_s": both - fwd, "fwd_tflops": flops / fwd / 1e12,
                                 "fwd_bwd_tflops": 3.5 * flops / both / 1e12})
                except Exception as e:  # noqa: BLE001
                    rows.append({"backend": backend, "q_heads": hq, "seq": s, "error": repr(e)[:300]})
    return {"rows": rows, "flop_convention": "forward 2 h s^2 d (causal), backward 2.5 x forward"}


# ------------------------------------------------------------------------------ whole layers
E4M3_MAX = 448.0  # largest finite float8_e4m3fn (OCP FP8 formats, v1.0)


def quantize_fp8(x):
    """Per-tensor current scaling (Transformer Engine's Float8CurrentScaling): the tensor's amax,
    the scale that maps it to E4M3's largest value, the scaled cast. Returns the FP8 tensor and the
    dequantizing scale _scaled_mm takes."""
    amax = x.abs().amax().float().clamp(min=1e-12)
    return (x * (E4M3_MAX / amax)).to(torch.float8_e4m3fn), amax / E4M3_MAX


class Fp8Linear(torch.autograd.Function):
    """y = x W^T with every GEMM in FP8 E4M3 (current scaling), as Transformer Engine runs a
    Linear: forward with cuBLASLt's fast accumulation, input and weight gradients with the split
    accumulator; the transposed FP8 copies the backward GEMMs need are made from the quantized
    tensors (cast-transpose)."""

    @staticmethod
    def forward(ctx, x, w):
        xq, sx = quantize_fp8(x)
        wq, sw = quantize_fp8(w)
        ctx.save_for_backward(xq, sx, wq, sw)
        return torch._scaled_mm(xq, wq.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16, use_fast_accum=True)

    @staticmethod
    def backward(ctx, dy):
        xq, sx, wq, sw = ctx.saved_tensors
        dyq, sdy = quantize_fp8(dy.contiguous())
        dx = torch._scaled_mm(dyq, wq.t().contiguous().t(), scale_a=sdy, scale_b=sw, out_dtype=torch.bfloat16,
                              use_fast_accum=False)
        dw = torch._scaled_mm(dyq.t().contiguous(), xq.t().contiguous().t(), scale_a=sdy, scale_b=sx,
                              out_dtype=torch.bfloat16, use_fast_accum=False)
        return dx, dw


def llama_layer(model, tp, seq, precision):
    """One Llama 3 decoder layer on one of `tp` tensor-parallel ranks (Megatron-Core's split, no
    sequence parallelism, no communication: the rank's compute alone), micro-batch 1: RMSNorm,
    fused QKV, rotary embedding, causal grouped-query attention (cuDNN), output projection,
    residual, RMSNorm, fused gate-and-up, SiLU x multiply, down projection, residual. Eager
    PyTorch: each elementwise step is its own kernel. Returns (step, inputs) where step(x) runs it."""
    h, heads, kv, d, f = LLAMA[model]
    hq, hk = heads // tp, kv // tp

    def param(*shape):
        return (torch.randn(*shape, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_(True)

    w = {"qkv": param((hq + 2 * hk) * d, h), "proj": param(h, hq * d), "fc1": param(2 * f // tp, h),
         "fc2": param(h, f // tp)}
    n1 = torch.ones(h, device=dev, dtype=torch.bfloat16, requires_grad=True)
    n2 = torch.ones(h, device=dev, dtype=torch.bfloat16, requires_grad=True)
    inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2, device=dev, dtype=torch.float32) / d))  # Llama 3 rope_theta
    ang = torch.outer(torch.arange(seq, device=dev, dtype=torch.float32), inv)
    cos = torch.cat((ang.cos(), ang.cos()), -1).to(torch.bfloat16)
    sin = torch.cat((ang.sin(), ang.sin()), -1).to(torch.bfloat16)
    lin = (lambda x, wt: Fp8Linear.apply(x, wt)) if precision == "fp8" else F.linear

    def rope(t):  # t: [1, heads, seq, d]; rotate-half form (Hugging Face Llama)
        t1, t2 = t[..., : d // 2], t[..., d // 2:]
        return t * cos + torch.cat((-t2, t1), -1) * sin

    def step(x):
        y = F.rms_norm(x, (h,), n1, 1e-5)
        qkv = lin(y, w["qkv"])
        q, k, v = qkv.split([hq * d, hk * d, hk * d], -1)
        q = rope(q.view(seq, hq, d).transpose(0, 1).unsqueeze(0))
        k = rope(k.view(seq, hk, d).transpose(0, 1).unsqueeze(0))
        v = v.view(seq, hk, d).transpose(0, 1).unsqueeze(0)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=hq != hk)
        x = x + lin(o.squeeze(0).transpose(0, 1).reshape(seq, hq * d), w["proj"])
        g, u = lin(F.rms_norm(x, (h,), n2, 1e-5), w["fc1"]).chunk(2, -1)
        return x + lin(F.silu(g) * u, w["fc2"])

    return step, [n1, n2] + list(w.values())


def layer_case(model, tp, seq, precision):
    """llama_layer on random inputs of one micro-batch: (fwd, fwd_bwd), the layer's forward and its
    forward with the backward of the input and every parameter."""
    step, params = llama_layer(model, tp, seq, precision)
    x = torch.randn(seq, LLAMA[model][0], device=dev, dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn_like(x)

    def fwd():
        return step(x)

    def fwd_bwd():
        torch.autograd.grad(step(x), [x] + params, g)

    return fwd, fwd_bwd


def kernel_times(fn, iters=3, name_len=160):
    """GPU time per call of fn by kernel name (torch.profiler's CUDA activity, read from its Chrome
    trace): {name: [launches per call, seconds per call]}."""
    import tempfile
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        prof.export_chrome_trace(tmp.name)
        with open(tmp.name) as fh:
            trace = json.load(fh)
    out = {}
    for e in trace.get("traceEvents", []):
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in e:
            name = e["name"][:name_len]
            c = out.setdefault(name, [0.0, 0.0])
            c[0] += 1.0 / iters
            c[1] += e["dur"] * 1e-6 / iters
    return out


def layers():
    """Whole Llama 3 layers, forward and forward + backward (llama_layer), BF16 and FP8 current
    scaling, 2,048 to 32,768 tokens, timed (CUDA events) and profiled by kernel (kernel_times)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows = []
    cases = [("llama3-8b", 1), ("llama3-70b", 4), ("llama3-70b", 8)]
    seqs = [2048, 4096, 8192, 16384, 32768] if not QUICK else [8192]
    for model, tp in cases:
        for precision in ("bf16", "fp8"):
            for seq in seqs:
                r = {"model": model, "tp": tp, "seq": seq, "micro_batch": 1, "precision": precision,
                     "attention": "cudnn"}
                try:
                    fwd, fwd_bwd = layer_case(model, tp, seq, precision)
                    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                        fwd_bwd()  # the first call picks the kernels; then the clocks the case starts at
                        r["smi_before"] = smi("clocks.sm,power.draw,temperature.gpu")
                        r["fwd_s"] = bench(fwd)
                        r["fwd_bwd_s"] = bench(fwd_bwd)
                        r["bwd_s"] = r["fwd_bwd_s"] - r["fwd_s"]
                        r["fwd_kernels"] = kernel_times(fwd)
                        r["fwd_bwd_kernels"] = kernel_times(fwd_bwd)
                        r["smi_after"] = smi("clocks.sm,power.draw,temperature.gpu")
                    del fwd, fwd_bwd
                except Exception as e:  # noqa: BLE001 - recorded, the other cases still run
                    r["error"] = repr(e)[:300]
                rows.append(r)
                torch.cuda.empty_cache()
    return {"rows": rows,
            "note": "one tensor-parallel rank's layer compute (no communication, no sequence parallelism), "
                    "micro-batch 1, eager PyTorch; fwd_s and fwd_bwd_s CUDA-event means, the kernel tables "
                    "per call from torch.profiler (launches, seconds) by kernel name"}


# ------------------------------------------------------------------------ unfused attention
# (name, query heads, KV heads, head dim, query_pre_attn_scalar or None, attention soft-cap or None)
UNFUSED_MODELS = {
    "gemma2-9b": (16, 8, 256, 256, 50.0),   # Gemma2ModelProvider9B / HF gemma-2-9b config.json
    "gemma2-27b": (32, 16, 128, 144, 50.0),  # Gemma2ModelProvider27B / HF gemma-2-27b config.json
    "llama3-8b": (32, 8, 128, None, None),   # Llama 3 8B config.json
}


def megatron_unfused(np_, ng, d, norm, softcap, fused_softmax, buf):
    """Megatron-Core's DotProductAttention (megatron/core/transformer/dot_product_attention.py) as
    Megatron-Bridge's Gemma2DotProductAttention extends it (models/gemma/gemma2_provider.py, r0.2.0),
    one rank's heads, no dropout (Gemma 2 and Llama 3 train without): the keys and values repeated
    to the query heads, the scores by baddbmm into a preallocated buffer (alpha 1/norm), Gemma 2's
    soft-cap as three eager kernels (logit_softcapping: tanh(x / c) * c), FusedScaleMaskSoftmax
    (megatron/core/fusions/fused_softmax.py), the context by bmm and its [s, b, h] copy.
    FusedScaleMaskSoftmax runs its fused causal kernel only where is_kernel_available (16 < sk <=
    4096, 16-bit input, masked_softmax_fusion, which GPTModelProvider sets): that kernel (read the
    scores, write the probabilities; backward read both, write one) is stood in for here by
    PyTorch's softmax over the unmasked row, one kernel with the same bytes. Beyond 4,096 keys it
    falls back to forward_torch_softmax: the default causal mask (get_default_causal_mask),
    attention_mask_func's masked_fill_ in place, torch.nn.Softmax (in 16 bits: Megatron-Bridge's
    GPTModelProvider sets attention_softmax_in_fp32 False)."""
    n_rep = np_ // ng
    causal = None  # get_default_causal_mask is lru_cache'd: made once per sequence length

    def run(q, k, v):
        nonlocal causal
        s, b = q.size(0), q.size(1)
        if n_rep > 1:
            k = k.repeat_interleave(n_rep, dim=2)
            v = v.repeat_interleave(n_rep, dim=2)
        qq = q.reshape(s, b * np_, d)
        kk = k.reshape(s, b * np_, d)
        scores = torch.baddbmm(buf, qq.transpose(0, 1), kk.transpose(0, 1).transpose(1, 2), beta=0.0, alpha=1.0 / norm)
        if softcap:
            scores = torch.tanh(scores / softcap) * softcap
        scores = scores.view(b, np_, s, s)
        if fused_softmax:
            probs = torch.softmax(scores, dim=-1)
        else:
            if causal is None:
                causal = torch.triu(torch.ones(s, s, device=dev), diagonal=1).bool()
            scores.masked_fill_(causal, -10000.0)
            probs = torch.nn.Softmax(dim=-1)(scores)
        vv = v.reshape(s, b * np_, d)
        ctx = torch.bmm(probs.view(b * np_, s, s), vv.transpose(0, 1))
        return ctx.view(b, np_, s, d).permute(2, 0, 1, 3).contiguous().view(s, b, np_ * d)

    return run


def hf_eager(model, np_, ng, d, norm, softcap):
    """Hugging Face transformers' eager attention (attn_implementation="eager"), the model's own
    eager_attention_forward from the installed transformers (Gemma2 or Llama modeling code), with
    the additive causal mask of the model's dtype that transformers builds for it; [b, h, s, d]."""
    import types
    if model.startswith("gemma2"):
        from transformers.models.gemma2.modeling_gemma2 import eager_attention_forward as fwd
    else:
        from transformers.models.llama.modeling_llama import eager_attention_forward as fwd
    module = types.SimpleNamespace(num_key_value_groups=np_ // ng, training=True)
    scaling = (norm if norm else d) ** -0.5

    def run(q, k, v, mask):
        kw = {"softcap": softcap} if softcap else {}
        out, _ = fwd(module, q, k, v, mask, dropout=0.0, scaling=scaling, **kw)
        return out

    return run


def unfused_attention():
    """The unfused attention core, forward and backward, timed and split by kernel: Megatron-Core's
    (megatron_unfused, the kernel Megatron-Bridge runs Gemma 2 with, and any model with
    --attention unfused) at Gemma 2 9B, Gemma 2 27B and Llama 3 8B shapes per tensor-parallel rank,
    2,048-8,192 tokens, on both sides of FusedScaleMaskSoftmax's 4,096-key limit; and Hugging Face's
    eager attention (hf_eager) at the same models' TP 1 shapes. Each row also gives the bytes the
    forward leaves allocated for the backward (kept_bytes: memory allocated with the output alive,
    less the inputs')."""
    rows = []
    cases = [("megatron", "gemma2-9b", tp, s) for tp in (1, 2, 4) for s in (4096, 8192)]
    cases += [("megatron", "gemma2-27b", tp, s) for tp in (2, 4, 8) for s in (4096, 8192)]
    cases += [("megatron", "llama3-8b", tp, s) for tp in (1, 4) for s in (2048, 4096, 8192)]
    cases += [("hf_eager", "gemma2-9b", 1, s) for s in (4096, 8192)]
    cases += [("hf_eager", "llama3-8b", 1, s) for s in (2048, 4096, 8192)]
    if QUICK:
        cases = [c for c in cases if c[3] == 4096 and c[2] <= 2] + [("megatron", "gemma2-9b", 1, 8192)]
    b = 1
    for impl, model, tp, s in cases:
        hq, hkv, d, norm, softcap = UNFUSED_MODELS[model]
        np_, ng = hq // tp, hkv // tp
        r = {"impl": impl, "model": model, "tp": tp, "seq": s, "micro_batch": b, "q_heads": np_, "kv_heads": ng,
             "head_dim": d, "softcap": softcap}
        try:
            if impl == "megatron":
                fused = 16 < s <= 4096 and (b * np_) % 4 == 0
                r["softmax"] = "fused_stand_in" if fused else "torch_fallback_bf16"
                buf = torch.empty(b * np_, s, s, device=dev, dtype=torch.bfloat16)
                core = megatron_unfused(np_, ng, d, norm if norm else math.sqrt(d), softcap, fused, buf)
                q = torch.randn(s, b, np_, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                k = torch.randn(s, b, ng, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                v = torch.randn(s, b, ng, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                g = torch.randn(s, b, np_ * d, device=dev, dtype=torch.bfloat16)
                args = (q, k, v)
            else:
                core4 = hf_eager(model, np_, ng, d, norm, softcap)
                mask = torch.full((s, s), torch.finfo(torch.bfloat16).min, device=dev, dtype=torch.bfloat16)
                mask = torch.triu(mask, diagonal=1)[None, None]
                core = lambda q, k, v: core4(q, k, v, mask)  # noqa: E731
                q = torch.randn(b, np_, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                k = torch.randn(b, ng, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                v = torch.randn(b, ng, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                g = torch.randn(b, s, np_, d, device=dev, dtype=torch.bfloat16)
                args = (q, k, v)

            def fwd():
                return core(*args)

            def fwd_bwd():
                torch.autograd.grad(core(*args), args, g)

            fwd_bwd()
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            out = fwd()
            torch.cuda.synchronize()
            r["kept_bytes"] = torch.cuda.memory_allocated() - base
            del out
            r["smi_before"] = smi("clocks.sm,power.draw,temperature.gpu")
            r["fwd_s"] = bench(fwd)
            r["fwd_bwd_s"] = bench(fwd_bwd)
            r["bwd_s"] = r["fwd_bwd_s"] - r["fwd_s"]
            r["fwd_kernels"] = kernel_times(fwd, name_len=400)
            r["fwd_bwd_kernels"] = kernel_times(fwd_bwd, name_len=400)
            r["smi_after"] = smi("clocks.sm,power.draw,temperature.gpu")
        except Exception as e:  # noqa: BLE001 - recorded, the other cases still run
            r["error"] = repr(e)[:300]
        rows.append(r)
        q = k = v = g = args = buf = core = mask = fwd = fwd_bwd = None  # noqa: F841 - freed before the next case
        torch.cuda.empty_cache()
    return {"rows": rows,
            "note": "one tensor-parallel rank's attention core, micro-batch 1, BF16, causal; fwd_s and fwd_bwd_s "
                    "CUDA-event means, the kernel tables per call from torch.profiler (launches, seconds) by kernel "
                    "name; megatron: q, k, v [s, b, heads, d], output [s, b, heads x d]; hf_eager: [b, heads, s, d] "
                    "in, [b, s, heads, d] out"}


def sustained():
    """Whole layers (llama_layer) run back to back for SUSTAIN_S seconds each, forward and backward,
    Llama 3 8B on TP 1, 70B on TP 4 and 405B on TP 8 at 8,192 tokens, BF16 and FP8: the time per
    iteration in windows of about a second, and nvidia-smi's SM clock, power and temperature sampled
    every half second from a second thread (so that the GPU never idles for a sample). Whether a
    layer made mostly of large GEMMs (405B's) settles at a lower clock under the power limit than one
    with more attention and memory-bound kernels (8B's), and by how much its steady rate falls from
    its first second's: the clock term the step model does not have. Ends each case with its kernel
    table (kernel_times) at the steady state."""
    import threading
    from torch.nn.attention import SDPBackend, sdpa_kernel
    seconds = 8.0 if QUICK else SUSTAIN_S
    rows = []
    fields = "clocks.sm,power.draw,temperature.gpu"
    for model, tp in (("llama3-8b", 1), ("llama3-70b", 4), ("llama3-405b", 8)):
        for precision in ("bf16", "fp8"):
            r = {"model": model, "tp": tp, "seq": 8192, "micro_batch": 1, "precision": precision,
                 "attention": "cudnn", "seconds": seconds}
            samples, stop = [], threading.Event()
            try:
                _, fwd_bwd = layer_case(model, tp, 8192, precision)
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    fwd_bwd()
                    torch.cuda.synchronize()
                    # iterations per window from the first call's time: about 1 s of work each
                    t0 = time.perf_counter()
                    fwd_bwd()
                    torch.cuda.synchronize()
                    per_window = max(1, int(1.0 / max(time.perf_counter() - t0, 1e-4)))
                    start = time.perf_counter()

                    def poll():
                        while not stop.is_set():
                            samples.append({"t_s": round(time.perf_counter() - start, 3), **smi(fields)})
                            stop.wait(0.5)

                    poller = threading.Thread(target=poll, daemon=True)
                    poller.start()
                    windows = []
                    while time.perf_counter() - start < seconds:
                        w0 = time.perf_counter()
                        for _ in range(per_window):
                            fwd_bwd()
                        torch.cuda.synchronize()
                        w1 = time.perf_counter()
                        windows.append({"t_s": round(w1 - start, 3), "iterations": per_window,
                                        "s_per_iteration": (w1 - w0) / per_window})
                    stop.set()
                    poller.join()
                    r["windows"] = windows
                    r["smi"] = samples
                    r["kernels_at_steady_state"] = kernel_times(fwd_bwd)
                # first window against the mean of the last half of the run
                half = [w["s_per_iteration"] for w in windows if w["t_s"] >= seconds / 2] or [windows[-1]["s_per_iteration"]]
                r["first_s_per_iteration"] = windows[0]["s_per_iteration"]
                r["steady_s_per_iteration"] = sum(half) / len(half)
                del fwd_bwd
            except Exception as e:  # noqa: BLE001 - recorded, the other cases still run
                stop.set()
                r["error"] = repr(e)[:300]
            rows.append(r)
            torch.cuda.empty_cache()
    return {"rows": rows,
            "note": "one tensor-parallel rank's layer (llama_layer: no communication, micro-batch 1, eager "
                    "PyTorch, cuDNN attention) forward + backward back to back; windows: wall time per "
                    "iteration over about a second each (CUDA-synchronized); smi: samples every 0.5 s; "
                    "steady_s_per_iteration: the mean over the windows of the run's second half"}


# ------------------------------------------------------------------------------ kernel overhead
def overhead():
    z = torch.zeros(1, device=dev)
    n = 2000
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        z.add_(1.0)
    torch.cuda.synchronize()
    eager_wall = (time.perf_counter() - t0) / n
    eager_gpu = bench(lambda: z.add_(1.0), target_s=0.05, max_iters=20000)
    replay = graph_bench(lambda: z.add_(1.0), reps=1000, target_s=0.05)
    # a 1024^3 BF16 GEMM launched from Python
    a = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    b = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    c = torch.empty(1024, 1024, device=dev, dtype=torch.bfloat16)
    eager_gemm = bench(lambda: torch.matmul(a, b, out=c))
    return {"tiny_kernel_eager_wall_s": eager_wall, "tiny_kernel_eager_gpu_s": eager_gpu,
            "tiny_kernel_graph_replay_s": replay, "gemm_1024_cube_s": eager_gemm,
            "note": "tiny kernel: an in-place add on one element; eager_wall is host time per launch, "
                    "eager_gpu the CUDA-event time per kernel of a back-to-back Python loop, graph_replay per "
                    "kernel of a 1000-kernel CUDA graph"}


def heat(seconds):
    """Back-to-back 8,192^3 BF16 GEMMs for `seconds`, so that the sections after it run at the clocks
    a GPU holds under sustained load (its power limit and temperature), as in training, rather than
    at the boost clock of a cold GPU. Returns nvidia-smi's clocks, power and temperature after it."""
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    c = torch.empty_like(a)
    t0 = time.time()
    while time.time() - t0 < seconds:
        for _ in range(20):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
    del a, b, c
    return {"seconds": seconds, "smi_after": smi("clocks.sm,power.draw,temperature.gpu")}


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: compute_probe.py OUTPUT.json [--quick] [--heat=SECONDS] [--only=SECTION,...]")
    props = torch.cuda.get_device_properties(0)
    doc = {
        "format": "commscale-compute-probe", "version": 1,
        "device": {"name": props.name, "compute_capability": f"{props.major}.{props.minor}",
                   "multiprocessors": props.multi_processor_count, "memory_bytes": props.total_memory,
                   "l2_bytes": getattr(props, "L2_cache_size", None),
                   "smi": smi("name,driver_version,clocks.max.sm,clocks.max.mem,power.limit,power.max_limit,memory.total")},
        "software": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "cudnn": torch.backends.cudnn.version(), "python": sys.version.split()[0]},
        "method": "mean of CUDA-event-timed iterations after 3 warm-ups, random normal inputs, "
                  f"at least {TARGET_S} s timed per figure",
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    torch.backends.cuda.matmul.allow_tf32 = False
    only = next((a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")), None)
    run = lambda name: only is None or name in only  # noqa: E731
    heat_s = next((float(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--heat=")), 0.0)
    if heat_s > 0:
        doc["heat"] = heat(heat_s)
    if run("gemm"):
        section("gemm", gemms, doc)
        doc["device"]["smi_after_gemms"] = smi("clocks.sm,clocks.mem,power.draw,temperature.gpu")
    for name, fn in (("gemm_m_sweep", gemm_m_sweep), ("attention", attention), ("attention_shapes", attention_shapes),
                     ("moe", moe), ("layers", layers), ("attention_heads", attention_heads),
                     ("unfused_attention", unfused_attention),
                     ("memory", memory), ("overhead", overhead), ("sustained", sustained)):
        if run(name):
            section(name, fn, doc)
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, sys.argv[1])


if __name__ == "__main__":
    main()
