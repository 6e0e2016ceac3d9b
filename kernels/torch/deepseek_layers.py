"""Two DeepSeek-V3 MoE layers at DeepSeek's per-GPU shapes, trained on one GPU with DeepSeek's FP8
recipe, profiled with torch.profiler: the Kineto trace `clustersim compare
scenarios/deepseek-v3-layers-h100.yaml` lines up with the simulated kernels, and the SM clock and
power NVML sampled while the steps ran back to back.

Per GPU the shapes are those of DeepSeek-V3's pretraining (EP64, no TP, 4096-token micro-batches):
MLA attention (128 heads, q/k head dim 192, v 128, causal, SDPA's own backend pick) and the
routed experts' GEMMs over 32768 token-expert rows (8 experts of 4096 rows here, 4 of 8192 there),
with the shared expert and a BF16 sigmoid gate. One GPU holds every expert, so nothing is
communicated: the dispatch is a row gather, the combine a weighted index_add.

FP8 (E4M3) linears as DeepSeek's recipe (REFERENCE.md): torch._scaled_mm with 1x128 tile scales on
activations and gradients (cuBLASLt's block scaling, as kernels/fp8_gemm measures) where this
PyTorch has it, else per-row scales (the run records which). Weights in 128x128 blocks with
CS_WEIGHT_SCALING=block128 (DeepSeek's recipe), else in 1x128 tiles like the rest; the weight
gradients multiply two activations and keep 1x128 on both operands either way. Weights are quantized once, both
orientations, before the steps (the model prices no weight cast); each forward casts its input,
each backward its output gradient (both orientations) and the saved FP8 input transposed, as the
model's dy_cast and x_transpose_cast ops do. Weight gradients come out in BF16, one tensor per
micro-batch (no accumulation: the model prices none). Norms, gate, attention, embedding and head in
BF16. RMSNorm and the MLA up-projections are not recomputed (the scenario says so).

A step is MICRO micro-batches, each forward then backward, like the scenario's 1F1B at pp 1.
Usage: [CS_WEIGHT_SCALING=block128] python3 deepseek_layers.py OUT_TRACE.json OUT_NVML.json
"""
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

from common import provenance
from dense_step import trim
from pipeline_model import rope, swiglu  # the fused RoPE (on (..., 64) here) and SwiGLU
from nvml_sampler import Sampler, cuda_uuid, write_json_atomic

LAYERS, HIDDEN, HEADS, VOCAB, SEQ, MICRO = 2, 7168, 128, 4096, 4096, 4
Q_LORA, KV_LORA, NOPE, ROPE_D, V_D = 1536, 512, 128, 64, 128
QK_D = NOPE + ROPE_D
EXPERTS, TOP_K, EXPERT_H = 8, 8, 2048
FP8, FP8_MAX, G = torch.float8_e4m3fn, 448.0, 128
BF16 = torch.bfloat16
for _knob in ("recompile_limit", "cache_size_limit"):  # one compile per shape: more than the default 8
    if hasattr(torch._dynamo.config, _knob):
        setattr(torch._dynamo.config, _knob, 64)
MODE = {"scales": None, "layout": None, "weights": None, "block_layout": None}  # "blockwise_1x128" or "rowwise", set by probe()


