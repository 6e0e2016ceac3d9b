"""Achieved HBM bandwidth of memory-bound kernels in BF16 on the whole GPU: a large copy, RMSNorm
and SwiGLU, forward and backward, eager PyTorch (the kernels a plain training loop launches) and
torch.compile (one fused Triton kernel each). GB/s counts the fewest bytes the op must move (each
input read once, each output written once, small weights left out): copy 2N, RMSNorm forward
2N (x in, y out), backward 3N (x, dy in, dx out), SwiGLU forward 3N (a, b in, out), backward
5N (a, b, dout in, da, db out), N elements of 2 bytes. Results are checked against float32
references first. Each case is timed two ways: CUDA events around each call (median_ms, gbps;
the CPU's launch counts where it outlasts the kernel) and its kernels' device time under
torch.profiler (kernel_us_per_call, kernel_gbps), which calibrate reads where present.
Usage: python3 memory_bound.py OUT.json
"""
import sys

import torch
import torch.nn.functional as F

from common import provenance, time_cuda
from nvml_sampler import write_json_atomic

E = 2  # bytes per bf16 element
KERNEL_CALLS = 30
# How a case is timed, for the JSON's bench section (memory_bound_forms.py times the same way).
TIMING_DOC = ("median_ms: CUDA events around each call, 5 warm-up calls, median of 30 (the CPU's launch included "
              "where it outlasts the kernel); kernel_us_per_call: the kernels' device time under torch.profiler, "
              f"mean over {KERNEL_CALLS} calls")


def rmsnorm(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, 1e-6)


def swiglu(a, b):
    return F.silu(a) * b


def rel(a, r):
    return float((a.float() - r).norm() / r.norm())


def kernel_times(fn):
    """The CUDA kernels one call of fn launches (names shortened to 80 characters) and their
    device time per call (us, the mean over KERNEL_CALLS calls under torch.profiler). CUDA events
    around one call also time the CPU's launch (tens of microseconds for a compiled function's
    wrapper or autograd's backward), which a kernel of 20-100 us does not hide; the profiler's
    kernel spans do not count it."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(KERNEL_CALLS):
            fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    names = []
    for e in kernels:
        if e.name[:80] not in names:
            names.append(e.name[:80])
    return names, sum(e.time_range.elapsed_us() for e in kernels) / KERNEL_CALLS


def bench_op(name, variant, fn, bytes_moved, elements, runs=30):
    t = time_cuda(fn, runs=runs)
    t["gbps"] = bytes_moved / t["median_ms"] / 1e6
    rec = {"op": name, "variant": variant, "elements": elements, "bytes": bytes_moved, **t}
    rec["kernels"], rec["kernel_us_per_call"] = kernel_times(fn)
    rec["kernel_gbps"] = bytes_moved / rec["kernel_us_per_call"] / 1e3
    print(f"{name:22s} {variant:8s} N={elements:>11d} {t['median_ms']:8.3f} ms {t['gbps']:7.0f} GB/s; "
          f"kernels {rec['kernel_us_per_call']:8.1f} us {rec['kernel_gbps']:7.0f} GB/s", flush=True)
    return rec


def keep_saved_tensors():
    """Compiled backwards are timed repeatedly (retain_graph): their saved tensors must stay."""
    try:
        import torch._functorch.config as fconfig
        fconfig.donated_buffer = False
    except Exception:  # noqa: BLE001
        pass


def main():
    out_path = sys.argv[1]
    keep_saved_tensors()
    recs = []
    # Copy: 2 GiB each way (L2 is 60 MB).
    n = 1 << 30
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    y.copy_(x)
    assert torch.equal(x, y)
    recs.append(bench_op("copy", "eager", lambda: y.copy_(x), 2 * n * E, n))
    del x, y

    compiled_rms = compiled_swiglu = None
    try:
        compiled_rms = torch.compile(rmsnorm, dynamic=False)
        compiled_swiglu = torch.compile(swiglu, dynamic=False)
    except Exception as e:  # noqa: BLE001
        print(f"torch.compile unavailable: {e}", flush=True)

    for tokens, hidden in ((16384, 7168), (65536, 4096)):
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        w = (1 + 0.1 * torch.randn(hidden, device="cuda")).to(torch.bfloat16).requires_grad_(True)
        ref = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
        dy = torch.randn_like(x)
        N = tokens * hidden
        for variant, fn in (("eager", rmsnorm), ("compiled", compiled_rms)):
            if fn is None:
                continue
            try:
                yv = fn(x, w)
                err = rel(yv, ref)
                if not err < 1e-2:
                    raise RuntimeError(f"rmsnorm {variant} relative error {err}")
                r = bench_op(f"rmsnorm_fwd_{hidden}", variant, lambda: fn(x, w), 2 * N * E, N)
                r["rel_err"] = err
                recs.append(r)
                yv = fn(x, w)
                recs.append(bench_op(f"rmsnorm_bwd_{hidden}", variant,
                                     lambda: torch.autograd.grad(yv, (x, w), dy, retain_graph=True), 3 * N * E, N))
            except Exception as e:  # noqa: BLE001
                recs.append({"op": f"rmsnorm_{hidden}", "variant": variant, "error": str(e)[:300]})
                print(f"rmsnorm {variant} failed: {e}", flush=True)
        del x, w, ref, dy

    for tokens, ffn in ((16384, 18432), (4096, 14336)):
        a = torch.randn(tokens, ffn, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        b = torch.randn(tokens, ffn, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        ref = F.silu(a.float()) * b.float()
        do = torch.randn_like(a)
        N = tokens * ffn
        for variant, fn in (("eager", swiglu), ("compiled", compiled_swiglu)):
            if fn is None:
                continue
            try:
                o = fn(a, b)
                err = rel(o, ref)
                if not err < 1e-2:
                    raise RuntimeError(f"swiglu {variant} relative error {err}")
                r = bench_op(f"swiglu_fwd_{ffn}", variant, lambda: fn(a, b), 3 * N * E, N)
                r["rel_err"] = err
                recs.append(r)
                o = fn(a, b)
                recs.append(bench_op(f"swiglu_bwd_{ffn}", variant,
                                     lambda: torch.autograd.grad(o, (a, b), do, retain_graph=True), 5 * N * E, N))
            except Exception as e:  # noqa: BLE001
                recs.append({"op": f"swiglu_{ffn}", "variant": variant, "error": str(e)[:300]})
                print(f"swiglu {variant} failed: {e}", flush=True)
        del a, b, ref, do

    doc = {"schema_version": 1, "provenance": provenance("kernels/torch/memory_bound.py"),
           "bench": {"dtype": "bf16", "timing": TIMING_DOC,
                     "bytes": "fewest bytes: copy 2N, rmsnorm fwd 2N bwd 3N, swiglu fwd 3N bwd 5N, "
                              "N elements x 2 bytes; weights and their gradients left out",
                     "variants": "eager: the ATen kernels a plain loop launches (several per op); "
                                 "compiled: torch.compile(dynamic=False), Inductor's fused Triton kernels"},
           "cases": recs}
    write_json_atomic(out_path, doc)


if __name__ == "__main__":
    main()
