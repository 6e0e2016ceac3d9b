"""The memory-bound kernels pipeline_step.py's model launches beyond memory_bound.py's forms, on the
whole GPU in BF16, each timed by its kernels' device time (torch.profiler) and as memory_bound.py
times them (CUDA events around each call, median of 30):

  swiglu_chunked   pipeline_model.swiglu: one gate_up tensor chunked in two (as Megatron's fused
                   SwiGLU takes it), torch.compile'd; its backward writes one concatenated gradient
  rope             pipeline_model.rope on q (32 heads) and k (8 heads), torch.compile'd
  layout_copy      SDPA's [b, s, h, d] <-> [b, h, s, d] copies (q's gradient, the output)
  split_cat        qkv's split backward: the three gradients concatenated into one
  residual_add     x + y

Bytes count each input read once and each output written once (cos/sin left out). Each case
lists the kernels one call launches (torch.profiler), to match them with a Kineto trace.
Not read by `clustersim calibrate`: the data for per-kind memory-bound rates.
Usage: python3 memory_bound_forms.py OUT.json"""
import sys

import torch

from common import provenance
from memory_bound import E, bench_op, keep_saved_tensors, rel
from nvml_sampler import write_json_atomic
import pipeline_model as pm


KERNEL_CALLS = 30


def kernel_times(fn):
    """The CUDA kernels one call of fn launches (names shortened to 80 characters) and their
    device time per call (us, the mean over KERNEL_CALLS calls under torch.profiler). CUDA events
    around one call also time the CPU's launch (tens of microseconds for a compiled function's
    wrapper), which a kernel of 20-100 us does not hide; the profiler's kernel spans do not."""
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


def case(recs, name, variant, fn, bytes_moved, elements, err=None):
    try:
        r = bench_op(name, variant, fn, bytes_moved, elements)
        r["kernels"], r["kernel_us_per_call"] = kernel_times(fn)
        r["kernel_gbps"] = bytes_moved / r["kernel_us_per_call"] / 1e3
        print(f"{'':18s} kernels {r['kernel_us_per_call']:8.1f} us {r['kernel_gbps']:7.0f} GB/s", flush=True)
        if err is not None:
            r["rel_err"] = err
        recs.append(r)
    except Exception as e:  # noqa: BLE001 - one failed form does not lose the others
        recs.append({"op": name, "variant": variant, "error": str(e)[:300]})
        print(f"{name} {variant} failed: {e}", flush=True)


def main():
    out_path = sys.argv[1]
    keep_saved_tensors()
    recs = []
    dev = "cuda"

    for tokens, ffn in ((4096, 14336), (16384, 18432)):
        gu = torch.randn(1, tokens, 2 * ffn, device=dev, dtype=torch.bfloat16, requires_grad=True)
        g, u = gu.float().chunk(2, -1)
        ref = torch.nn.functional.silu(g) * u
        do = torch.randn(1, tokens, ffn, device=dev, dtype=torch.bfloat16)
        n = tokens * ffn
        out = pm.swiglu(gu)
        err = rel(out, ref)
        if not err < 1e-2:
            raise RuntimeError(f"swiglu_chunked relative error {err}")
        case(recs, f"swiglu_chunked_fwd_{ffn}", "compiled", lambda: pm.swiglu(gu), 3 * n * E, n, err)
        out = pm.swiglu(gu)
        case(recs, f"swiglu_chunked_bwd_{ffn}", "compiled",
             lambda: torch.autograd.grad(out, gu, do, retain_graph=True), 5 * n * E, n)
        del gu, g, u, ref, do, out

    stage = pm.Stage(torch.device(dev), 0, 1, False, False)
    for heads in (pm.HEADS, pm.KV_HEADS):
        x = torch.randn(pm.BATCH, heads, pm.SEQ, pm.HEAD_DIM, device=dev, dtype=torch.bfloat16, requires_grad=True)
        x1, x2 = x.float().chunk(2, -1)
        ref = x.float() * stage.cos.float() + torch.cat([-x2, x1], -1) * stage.sin.float()
        dy = torch.randn_like(x)
        n = x.numel()
        y = pm.rope(x, stage.cos, stage.sin)
        case(recs, f"rope_fwd_{heads}h", "compiled", lambda: pm.rope(x, stage.cos, stage.sin), 2 * n * E, n, rel(y, ref))
        case(recs, f"rope_bwd_{heads}h", "compiled",
             lambda: torch.autograd.grad(y, x, dy, retain_graph=True), 2 * n * E, n)
        del x, x1, x2, ref, dy, y

    for heads in (pm.HEADS, pm.KV_HEADS):
        t = torch.randn(pm.BATCH, heads, pm.SEQ, pm.HEAD_DIM, device=dev, dtype=torch.bfloat16)
        n = t.numel()
        case(recs, f"layout_copy_{heads}h", "eager",
             lambda: t.transpose(1, 2).reshape(pm.BATCH, pm.SEQ, heads * pm.HEAD_DIM), 2 * n * E, n)
        del t

    widths = (pm.HEADS * pm.HEAD_DIM, pm.KV_HEADS * pm.HEAD_DIM, pm.KV_HEADS * pm.HEAD_DIM)
    parts = [torch.randn(pm.BATCH, pm.SEQ, w, device=dev, dtype=torch.bfloat16) for w in widths]
    n = sum(p.numel() for p in parts)
    case(recs, "split_cat_qkv", "eager", lambda: torch.cat(parts, -1), 2 * n * E, n)
    del parts

    a = torch.randn(pm.BATCH, pm.SEQ, pm.HIDDEN, device=dev, dtype=torch.bfloat16)
    b = torch.randn_like(a)
    n = a.numel()
    case(recs, f"residual_add_{pm.HIDDEN}", "eager", lambda: a + b, 3 * n * E, n)

    doc = {"schema_version": 1, "provenance": provenance("kernels/torch/memory_bound_forms.py"),
           "bench": {"dtype": "bf16", "timing": "median_ms: CUDA events around each call, 5 warm-up calls, median of 30 (the CPU's "
                               "launch included where it outlasts the kernel); kernel_us_per_call: the "
                               f"kernels' device time under torch.profiler, mean over {KERNEL_CALLS} calls",
                     "bytes": "fewest bytes: swiglu_chunked fwd 3N bwd 5N (N = tokens x ffn), rope 2N each way, "
                              "layout_copy and split_cat 2N, residual_add 3N, N elements x 2 bytes",
                     "shapes": f"pipeline_step.py's: batch {pm.BATCH}, sequence {pm.SEQ}, hidden {pm.HIDDEN}, "
                               f"heads {pm.HEADS}/{pm.KV_HEADS} x {pm.HEAD_DIM}; SwiGLU also at DeepSeek-V3's "
                               "dense FFN (16384 x 18432)",
                     "variants": "compiled: pipeline_model.py's torch.compile'd functions; eager: ATen"},
           "cases": recs}
    write_json_atomic(out_path, doc)


if __name__ == "__main__":
    main()
