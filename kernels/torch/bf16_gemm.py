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

Clocks: NVML's SM clock is sampled every 2 ms on a thread (as cs_fp8_gemm --sample-clocks does)
and each case records the median over its timed runs, so the fit can take each case at its own
clock. Then a sustained phase: the grid's largest shapes back to back on the whole GPU for
--sustained-s seconds (default 20), whose median clock over its second half is the clock BF16
GEMMs hold under sustained load at the power limit.

Usage: python3 bf16_gemm.py OUT.json [--sustained-s 20]
"""
import argparse
import ctypes
import json
import statistics
import sys
import threading
import time

import torch
import torch.nn.functional as F

from common import provenance
from nvml_sampler import write_json_atomic

MS = (2048, 4096, 8192)
NS = (2048, 4096, 7168, 14336)
KS = (2048, 4096, 7168, 14336)
SM_LIMITS = (16, 32, 64, 96)  # besides the whole GPU, where green contexts exist
RUNS, WARMUP, FLUSH_MIB = 30, 3, 256


class ClockSampler:
    """NVML's SM clock of GPU 0 every 2 ms on a thread, stamped with time.perf_counter (NVML through
    ctypes: no Python binding needed). `median(t0, t1)` over a window; None without NVML."""

    def __init__(self):
        self.samples, self.ok = [], False
        try:
            self.nvml = ctypes.CDLL("libnvidia-ml.so.1")
            if self.nvml.nvmlInit_v2() != 0:
                return
            self.dev = ctypes.c_void_p()
            # NVML ignores CUDA_VISIBLE_DEVICES: the GPU whose UUID CUDA's device 0 has.
            uuid = "GPU-" + str(torch.cuda.get_device_properties(0).uuid)
            self.nvml.nvmlDeviceGetHandleByUUID.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
            self.ok = self.nvml.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(self.dev)) == 0
        except OSError:
            return
        if self.ok:
            self.stop = threading.Event()
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def _run(self):
        mhz = ctypes.c_uint()
        while not self.stop.is_set():
            if self.nvml.nvmlDeviceGetClockInfo(self.dev, 1, ctypes.byref(mhz)) == 0:  # NVML_CLOCK_SM
                self.samples.append((time.perf_counter(), mhz.value))
            time.sleep(0.002)

    def median(self, t0, t1):
        xs = [m for t, m in list(self.samples) if t0 <= t <= t1]
        return {"samples": len(xs), "sm_mhz_median": statistics.median(xs) if xs else None,
                "sm_mhz_min": min(xs) if xs else None, "sm_mhz_max": max(xs) if xs else None}

    def close(self):
        if self.ok:
            self.stop.set()
            self.thread.join()
            self.nvml.nvmlShutdown()


def green_context(sms):
    """A green context of `sms` SMs on GPU 0, or None where this PyTorch has none."""
    try:
        from torch.cuda.green_contexts import GreenContext  # PyTorch 2.9 and later
        ctx = GreenContext.create(sms, 0)
    except Exception as e:  # noqa: BLE001 - absent or refused: the whole GPU only
        print(f"bf16_gemm: no green context of {sms} SMs ({e}): that SM count is left out", file=sys.stderr)
        return None
    # Entered and left by set_context / pop_context (the object has no make_current in torch 2.11).
    return ctx if hasattr(ctx, "set_context") and hasattr(ctx, "pop_context") else None


def time_case(fn, flush, clocks, runs=RUNS, warmup=WARMUP):
    """fn's CUDA-event time over `runs` calls after `warmup`, each after an L2-flushing write, with the
    median NVML clock over the timed calls."""
    ts = []
    t0 = None
    for i in range(warmup + runs):
        if i == warmup:
            t0 = time.perf_counter()
        flush.add_(1.0)
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        if i >= warmup:
            ts.append(a.elapsed_time(b) * 1e3)
    t1 = time.perf_counter()
    ts.sort()
    q = statistics.quantiles(ts, n=10)
    out = {"median_us": statistics.median(ts), "p10_us": q[0], "p90_us": q[-1], "min_us": ts[0], "max_us": ts[-1],
           "runs": runs}
    if clocks.ok:
        out["clocks"] = clocks.median(t0, t1)
    return out


def sustained(seconds, clocks):
    """The grid's largest products back to back on the whole GPU; the clock over the second half."""
    x = torch.randn(8192, 14336, device="cuda").to(torch.bfloat16)
    w = torch.randn(14336, 14336, device="cuda").to(torch.bfloat16)
    torch.cuda.synchronize()
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            F.linear(x, w)
        torch.cuda.synchronize()
        n += 20
    end = time.perf_counter()
    out = {"seconds": end - start, "gemms": n, "shape": [8192, 14336, 14336],
           "tflops": 2.0 * 8192 * 14336 * 14336 * n / (end - start) / 1e12}
    if clocks.ok:
        out["clocks_second_half"] = clocks.median(start + (end - start) / 2, end)
    return out


def check(x, w):
    rows = x[:256]
    got = F.linear(rows, w).float()
    ref = rows.float() @ w.float().t()
    return float((got - ref).norm() / ref.norm())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sustained-s", type=float, default=20.0)
    args = ap.parse_args()
    out_path = args.out
    torch.manual_seed(0)
    clocks = ClockSampler()
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
                        t = time_case(lambda: F.linear(x, w), flush, clocks)
                    finally:
                        if ctx is not None:
                            ctx.pop_context()
                    case = {"name": f"grid.{m}x{n}x{k}", "m": m, "n": n, "k": k, "groups": 1, "dtype": "bf16",
                            "sm_limit": sms, "sm_obtained": sms, "method": "green" if ctx is not None else "whole_gpu",
                            **t, "tflops": 2.0 * m * n * k / (t["median_us"] * 1e-6) / 1e12,
                            "checked": True, "check": {"rows": 256, "rel_l2_error": err}}
                    cases.append(case)
                    mhz = t.get("clocks", {}).get("sm_mhz_median")
                    print(f"{case['name']} on {sms} SMs: {t['median_us']:.1f} us, {case['tflops']:.0f} TFLOP/s"
                          + (f", {mhz:.0f} MHz" if mhz else ""), flush=True)
                del x, w
    sus = sustained(args.sustained_s, clocks) if args.sustained_s > 0 else None
    if sus:
        print(f"sustained: {sus['gemms']} GEMMs in {sus['seconds']:.1f} s, {sus['tflops']:.0f} TFLOP/s, "
              f"clock {json.dumps(sus.get('clocks_second_half'))}", flush=True)
    clocks.close()
    out = {"schema_version": 1, "provenance": provenance("kernels/torch/bf16_gemm.py"),
           "bench": {"op": "F.linear (y = x W^T), BF16 in and out, FP32 accumulation", "runs": RUNS,
                     "warmup": WARMUP, "flush_mib": FLUSH_MIB,
                     "sm_limits": [s for s, _ in limits],
                     "clock_sampling": "NVML SM clock every 2 ms (ctypes)" if clocks.ok else None,
                     "sustained": sus},
           "cases": cases}
    write_json_atomic(out_path, out, indent=1)


if __name__ == "__main__":
    main()