def _quant_groups(x):
    """(M, K) -> FP8 (M, K) with one FP32 scale per 1x128 group, (M, K/128)."""
    m, k = x.shape
    g = x.float().view(m, k // G, G)
    s = g.abs().amax(-1, keepdim=True).clamp(min=1e-6) / FP8_MAX
    return (g / s).to(FP8).view(m, k), s.view(m, k // G)


def _quant_blocks(w):
    """(N, K) -> FP8 (N, K) with one FP32 scale per 128x128 block, (N/128, K/128): DeepSeek's weights."""
    n, k = w.shape
    g = w.float().view(n // G, G, k // G, G)
    s = g.abs().amax(dim=(1, 3), keepdim=True).clamp(min=1e-6) / FP8_MAX
    return (g / s).to(FP8).view(n, k), s.view(n // G, k // G)


def _quant_rows(x):
    """(M, K) -> FP8 (M, K) with one FP32 scale per row, (M, 1)."""
    s = x.float().abs().amax(-1, keepdim=True).clamp(min=1e-6) / FP8_MAX
    return (x.float() / s).to(FP8), s


# One compiled kernel per shape (a dozen or so): symbolic shapes cannot view k as (k // 128, 128).
_qg = torch.compile(_quant_groups, dynamic=False)
_qr = torch.compile(_quant_rows, dynamic=False)


def quant(x):
    return _qg(x) if MODE["scales"] == "blockwise_1x128" else _qr(x)


def _both_groups(x):
    return _quant_groups(x), _quant_groups(x.t().contiguous())


def _both_rows(x):
    return _quant_rows(x), _quant_rows(x.t().contiguous())


_bg = torch.compile(_both_groups, dynamic=False)
_br = torch.compile(_both_rows, dynamic=False)


def quant_both(x):
    return _bg(x) if MODE["scales"] == "blockwise_1x128" else _br(x)


def _dequant(q, s):
    if s.shape[1] == 1:
        return q.float() * s
    m, k = q.shape
    return (q.float().view(m, k // G, G) * s.view(m, k // G, 1)).view(m, k)


@torch.compile(dynamic=False)
def _requant_t_groups(q, s):
    """The saved FP8 input transposed for the weight gradient: dequantize, transpose, 1x128 again."""
    return _quant_groups(_dequant(q, s).t().contiguous())


@torch.compile(dynamic=False)
def _requant_t_rows(q, s):
    return _quant_rows(_dequant(q, s).t().contiguous())


def quant_t(q, s):
    return _requant_t_groups(q, s) if MODE["scales"] == "blockwise_1x128" else _requant_t_rows(q, s)


# Where the scales go: cuBLASLt's block scaling wants them in a given memory order, which PyTorch
# versions check differently, so probe() tries these, a's (M, K/128) and b's (N, K/128) scales.
SCALE_LAYOUTS = [(a, b) for a in ("row", "outer") for b in ("t", "t_contig", "as_is", "outer")]


def _lay_a(s, how):
    return s if how == "row" else s.t().contiguous().t()


def _lay_b(s, how):
    return {"t": lambda: s.t(), "t_contig": lambda: s.t().contiguous(), "as_is": lambda: s,
            "outer": lambda: s.contiguous().t().contiguous().t()}[how]()


def mm(aq, sa, bq_nk, sb):
    """a (M, K) row-major times b given as (N, K) row-major (so b^T is K-major, as cuBLASLt wants):
    (M, N) BF16. sa: a's scales, (M, K/128) or (M, 1); sb: b's, (N, K/128), (N/128, K/128) for a
    weight in 128x128 blocks, or (N, 1)."""
    la, lb = MODE["layout"]
    if sb.shape[0] != bq_nk.shape[0]:  # 128x128 blocks
        lb = MODE["block_layout"]
    return torch._scaled_mm(aq, bq_nk.t(), scale_a=_lay_a(sa, la), scale_b=_lay_b(sb, lb), out_dtype=BF16)


def probe():
    """Picks the scaling this PyTorch runs on this GPU, checked against a float reference."""
    torch.manual_seed(0)
    a = torch.randn(256, 512, device="cuda", dtype=BF16)
    b = torch.randn(384, 512, device="cuda", dtype=BF16)
    ref = a.float() @ b.float().t()
    tried = []
    for mode, qf, layouts in (("blockwise_1x128", _quant_groups, SCALE_LAYOUTS), ("rowwise", _quant_rows, [("row", "t")])):
        MODE["scales"] = mode
        (aq, sa), (bq, sb) = qf(a), qf(b)
        for lay in layouts:
            MODE["layout"] = lay
            try:
                out = mm(aq, sa, bq, sb).float()
                err = float((out - ref).norm() / ref.norm())
                tried.append({"scales": mode, "layout": lay, "rel_l2_error": err})
                if err < 0.05:
                    return tried + probe_weight_blocks(a, b, ref, aq, sa)
            except RuntimeError as e:  # this PyTorch or GPU lacks the scaling or the layout
                tried.append({"scales": mode, "layout": lay, "error": str(e).splitlines()[0][:200]})
    raise RuntimeError(f"no FP8 scaling works here: {tried}")


def probe_weight_blocks(a, b, ref, aq, sa):
    """With CS_WEIGHT_SCALING=block128 (DeepSeek's recipe), weights in 128x128 blocks where this
    PyTorch takes them with 1x128 activations; else (and by default) 1x128 weights too."""
    MODE["weights"] = "1x128" if MODE["scales"] == "blockwise_1x128" else "rows"
    if MODE["scales"] != "blockwise_1x128" or os.environ.get("CS_WEIGHT_SCALING") != "block128":
        return []
    bq, sb = _quant_blocks(b)
    tried = []
    for lay in ("t", "t_contig", "as_is", "outer"):
        MODE["block_layout"] = lay
        try:
            err = float((mm(aq, sa, bq, sb).float() - ref).norm() / ref.norm())
            tried.append({"weights": "128x128", "layout": lay, "rel_l2_error": err})
            if err < 0.05:
                MODE["weights"] = "128x128"
                return tried
        except RuntimeError as e:
            tried.append({"weights": "128x128", "layout": lay, "error": str(e).splitlines()[0][:200]})
    raise RuntimeError(f"CS_WEIGHT_SCALING=block128, but no 128x128 layout works: {tried}")


class Fp8Linear(torch.autograd.Function):
    """y = x W^T in FP8. `w` receives the weight gradient (BF16); `lin` holds W quantized both ways."""

    @staticmethod
    def forward(ctx, x, w, lin):
        xq, xs = quant(x)
        ctx.save_for_backward(xq, xs)
        ctx.lin = lin
        return mm(xq, xs, lin["wq"], lin["ws"])

    @staticmethod
    def backward(ctx, dy):
        xq, xs = ctx.saved_tensors
        lin = ctx.lin
        dy = dy.contiguous()
        (dyq, dys), (dytq, dyts) = quant_both(dy)            # dy_cast: the dgrad and wgrad operands
        dx = mm(dyq, dys, lin["wtq"], lin["wts"])           # dgrad: (M, K)
        xtq, xts = quant_t(xq, xs)                          # x_transpose_cast
        dw = mm(dytq, dyts, xtq, xts)                       # wgrad: (N, K)
        return dx, dw, None


def fp8_linear(x, lin):
    shape = x.shape
    y = Fp8Linear.apply(x.reshape(-1, shape[-1]), lin["w"], lin)
    if y.shape[-1] != lin["n"]:
        y = y[:, :lin["n"]]
    return y.reshape(*shape[:-1], lin["n"])


def make_linear(n, k, gen):
    # Block scaling needs every GEMM's k a multiple of 128, and a weight's n is its dgrad's k:
    # kv_down's 576 outputs (512 + 64) get 64 zero rows, a 4096 x 640 x 7168 GEMM for 4096 x 576.
    n_pad = -(-n // G) * G
    w = (torch.randn(n, k, device="cuda", generator=gen) * (1.0 / k) ** 0.5).to(BF16)
    w = torch.cat([w, w.new_zeros(n_pad - n, k)]) if n_pad != n else w
    qw = _quant_blocks if MODE["weights"] == "128x128" else quant
    wq, ws = qw(w)
    wtq, wts = qw(w.t().contiguous())
    # The gradient's receiver: autograd needs a leaf of W's shape; its values are never read.
    return {"n": n, "w": torch.empty(n_pad, k, device="cuda", dtype=BF16, requires_grad=True),
            "wq": wq, "ws": ws, "wtq": wtq, "wts": wts}


class Model:
    def __init__(self):
        gen = torch.Generator(device="cuda").manual_seed(0)
        ones = lambda n: torch.ones(n, device="cuda", dtype=BF16, requires_grad=True)  # noqa: E731
        self.embed = (torch.randn(VOCAB, HIDDEN, device="cuda", generator=gen)).to(BF16).requires_grad_(True)
        self.layers = []
        for _ in range(LAYERS):
            self.layers.append({
                "attn_norm": ones(HIDDEN), "q_norm": ones(Q_LORA), "kv_norm": ones(KV_LORA), "ffn_norm": ones(HIDDEN),
                "q_down": make_linear(Q_LORA, HIDDEN, gen), "q_up": make_linear(HEADS * QK_D, Q_LORA, gen),
                "kv_down": make_linear(KV_LORA + ROPE_D, HIDDEN, gen),
                "kv_up": make_linear(HEADS * (NOPE + V_D), KV_LORA, gen),
                "o_proj": make_linear(HIDDEN, HEADS * V_D, gen),
                "gate": (torch.randn(EXPERTS, HIDDEN, device="cuda", generator=gen) * 0.01).to(BF16).requires_grad_(True),
                "shared_up": make_linear(2 * EXPERT_H, HIDDEN, gen), "shared_down": make_linear(HIDDEN, EXPERT_H, gen),
                "up": [make_linear(2 * EXPERT_H, HIDDEN, gen) for _ in range(EXPERTS)],
                "down": [make_linear(HIDDEN, EXPERT_H, gen) for _ in range(EXPERTS)],
            })
        self.final_norm = ones(HIDDEN)
        self.head = (torch.randn(VOCAB, HIDDEN, device="cuda", generator=gen) * HIDDEN ** -0.5).to(BF16).requires_grad_(True)
        inv = 1.0 / (10000 ** (torch.arange(0, ROPE_D, 2, device="cuda").float() / ROPE_D))
        ang = torch.outer(torch.arange(SEQ, device="cuda").float(), inv)
        self.cos = torch.cat([ang.cos(), ang.cos()], -1).to(BF16).view(SEQ, 1, ROPE_D)
        self.sin = torch.cat([ang.sin(), ang.sin()], -1).to(BF16).view(SEQ, 1, ROPE_D)

    def params(self):
        ps = [self.embed, self.final_norm, self.head]
        for lay in self.layers:
            for v in lay.values():
                items = v if isinstance(v, list) else [v]
                ps += [i["w"] if isinstance(i, dict) else i for i in items]
        return ps

    def attention(self, x, lay):
        h = F.rms_norm(x, (HIDDEN,), lay["attn_norm"], 1e-6)
        cq = F.rms_norm(fp8_linear(h, lay["q_down"]), (Q_LORA,), lay["q_norm"], 1e-6)
        q = fp8_linear(cq, lay["q_up"]).view(SEQ, HEADS, QK_D)
        ckv = fp8_linear(h, lay["kv_down"])
        c, k_pe = ckv.split([KV_LORA, ROPE_D], -1)
        kv = fp8_linear(F.rms_norm(c, (KV_LORA,), lay["kv_norm"], 1e-6), lay["kv_up"]).view(SEQ, HEADS, NOPE + V_D)
        k_nope, v = kv.split([NOPE, V_D], -1)
        q_nope, q_pe = q.split([NOPE, ROPE_D], -1)
        q = torch.cat([q_nope, rope(q_pe, self.cos, self.sin)], -1)
        k_pe = rope(k_pe.unsqueeze(1), self.cos, self.sin).expand(SEQ, HEADS, ROPE_D)
        k = torch.cat([k_nope, k_pe], -1)
        # (1, heads, s, d) for SDPA; its own backend pick, as attention.json was fitted.
        o = F.scaled_dot_product_attention(q.transpose(0, 1)[None], k.transpose(0, 1)[None],
                                           v.transpose(0, 1)[None], is_causal=True)
        o = o[0].transpose(0, 1).reshape(SEQ, HEADS * V_D)
        return x + fp8_linear(o, lay["o_proj"])

    def moe(self, x, lay):
        h = F.rms_norm(x, (HIDDEN,), lay["ffn_norm"], 1e-6)
        scores = torch.sigmoid(F.linear(h, lay["gate"]).float())
        w, idx = scores.topk(TOP_K, -1)
        w = (w / w.sum(-1, keepdim=True)).to(BF16)
        # Dispatch: token-expert rows sorted by expert (each expert's rows contiguous).
        order = idx.view(-1).argsort(stable=True)
        token_of_row = order // TOP_K
        # Every token picks every expert here (top_k == experts), so each gets SEQ rows: known
        # without reading the counts back (DeepEP hands them to the host; that wait is not modelled).
        counts = [SEQ * TOP_K // EXPERTS] * EXPERTS
        rows = h.index_select(0, token_of_row)
        outs, start = [], 0
        for e, n in enumerate(counts):
            r = rows[start:start + n]
            outs.append(fp8_linear(swiglu(fp8_linear(r, lay["up"][e])), lay["down"][e]))
            start += n
        y = torch.cat(outs, 0) * w.view(-1)[order].unsqueeze(-1)
        routed = torch.zeros_like(h).index_add(0, token_of_row, y)
        shared = fp8_linear(swiglu(fp8_linear(h, lay["shared_up"])), lay["shared_down"])
        return x + routed + shared

    def loss(self, tokens, labels):
        x = F.embedding(tokens, self.embed)
        for lay in self.layers:
            x = self.moe(self.attention(x, lay), lay)
        x = F.rms_norm(x, (HIDDEN,), self.final_norm, 1e-6)
        return F.cross_entropy(F.linear(x, self.head).float(), labels)


def step(model, batches):
    losses = []
    for tokens, labels in batches:
        for p in model.params():
            p.grad = None  # each micro-batch's gradients in fresh tensors: no accumulation kernels
        loss = model.loss(tokens, labels)
        loss.backward()
        losses.append(loss)
    return losses


def main():
    trace_path, nvml_path = sys.argv[1], sys.argv[2]
    tried = probe()
    print(f"FP8 scaling: {MODE['scales']} ({tried})", flush=True)
    model = Model()
    g = torch.Generator(device="cuda").manual_seed(1)
    batches = [(torch.randint(0, VOCAB, (SEQ,), device="cuda", generator=g),
                torch.randint(0, VOCAB, (SEQ,), device="cuda", generator=g)) for _ in range(MICRO)]
    warm = [float(l) for l in step(model, batches)]
    for _ in range(2):
        step(model, batches)
    if not all(l == l and abs(l) < 1e3 for l in warm):
        raise RuntimeError(f"warm-up losses not finite: {warm}")
    torch.cuda.synchronize()
    sampler = Sampler([cuda_uuid(0)], 0.002)
    # Steps back to back for about 3 s, so that the power limit has acted, each between CUDA events.
    events, t_end = [], time.perf_counter() + 3.0
    t0 = time.perf_counter()
    while time.perf_counter() < t_end:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step(model, batches)
        b.record()
        events.append((a, b))
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    # The profiled step follows at once (the clock still where the steps put it).
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("train_step"):
            step(model, batches)
        torch.cuda.synchronize()
    t2 = time.perf_counter()
    sampler.close()
    times = [a.elapsed_time(b) for a, b in events]
    samples = sampler.rows[0]
    busy = [r for r in samples if t0 + 0.5 <= r[0] <= t1]  # past the first half second
    clocks = [r[1] for r in busy if r[1]]
    power = [r[2] for r in busy if r[2] is not None]
    write_json_atomic(nvml_path, {
        "schema_version": 1, "program": "kernels/torch/deepseek_layers.py",
        "what": "NVML every 2 ms while the timed steps ran back to back (t0..t1) and the profiled one (t1..t2)",
        "t0_s": t0, "t1_s": t1, "t2_s": t2, "columns": list(Sampler.COLUMNS), "samples": samples,
        "provenance": provenance("kernels/torch/deepseek_layers.py")})
    tmp = "/tmp/cs_deepseek_layers_full_trace.json"
    prof.export_chrome_trace(tmp)
    with open(tmp) as f:
        small = trim(json.load(f))
    kernels = [e for e in small["traceEvents"] if e.get("cat") == "kernel"]
    small["clustersim"] = {
        "what": f"one step of {MICRO} micro-batches (forward + backward each, no optimizer) of "
                "scenarios/deepseek-v3-layers-h100.yaml's model, right after about 3 s of the same steps",
        "script": "kernels/torch/deepseek_layers.py",
        "trimmed": "only GPU kernel, memcpy, memset and user-annotation events (the step's range "
                   "'train_step') and metadata are kept; CPU-side op events are dropped",
        "fp8_scaling": MODE["scales"], "fp8_weight_scaling": MODE["weights"], "fp8_probe": tried,
        "model": {"layers": LAYERS, "hidden": HIDDEN, "heads": HEADS, "q_lora": Q_LORA, "kv_lora": KV_LORA,
                  "qk_nope": NOPE, "qk_rope": ROPE_D, "v_head": V_D, "experts": EXPERTS, "top_k": TOP_K,
                  "expert_hidden": EXPERT_H, "vocab": VOCAB, "seq": SEQ, "micro_batches": MICRO},
        "losses_first_step": warm,
        "step_ms_events": {"median": statistics.median(times), "min": min(times), "max": max(times),
                           "runs": len(times)},
        "sm_clock_MHz_while_stepping": {"median": statistics.median(clocks), "min": min(clocks),
                                        "max": max(clocks), "samples": len(clocks)} if clocks else None,
        "power_W_while_stepping": {"median": statistics.median(power), "max": max(power)} if power else None,
        "kernels": len(kernels),
        "provenance": provenance("kernels/torch/deepseek_layers.py"),
    }
    write_json_atomic(trace_path, small)
    print(f"deepseek layers: {len(kernels)} kernels, step median {statistics.median(times):.3f} ms over "
          f"{len(times)} steps, clock {small['clustersim']['sm_clock_MHz_while_stepping']}, "
          f"power {small['clustersim']['power_W_while_stepping']}, losses {warm}", flush=True)


if __name__ == "__main__":
    main()
