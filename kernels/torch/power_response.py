"""How the GPU's SM clock follows its load: the data the power-capped clock model is fitted to.

Why it exists: the profile ran every kernel at one sustained clock, but the clock depends on what
runs and on what ran before. BF16 GEMMs back to back settle at 1335 MHz on an H100 while short
sweep cases of the same shape sample 1545-1560, and the pipeline bench sits at 1560-1665 MHz
(calibrate/data/h100/README.md). A clock model needs the power each kind of load draws at a known
clock, how far the clock falls to hold the power limit, and how fast it gets there.

Phases, one after another on GPU 0, each preceded by idle time so that every step starts cold:
  - idle: the floor;
  - step: BF16 GEMMs back to back on the whole GPU (the largest shape of bf16_gemm.py's grid);
  - sms: the same on green contexts of fewer SMs (power per SM below the cap, and the cap's
    clock for each load);
  - duty: bursts of GEMMs separated by idle gaps of the same length (how long the power limit
    averages over);
  - fp8: FP8 GEMMs (torch._scaled_mm, per-tensor scales) back to back on the whole GPU;
  - copy: a 2 GiB device-to-device copy back to back (HBM-bound, little MMA).
Throughout, a thread samples NVML every 2 ms (SM clock, instantaneous and averaged power where the
driver has those fields, temperature, clock-event reasons), stamped with time.perf_counter. Every
GEMM and copy records a CUDA event at its end; the events are put on the same time axis through an
event recorded at a known host time with the GPU idle, so each kernel's duration can be set beside
the clock it ran at.

Usage: python3 power_response.py OUT.json [--quick]
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

from bf16_gemm import green_context
from common import provenance
from nvml_sampler import Sampler, cuda_uuid, write_json_atomic

SHAPE = (8192, 14336, 14336)  # m, n, k: bf16_gemm.py's largest product


class Timeline:
    """CUDA events on the host's perf_counter axis: an anchor event recorded with the GPU idle."""

    def __init__(self):
        torch.cuda.synchronize()
        self.anchor = torch.cuda.Event(enable_timing=True)
        self.t0 = time.perf_counter()
        self.anchor.record()
        torch.cuda.synchronize()

    def host_s(self, ev):
        return self.t0 + self.anchor.elapsed_time(ev) / 1e3


def run_back_to_back(fn, seconds, tl, batch=8):
    """fn() repeatedly for `seconds` of host time; the end of each call on the host time axis."""
    evs = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(batch):
            fn()
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            evs.append(e)
        evs[-1].synchronize()
    torch.cuda.synchronize()
    return start, [tl.host_s(e) for e in evs]


def idle(seconds):
    torch.cuda.synchronize()
    t = time.perf_counter()
    time.sleep(seconds)
    return t, time.perf_counter()


def phase_record(name, kind, sms, flop_or_bytes, start, ends, **extra):
    return {"name": name, "kind": kind, "sms": sms, "start_s": start, "end_s": ends[-1] if ends else start,
            "work_per_call": flop_or_bytes, "calls": len(ends), "call_ends_s": [round(x, 6) for x in ends], **extra}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true", help="short phases (a smoke run)")
    args = ap.parse_args()
    q = 0.2 if args.quick else 1.0
    torch.manual_seed(0)
    sampler = Sampler([cuda_uuid(0)])
    m, n, k = SHAPE
    x = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    w = (torch.randn(n, k, device="cuda") / k**0.5).to(torch.bfloat16)
    ref = x[:256].float() @ w.float().t()
    err = float((F.linear(x[:256], w).float() - ref).norm() / ref.norm())
    if not err < 1e-2:
        print(f"power_response: BF16 check failed, relative L2 error {err:.3e}", file=sys.stderr)
        sys.exit(3)
    gemm = lambda: F.linear(x, w)  # noqa: E731
    flop = 2.0 * m * n * k
    sms_total = torch.cuda.get_device_properties(0).multi_processor_count
    tl = Timeline()
    phases = []

    def add(rec):
        phases.append(rec)
        c = rec["calls"]
        dur = rec["end_s"] - rec["start_s"]
        print(f"{rec['name']}: {c} calls in {dur:.2f} s", flush=True)

    s0, s1 = idle(6 * q)
    phases.append({"name": "idle", "kind": "idle", "sms": 0, "start_s": s0, "end_s": s1, "calls": 0})
    gemm()
    torch.cuda.synchronize()
    start, ends = run_back_to_back(gemm, 25 * q, tl)
    add(phase_record("step_bf16_132", "bf16_gemm", sms_total, flop, start, ends, shape=SHAPE))
    for sms in (96, 64, 32):
        idle(8 * q)
        ctx = green_context(sms)
        if ctx is None:
            continue
        ctx.set_context()
        try:
            start, ends = run_back_to_back(gemm, 8 * q, tl, batch=4)
        finally:
            ctx.pop_context()
        add(phase_record(f"step_bf16_{sms}", "bf16_gemm", sms, flop, start, ends, shape=SHAPE, method="green"))
    for on_ms in (10, 50, 200):
        idle(8 * q)
        ends_all, bursts = [], []
        start = time.perf_counter()
        while time.perf_counter() - start < 8 * q:
            b0 = time.perf_counter()
            _, ends = run_back_to_back(gemm, on_ms / 1e3, tl, batch=1)
            ends_all += ends
            bursts.append([b0, ends[-1]])
            time.sleep(max(0.0, on_ms / 1e3 - (time.perf_counter() - ends[-1])))
        add(phase_record(f"duty_bf16_{on_ms}ms", "bf16_gemm", sms_total, flop, start, ends_all, shape=SHAPE,
                         on_off_ms=[on_ms, on_ms], bursts_s=[[round(a, 6), round(b, 6)] for a, b in bursts]))
    idle(8 * q)
    try:
        a8 = x.to(torch.float8_e4m3fn)
        b8 = w.to(torch.float8_e4m3fn)
        one = torch.ones((), device="cuda")
        fp8 = lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
        fp8()
        torch.cuda.synchronize()
        start, ends = run_back_to_back(fp8, 12 * q, tl)
        add(phase_record("step_fp8_132", "fp8_gemm", sms_total, flop, start, ends, shape=SHAPE,
                         scaling="per-tensor (torch._scaled_mm)"))
        del a8, b8
    except Exception as e:  # noqa: BLE001 - no FP8 GEMM in this PyTorch: the phase is left out
        print(f"power_response: no FP8 phase ({e})", file=sys.stderr)
    idle(8 * q)
    src = torch.empty(2 * 2**30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    src.fill_(1)
    start, ends = run_back_to_back(lambda: dst.copy_(src), 10 * q, tl)
    add(phase_record("step_copy_132", "copy", sms_total, 2.0 * src.numel(), start, ends,
                     note="work_per_call is bytes moved (read + write)"))
    idle(6 * q)
    sampler.close()
    out = {"schema_version": 1, "provenance": provenance("kernels/torch/power_response.py"),
           "bench": {"sampling": "NVML every 2 ms on a thread (ctypes): clock, field values 186/185 "
                                 "(instant/average power), nvmlDeviceGetPowerUsage, temperature, "
                                 "clock-event reasons; perf_counter seconds",
                     "check_rel_l2_error": err, "quick": args.quick},
           "phases": phases, "sample_columns": list(Sampler.COLUMNS), "samples": sampler.rows[0]}
    write_json_atomic(args.out, out)


if __name__ == "__main__":
    main()
