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
* Memory-bound kernels: copy, RMSNorm forward and backward, SiLU x multiply, a BF16 -> FP8 cast,
  an absolute-maximum reduction and cross-entropy over a 128,256-token vocabulary, each with the
  bytes it must move.
* Kernel overhead: back-to-back tiny kernels launched eagerly from Python and replayed from a
  CUDA graph.

Each figure is the mean over timed iterations (CUDA events) after untimed warm-up ones, on
random normal data. Usage: python3 compute_probe.py OUTPUT.json [--quick]
[--only=gemm,gemm_m_sweep,attention,attention_shapes,moe,memory,overhead]. Needs PyTorch with
CUDA; FP8 needs compute capability 8.9 or later.
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


def attention_shapes():
    """cuDNN attention at the shapes of today's models, causal, 8,192 tokens, forward and backward:
    grouped-query (Llama 3 70B per TP-8 rank: 8 query heads of 128, 1 KV head), DeepSeek-V3's MLA
    (query and key head 192, value 128, 128 heads over TP 8 = 16) and a sliding window."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    rows = []
    s, b = 8192, 1
    cases = [("gqa_8q_1kv_d128", 8, 1, 128, 128), ("mha_8_d128", 8, 8, 128, 128), ("mla_16_d192_v128", 16, 16, 192, 128)]
    for backend, sdp in {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}.items():
        for name, hq, hkv, dqk, dv in cases:
            try:
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
                flops = 2.0 * b * hq * s * s * (dqk + dv) * 0.5
                rows.append({"backend": backend, "case": name, "seq": s, "q_heads": hq, "kv_heads": hkv, "qk_dim": dqk,
                             "v_dim": dv, "fwd_s": fwd, "bwd_s": both - fwd, "fwd_flops": flops,
                             "fwd_tflops": flops / fwd / 1e12, "fwd_bwd_tflops": 3.5 * flops / both / 1e12})
            except Exception as e:  # noqa: BLE001
                rows.append({"backend": backend, "case": name, "error": repr(e)[:300]})
    return {"rows": rows, "flop_convention": "forward 2 b h s^2 (d_qk + d_v) / 2 (causal), backward 2.5 x forward"}


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


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: compute_probe.py OUTPUT.json [--quick]")
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
    if run("gemm"):
        section("gemm", gemms, doc)
        doc["device"]["smi_after_gemms"] = smi("clocks.sm,clocks.mem,power.draw,temperature.gpu")
    for name, fn in (("gemm_m_sweep", gemm_m_sweep), ("attention", attention), ("attention_shapes", attention_shapes),
                     ("moe", moe),
                     ("memory", memory), ("overhead", overhead)):
        if run(name):
            section(name, fn, doc)
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, sys.argv[1])


if __name__ == "__main__":
    main()
