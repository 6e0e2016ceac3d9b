"""Causal attention forward and backward through torch.nn.functional.scaled_dot_product_attention
in BF16, per backend (flash, cuDNN, memory-efficient) and as PyTorch picks by default, on
DeepSeek-V3's MLA per-GPU shape (b 1, 128 heads, seq 4096, q/k head dim 192, v head dim 128) and
plain multi-head shapes around it (seq 2048/4096/8192, heads 32/64/128, head dim 128).

FLOPs (causal, half the score matrix): forward b*h*s*s*(d_qk + d_v) (2*b*h*s*s*d/2 for QK^T with
d the q/k dim, the same for PV with the v dim); backward 2.5x forward. Padded cases count the
useful (unpadded) FLOPs. Every backend is checked against a float64 reference on a small case
before anything is timed. Usage: python3 attention_bench.py OUT.json

With --long, FlashAttention-2 alone (PyTorch's flash backend) on long sequences: MLA's shape with v
padded to 192 at seq 2048 to 32768 and multi-head d 128 at 16384 and 32768 (128 heads), the
sequences the context extension's attention runs on (FlashAttention-2 as DeepSeek's framework ran
MLA). Its file holds no call of SDPA's own pick: given to `calibrate fit` beside the default run's
file, it changes only the profile's attention_fa2 section. Usage: python3 attention_bench.py --long OUT.json
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from common import provenance, time_cuda

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def tensors(b, h, s, dqk, dv, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    mk = lambda d: torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, generator=g).requires_grad_(True)  # noqa: E731
    return mk(dqk), mk(dqk), mk(dv)


def sdpa(q, k, v, backend):
    if backend is None:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with sdpa_kernel([BACKENDS[backend]]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def check(backend, dqk, dv):
    """Relative L2 error of forward and input gradients against float64 on a small case."""
    q, k, v = tensors(1, 2, 256, dqk, dv, seed=1)
    out = sdpa(q, k, v, backend)
    go = torch.randn_like(out)
    grads = torch.autograd.grad(out, (q, k, v), go)
    q64, k64, v64 = (t.detach().double().requires_grad_(True) for t in (q, k, v))
    with sdpa_kernel([SDPBackend.MATH]):
        ref = F.scaled_dot_product_attention(q64, k64, v64, is_causal=True)
    rg = torch.autograd.grad(ref, (q64, k64, v64), go.double())
    rel = lambda a, r: float((a.double() - r).norm() / r.norm())  # noqa: E731
    errs = [rel(out, ref)] + [rel(a, r) for a, r in zip(grads, rg)]
    if any(not (e < 3e-2) for e in errs):
        raise RuntimeError(f"{backend} d={dqk}/{dv}: relative error {errs} over 3e-2")
    return max(errs)


def kernels_of(fn):
    """Names of the GPU kernels one call of fn launches (to say which backend ran)."""
    from torch.profiler import ProfilerActivity, profile
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
    except Exception as e:  # noqa: BLE001 - the names are a help, not a result
        return [f"profiler failed: {e}"]


def bench(name, b, h, s, dqk, dv, backend, pad_v_to=None, runs=25):
    rec = {"name": name, "batch": b, "heads": h, "seq": s, "d_qk": dqk, "d_v": dv,
           "backend": backend or "default", "v_padded_to": pad_v_to}
    dv_run = pad_v_to or dv
    try:
        rec["check_max_rel_err"] = check(backend, dqk, dv_run)
        q, k, v = tensors(b, h, s, dqk, dv_run)
        fwd_flops = b * h * s * s * (dqk + dv)
        rec["fwd_flops"] = fwd_flops
        rec["bwd_flops"] = 2.5 * fwd_flops
        if pad_v_to:
            rec["fwd_flops_as_run"] = b * h * s * s * (dqk + dv_run)
        with torch.no_grad():
            rec["fwd"] = time_cuda(lambda: sdpa(q, k, v, backend), runs=runs)
        out = sdpa(q, k, v, backend)
        go = torch.randn_like(out)
        rec["bwd"] = time_cuda(lambda: torch.autograd.grad(out, (q, k, v), go, retain_graph=True), runs=runs)
        rec["fwd"]["tflops"] = fwd_flops / rec["fwd"]["median_ms"] / 1e9
        rec["bwd"]["tflops"] = 2.5 * fwd_flops / rec["bwd"]["median_ms"] / 1e9
        rec["fwd_kernels"] = kernels_of(lambda: sdpa(q, k, v, backend))
        rec["bwd_kernels"] = kernels_of(lambda: torch.autograd.grad(out, (q, k, v), go, retain_graph=True))
        del q, k, v, out, go
        print(f"{name:28s} {rec['backend']:9s} fwd {rec['fwd']['median_ms']:8.3f} ms {rec['fwd']['tflops']:6.1f} TFLOP/s"
              f"  bwd {rec['bwd']['median_ms']:8.3f} ms {rec['bwd']['tflops']:6.1f} TFLOP/s", flush=True)
    except Exception as e:  # noqa: BLE001 - a backend that refuses a shape is a result
        rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
        print(f"{name:28s} {rec['backend']:9s} refused: {rec['error']}", flush=True)
    torch.cuda.empty_cache()
    return rec


def long_cases():
    """FlashAttention-2 on the long sequences of the context extension (see the module's doc)."""
    records = []
    for s in (2048, 4096, 8192, 16384, 32768):
        records.append(bench(f"mla_v3_s{s}_vpad192", 1, 128, s, 192, 128, "flash", pad_v_to=192, runs=10))
    for s in (16384, 32768):
        records.append(bench(f"mha_s{s}_h128_d128", 1, 128, s, 128, 128, "flash", runs=10))
    return records


def default_cases():
    """Every backend on MLA's shape (v as it is, and padded to 192) and the multi-head shapes."""
    records = []
    for backend in [None, "flash", "cudnn", "efficient"]:
        records.append(bench("mla_v3", 1, 128, 4096, 192, 128, backend))
    for backend in [None, "flash", "cudnn"]:
        records.append(bench("mla_v3_vpad192", 1, 128, 4096, 192, 128, backend, pad_v_to=192))
    for s in (2048, 4096, 8192):
        for h in (32, 64, 128):
            for backend in [None, "flash", "cudnn", "efficient"]:
                records.append(bench(f"mha_s{s}_h{h}_d128", 1, h, s, 128, 128, backend))
    return records


def main():
    long = sys.argv[1] == "--long"
    out_path = sys.argv[2] if long else sys.argv[1]
    torch.backends.cuda.matmul.allow_tf32 = False
    records = long_cases() if long else default_cases()
    program = "kernels/torch/attention_bench.py" + (" --long" if long else "")
    doc = {"schema_version": 1, "provenance": provenance(program),
           "bench": {"dtype": "bf16", "causal": True, "layout": "b h s d, contiguous",
                     "timing": f"CUDA events around each call, 5 warm-up calls, median of {10 if long else 25}",
                     "backward": "torch.autograd.grad(out, (q, k, v), grad_out, retain_graph=True): "
                                 "dq, dk, dv without accumulation",
                     "flops": "fwd b*h*s*s*(d_qk+d_v) (causal half), bwd 2.5x fwd; padded cases count "
                              "the unpadded d_v",
                     "check": "forward and gradients vs float64 math on b1 h2 s256, relative L2 < 3e-2"},
           "cases": records}
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
