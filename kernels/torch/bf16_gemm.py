"""BF16 GEMMs as a BF16 training step runs them (F.linear: y = x W^T, FP32 accumulation, BF16 out,
cuBLAS's own kernel choice) over a grid of shapes on the whole GPU, and on fewer SMs where this
PyTorch has green contexts; the data `calibrate fit` takes the BF16 MMA rate from.

Why it exists: the profile's GEMM rates are fitted on FP8 GEMMs with DeepSeek's block scaling, whose
main loop also promotes and scales partial sums on the CUDA cores every 128 of k. Carrying them to
BF16 at the datasheet's 1:2 ratio leaves BF16 GEMMs 18-30% slow (README, pipeline schedules).

The grid is generic (m 2048-8192, n and k 2048-14336), not the shapes the pipeline bench runs, so
that those stay out of the fit. Each case: 3 warm-ups, then 30 runs, each after a 256 MiB write
that flushes L2, timed by CUDA events; checked first against an FP32 product of the same BF16
inputs on 256 rows (relative L2 error under 1e-2, else exit 3 with nothing written).

Usage: python3 bf16_gemm.py OUT.json
"""
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

from common import provenance

MS = (2048, 4096, 8192)
NS = (2048, 4096, 7168, 14336)
KS = (2048, 4096, 7168, 14336)
SM_LIMITS = (16, 32, 64, 96)  # besides the whole GPU, where green contexts exist
RUNS, WARMUP, FLUSH_MIB = 30, 3, 256


def green_context(sms):
    """A green context of `sms` SMs on GPU 0, or None where this PyTorch has none."""
    try:
        from torch.cuda.green_contexts import GreenContext  # PyTorch 2.9 and later
        ctx = GreenContext.create(sms, 0)
    except Exception:  # noqa: BLE001 - absent or refused: the whole GPU only
        return None
    # Entered and left by set_context / pop_context (the object has no make_current in torch 2.11).
    return ctx if hasattr(ctx, "set_context") and hasattr(ctx, "pop_context") else None


def time_case(x, w, flush):
    ts = []
    for i in range(WARMUP + RUNS):
        flush.add_(1.0)
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        F.linear(x, w)
        b.record()
        b.synchronize()
        if i >= WARMUP:
            ts.append(a.elapsed_time(b) * 1e3)
    ts.sort()
    q = statistics.quantiles(ts, n=10)
    return {"median_us": statistics.median(ts), "p10_us": q[0], "p90_us": q[-1], "min_us": ts[0], "max_us": ts[-1],
            "runs": RUNS}


def check(x, w):
    rows = x[:256]
    got = F.linear(rows, w).float()
    ref = rows.float() @ w.float().t()
    return float((got - ref).norm() / ref.norm())


def main():
    out_path = sys.argv[1]
    torch.manual_seed(0)
    flush = torch.zeros(FLUSH_MIB * 2**20 // 4, device="cuda")
    sms_total = torch.cuda.get_device_properties(0).multi_processor_count
    limits = [(sms_total, None)]
    for s in SM_LIMITS:
        ctx = green_context(s)
        if ctx is not None:
            limits.append((s, ctx))
    cases = []
    for m in MS:
        for n in NS:
            for k in KS:
                x = torch.randn(m, k, device="cuda").to(torch.bfloat16)
                w = (torch.randn(n, k, device="cuda") / k**0.5).to(torch.bfloat16)
                err = check(x, w)
                if not err < 1e-2:
                    print(f"bf16_gemm: {m}x{n}x{k}: relative L2 error {err:.3e} against FP32", file=sys.stderr)
                    sys.exit(3)
                for sms, ctx in limits:
                    if ctx is not None:
                        ctx.set_context()
                    try:
                        t = time_case(x, w, flush)
                    finally:
                        if ctx is not None:
                            ctx.pop_context()
                    case = {"name": f"grid.{m}x{n}x{k}", "m": m, "n": n, "k": k, "groups": 1, "dtype": "bf16",
                            "sm_limit": sms, "sm_obtained": sms, "method": "green" if ctx is not None else "whole_gpu",
                            **t, "tflops": 2.0 * m * n * k / (t["median_us"] * 1e-6) / 1e12,
                            "checked": True, "check": {"rows": 256, "rel_l2_error": err}}
                    cases.append(case)
                    print(f"{case['name']} on {sms} SMs: {t['median_us']:.1f} us, {case['tflops']:.0f} TFLOP/s",
                          flush=True)
                del x, w
    out = {"schema_version": 1, "provenance": provenance("kernels/torch/bf16_gemm.py"),
           "bench": {"op": "F.linear (y = x W^T), BF16 in and out, FP32 accumulation", "runs": RUNS,
                     "warmup": WARMUP, "flush_mib": FLUSH_MIB,
                     "sm_limits": [s for s, _ in limits]},
           "cases": cases}
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
