"""How much of a non-GEMM kernel's time follows the SM clock that the power limit sets.

Why it exists: under a power limit the SM clock falls while GEMMs run. The model stretched only
the GEMMs. Attention and the memory-bound kernels of a training step were priced at the clock
their benches ran at. In the pipeline bench's steps (H100 at 1470-1770 MHz) the chunked SwiGLU
backward took 292 us; alone it took 234.

Each kernel below has pipeline_step.py's shapes, plus DeepSeek-V3's MLA attention. Each is timed
in three ways:
  - after_gemms: the call comes right after LEAD_MS of BF16 GEMMs back to back. Those GEMMs pin
    the clock at the power limit's level.
  - after_copies: the call comes right after LEAD_MS of HBM copies. A copy draws about 400 W
    (power_response.py on an H100: 401 W at 1980 MHz), so the clock stays at its maximum or close
    to it.
  - bench: back to back, as attention_bench.py and memory_bound_forms.py time them (5 warm-up
    calls, then 25 or 30), the CPU's launch inside each call's time, and the clock probed at the
    end. A record of how such a run goes; calibrate fit does not read it.
The first two alternate over ROUNDS rounds, so drift falls on both alike. After each lead-in,
a read of FLUSH_MiB replaces its dirty lines in L2 with clean ones, so every timed call starts
with the same cold L2.

The clock comes from the SMs themselves: torch.cuda._sleep spins PROBE_CYCLES cycles of clock64,
and CUDA events time it, so clock = cycles / time. NVML's clock lags the load by up to its
100 ms refresh, which a first run showed. One probe runs right before the timed call and one
right after it. A BF16 GEMM is timed the same way, to check the method against the power
section's clock_stretch, fitted from other data.

Usage: python3 kernel_clock.py OUT.json
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from common import provenance, time_cuda
from memory_bound import keep_saved_tensors
from nvml_sampler import write_json_atomic
import pipeline_model as pm

LEAD_MS = 250   # several of the power controller's windows (56-63 ms fitted): the clock settles
ROUNDS = 8
PROBE_CYCLES = 300_000  # about 150-220 us at 1980-1350 MHz
FLUSH_MiB = 256
E = 2           # bytes per BF16 element


def forms(dev):
    """(name, class, fn, flops, bytes): the kernels of pipeline_step.py's model at its shapes."""
    g = torch.Generator(dev).manual_seed(0)
    rnd = lambda *s, grad=False: torch.randn(*s, device=dev, dtype=torch.bfloat16, generator=g).requires_grad_(grad)  # noqa: E731
    out = []
    b, s, h, kvh, d, hid, ffn = pm.BATCH, pm.SEQ, pm.HEADS, pm.KV_HEADS, pm.HEAD_DIM, pm.HIDDEN, pm.FFN
    for name, heads, kv, dqk, dv in (("gqa_32h", h, kvh, d, d), ("mla_v3", 128, 128, 192, 128)):
        q, k, v = rnd(b, heads, s, dqk, grad=True), rnd(b, kv, s, dqk, grad=True), rnd(b, kv, s, dv, grad=True)
        attn = lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # noqa: E731
        o, do = attn(), rnd(b, heads, s, dv)
        fwd_flops = b * heads * s * s * (dqk + dv)
        out.append((f"attn_fwd_{name}", "attention_fwd", attn, fwd_flops, 0))
        out.append((f"attn_bwd_{name}", "attention_bwd",
                    lambda o=o, do=do, q=q, k=k, v=v: torch.autograd.grad(o, (q, k, v), do, retain_graph=True), 2.5 * fwd_flops, 0))
    gu, n = rnd(b, s, 2 * ffn, grad=True), b * s * ffn
    y, dy = pm.swiglu(gu), rnd(b, s, ffn)
    out.append(("activation_fwd", "memory:activation_fwd", lambda: pm.swiglu(gu), 0, 3 * n * E))
    out.append(("activation_bwd", "memory:activation_bwd", lambda: torch.autograd.grad(y, gu, dy, retain_graph=True), 0, 5 * n * E))
    x, w, n = rnd(b, s, hid, grad=True), torch.ones(hid, device=dev, dtype=torch.bfloat16, requires_grad=True), b * s * hid
    yn, dyn = F.rms_norm(x, (hid,), w, 1e-5), rnd(b, s, hid)
    out.append(("norm_fwd", "memory:norm_fwd", lambda: F.rms_norm(x, (hid,), w, 1e-5), 0, 2 * n * E))
    out.append(("norm_bwd", "memory:norm_bwd", lambda: torch.autograd.grad(yn, (x, w), dyn, retain_graph=True), 0, 3 * n * E))
    a2 = rnd(b, s, hid)
    out.append(("residual_add", "memory:residual_add", lambda: x.detach() + a2, 0, 3 * n * E))
    t = rnd(b, h, s, d)
    out.append(("layout_copy", "memory:layout_copy", lambda: t.transpose(1, 2).reshape(b, s, h * d), 0, 2 * t.numel() * E))
    stage = pm.Stage(torch.device(dev), 0, 1, False, False)
    qr = rnd(b, h, s, d, grad=True)
    yr, dyr = pm.rope(qr, stage.cos, stage.sin), rnd(b, h, s, d)
    out.append(("rope_fwd", "memory:rope_fwd", lambda: pm.rope(qr, stage.cos, stage.sin), 0, 2 * qr.numel() * E))
    out.append(("rope_bwd", "memory:rope_bwd", lambda: torch.autograd.grad(yr, qr, dyr, retain_graph=True), 0, 2 * qr.numel() * E))
    src = rnd(1 << 27)
    dst = torch.empty_like(src)
    out.append(("copy_256MiB", "memory:any", lambda: dst.copy_(src), 0, 2 * src.numel() * E))
    wg = rnd(4096, 4096)
    xg = rnd(8192, 4096)
    out.append(("gemm_bf16_8192x4096x4096", "gemm_bf16", lambda: F.linear(xg, wg), 2.0 * 8192 * 4096 * 4096, 0))
    return out


