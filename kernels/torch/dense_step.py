"""One training step (forward and backward, no optimizer) of the small dense Llama-like model of
scenarios/dense-step-h200.yaml on one GPU, in BF16, profiled with torch.profiler; writes the
Kineto (Chrome) trace trimmed to what `clustersim compare` reads.

The ops are those `clustersim model show` lists for the scenario's model (no TP, so no
communication; RMSNorm not recomputed): per layer attn_norm (RMSNorm), attn.qkv (one linear,
(32 + 2 x 8) x 128 outputs), attn.rope (rotary on q and k), attn.core (causal SDPA, GQA 32/8),
attn.o_proj, residual add, ffn_norm, ffn.up (one linear of 2 x 14336 outputs), ffn.act (SwiGLU),
ffn.down, residual add; then head.final_norm, head.proj (vocab 32000) and head.loss (cross
entropy); the embedding lookup first. Backward is autograd's (dX and dW per linear).

Usage: python3 dense_step.py OUT_TRACE.json [FULL_TRACE.json]
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

from common import provenance

LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB = 4, 4096, 32, 8, 128, 14336, 32000
SEQ, BATCH = 4096, 1
DT = torch.bfloat16


def param(*shape, scale=0.02):
    return (scale * torch.randn(*shape, device="cuda")).to(DT).requires_grad_(True)


class Model:
    def __init__(self):
        torch.manual_seed(0)
        self.embed = param(VOCAB, HIDDEN, scale=1.0)
        self.layers = []
        for _ in range(LAYERS):
            self.layers.append({
                "attn_norm": torch.ones(HIDDEN, device="cuda", dtype=DT, requires_grad=True),
                "qkv": param((HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN),
                "o": param(HIDDEN, HEADS * HEAD_DIM),
                "ffn_norm": torch.ones(HIDDEN, device="cuda", dtype=DT, requires_grad=True),
                "up": param(2 * FFN, HIDDEN),
                "down": param(HIDDEN, FFN),
            })
        self.final_norm = torch.ones(HIDDEN, device="cuda", dtype=DT, requires_grad=True)
        self.head = param(VOCAB, HIDDEN)
        inv = 1.0 / (10000 ** (torch.arange(0, HEAD_DIM, 2, device="cuda").float() / HEAD_DIM))
        ang = torch.outer(torch.arange(SEQ, device="cuda").float(), inv)
        self.cos = torch.cat([ang.cos(), ang.cos()], -1).to(DT)  # (s, d)
        self.sin = torch.cat([ang.sin(), ang.sin()], -1).to(DT)

    def params(self):
        ps = [self.embed, self.final_norm, self.head]
        for lay in self.layers:
            ps += list(lay.values())
        return ps

    def rope(self, x):  # x: (b, heads, s, d)
        x1, x2 = x.chunk(2, dim=-1)
        return x * self.cos + torch.cat([-x2, x1], -1) * self.sin

    def loss(self, tokens, labels):
        x = F.embedding(tokens, self.embed)  # (b, s, h)
        for lay in self.layers:
            h = F.rms_norm(x, (HIDDEN,), lay["attn_norm"], 1e-5)
            qkv = F.linear(h, lay["qkv"])
            q, k, v = qkv.split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], -1)
            q = q.view(BATCH, SEQ, HEADS, HEAD_DIM).transpose(1, 2)
            k = k.view(BATCH, SEQ, KV_HEADS, HEAD_DIM).transpose(1, 2)
            v = v.view(BATCH, SEQ, KV_HEADS, HEAD_DIM).transpose(1, 2)
            q, k = self.rope(q), self.rope(k)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            a = a.transpose(1, 2).reshape(BATCH, SEQ, HEADS * HEAD_DIM)
            x = x + F.linear(a, lay["o"])
            h = F.rms_norm(x, (HIDDEN,), lay["ffn_norm"], 1e-5)
            gate, up = F.linear(h, lay["up"]).chunk(2, -1)
            x = x + F.linear(F.silu(gate) * up, lay["down"])
        x = F.rms_norm(x, (HIDDEN,), self.final_norm, 1e-5)
        logits = F.linear(x, self.head)
        return F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))


def step(model, tokens, labels):
    for p in model.params():
        p.grad = None
    loss = model.loss(tokens, labels)
    loss.backward()
    return loss


def trim(trace):
    """The events compare reads: GPU kernels, memcpy/memset, the step's annotation (CPU and GPU),
    and the process/thread metadata; every other top-level key is kept."""
    keep_cats = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "user_annotation"}
    ev = []
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "M" or e.get("cat") in keep_cats:
            if e.get("cat") == "user_annotation" and e.get("name") != "train_step":
                continue
            ev.append(e)
    out = {k: v for k, v in trace.items() if k != "traceEvents"}
    out["traceEvents"] = ev
    return out


def main():
    out_path = sys.argv[1]
    full_path = sys.argv[2] if len(sys.argv) > 2 else None
    model = Model()
    g = torch.Generator(device="cuda").manual_seed(1)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda", generator=g)
    labels = torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda", generator=g)
    losses = [float(step(model, tokens, labels)) for _ in range(3)]  # warm-up
    if not all(abs(l - losses[0]) < 1e-3 * abs(losses[0]) + 1e-3 for l in losses):
        raise RuntimeError(f"warm-up losses differ: {losses}")
    times = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step(model, tokens, labels)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("train_step"):
            step(model, tokens, labels)
        torch.cuda.synchronize()
    tmp = "/tmp/cs_dense_step_full_trace.json"
    prof.export_chrome_trace(tmp)
    with open(tmp) as f:
        trace = json.load(f)
    if full_path:
        import shutil
        shutil.copy(tmp, full_path)
    small = trim(trace)
    kernels = [e for e in small["traceEvents"] if e.get("cat") == "kernel"]
    small["clustersim"] = {
        "what": "one training step (forward + backward, no optimizer) of scenarios/dense-step-h200.yaml's model",
        "script": "kernels/torch/dense_step.py",
        "trimmed": "only GPU kernel, memcpy, memset and user-annotation events (the step's range "
                   "'train_step') and metadata are kept; CPU-side op events are dropped",
        "model": {"layers": LAYERS, "hidden": HIDDEN, "heads": HEADS, "kv_heads": KV_HEADS,
                  "head_dim": HEAD_DIM, "ffn": FFN, "vocab": VOCAB, "seq": SEQ, "batch": BATCH},
        "loss": losses[0],
        "step_ms_events": {"median": statistics.median(times), "min": min(times), "runs": len(times)},
        "kernels": len(kernels),
        "provenance": provenance("kernels/torch/dense_step.py"),
    }
    with open(out_path, "w") as f:
        json.dump(small, f)
    print(f"dense step: {len(kernels)} kernels, step median {statistics.median(times):.3f} ms, loss {losses[0]:.4f}",
          flush=True)


if __name__ == "__main__":
    main()