def probe():
    """Queues a clock probe; returns its events: PROBE_CYCLES / their time is the SM clock."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(PROBE_CYCLES)
    b.record()
    return a, b


def probe_MHz(evs):
    return PROBE_CYCLES / (evs[0].elapsed_time(evs[1]) * 1e3)


def lead_count(fn, ms):
    """How many calls of fn take about `ms`, timed under a short load of its own."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(10):
        fn()
    b.record()
    b.synchronize()
    return max(1, round(ms / (a.elapsed_time(b) / 10)))


def timed_after(lead, count, flush, fn):
    """fn once right after `count` calls of `lead` and an L2 flush: its CUDA-event time (ms) and the
    SM clock (MHz) probed right before and right after it."""
    for _ in range(count):
        lead()
    flush.sum()
    before = probe()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    after = probe()
    after[1].synchronize()
    return a.elapsed_time(b), probe_MHz(before), probe_MHz(after)


def summary(runs):
    ts = [r[0] for r in runs]
    clocks = [(r[1] + r[2]) / 2 for r in runs]
    return {"median_ms": statistics.median(ts), "min_ms": min(ts), "max_ms": max(ts), "runs": len(ts),
            "ms": [round(t, 5) for t in ts], "clock_MHz_median": round(statistics.median(clocks), 1),
            "clock_MHz_before": [round(r[1], 1) for r in runs], "clock_MHz_after": [round(r[2], 1) for r in runs]}


def main():
    out_path = sys.argv[1]
    keep_saved_tensors()
    dev = "cuda"
    x = torch.randn(8192, 14336, device=dev).to(torch.bfloat16)
    w = (torch.randn(14336, 14336, device=dev) / 14336**0.5).to(torch.bfloat16)
    gemm_lead = lambda: F.linear(x, w)  # noqa: E731 - bf16_gemm.py's largest product
    src = torch.randn(1 << 29, device=dev, dtype=torch.bfloat16)  # 1 GiB
    dst = torch.empty_like(src)
    copy_lead = lambda: dst.copy_(src)  # noqa: E731
    flush = torch.randn(FLUSH_MiB << 19, device=dev, dtype=torch.bfloat16)
    n_gemm, n_copy = lead_count(gemm_lead, LEAD_MS), lead_count(copy_lead, LEAD_MS)
    print(f"lead-ins: {n_gemm} GEMMs, {n_copy} copies of about {LEAD_MS} ms", flush=True)
    recs = []
    for name, cls, fn, flops, bytes_ in forms(dev):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        res = {"after_gemms": [], "after_copies": []}
        for r in range(ROUNDS):
            order = ("after_gemms", "after_copies") if r % 2 == 0 else ("after_copies", "after_gemms")
            for cond in order:
                lead, count = (gemm_lead, n_gemm) if cond == "after_gemms" else (copy_lead, n_copy)
                res[cond].append(timed_after(lead, count, flush, fn))
        time.sleep(0.2)
        bench = time_cuda(fn, warmup=5, runs=25 if cls.startswith("attention") else 30)
        end = probe()
        end[1].synchronize()
        rec = {"name": name, "class": cls, "flops": flops, "bytes": bytes_}
        for cond, runs in res.items():
            rec[cond] = summary(runs)
        rec["bench"] = {**bench, "clock_MHz_at_end": round(probe_MHz(end), 1)}
        ag, ac = rec["after_gemms"], rec["after_copies"]
        print(f"{name:26s} after GEMMs {ag['median_ms']:8.3f} ms at {ag['clock_MHz_median']:6.0f} MHz; after copies "
              f"{ac['median_ms']:8.3f} ms at {ac['clock_MHz_median']:6.0f} MHz; bench {bench['median_ms']:8.3f} ms, "
              f"{rec['bench']['clock_MHz_at_end']:6.0f} MHz at its end", flush=True)
        recs.append(rec)
    doc = {"schema_version": 1, "provenance": provenance("kernels/torch/kernel_clock.py"),
           "bench": {"lead_ms": LEAD_MS, "rounds": ROUNDS, "probe_cycles": PROBE_CYCLES, "flush_MiB": FLUSH_MiB,
                     "gemm_lead": "F.linear 8192 x 14336 x 14336 BF16, back to back", "gemm_lead_calls": n_gemm,
                     "copy_lead": "1 GiB BF16 device copy, back to back", "copy_lead_calls": n_copy,
                     "timing": "CUDA events around one call right after its lead-in and an L2 flush (after_gemms, "
                               "after_copies, alternating); bench: common.time_cuda, 5 warm-up calls then 25 (attention) "
                               "or 30, the CPU's launch included",
                     "clock": "torch.cuda._sleep(probe_cycles) timed by CUDA events, right before and right after "
                              "each timed call; clock_MHz_median: the median of their means; bench: one probe at its end",
                     "shapes": f"pipeline_step.py's: batch {pm.BATCH}, sequence {pm.SEQ}, hidden {pm.HIDDEN}, heads "
                               f"{pm.HEADS}/{pm.KV_HEADS} x {pm.HEAD_DIM}, ffn {pm.FFN}; mla_v3: 128 heads, q/k 192, v 128"},
           "cases": recs}
    write_json_atomic(out_path, doc)


if __name__ == "__main__":
    main()
