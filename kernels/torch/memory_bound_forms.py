"""The memory-bound kernels pipeline_step.py's model launches beyond memory_bound.py's forms, on the
whole GPU in BF16, each timed by its kernels' device time (torch.profiler) and as memory_bound.py
times them (CUDA events around each call, median of 30):

  swiglu_chunked   pipeline_model.swiglu: one gate_up tensor chunked in two (as Megatron's fused
                   SwiGLU takes it), torch.compile'd; its backward writes one concatenated gradient
  rope             pipeline_model.rope on q (32 heads) and k (8 heads), torch.compile'd
  layout_copy      SDPA's [b, s, h, d] <-> [b, h, s, d] copies (q's gradient, the output)
  split_cat        qkv's split backward: the three gradients concatenated into one
  residual_add     x + y
  rmsnorm          F.rms_norm, eager (PyTorch's fused forward; backward's grad-input and gamma kernels)
  embedding        F.embedding; its backward PyTorch's sort-based dense table gradient
  loss             pipeline_model.loss_fn, the compiled cross-entropy over BF16 logits
  launch_gap       the device's time between back-to-back kernels when the CPU is far ahead

Bytes count each input read once and each output written once (cos/sin left out). Each case
lists the kernels one call launches (torch.profiler), to match them with a Kineto trace.
Usage: python3 memory_bound_forms.py OUT.json"""
import sys

import torch
import torch.nn.functional as F

from common import provenance
from memory_bound import E, TIMING_DOC, bench_op, keep_saved_tensors, rel
from nvml_sampler import write_json_atomic
import pipeline_model as pm


GAP_KERNELS = 200


def case(recs, name, variant, fn, bytes_moved, elements, err=None):
    try:
        r = bench_op(name, variant, fn, bytes_moved, elements)
        if err is not None:
            r["rel_err"] = err
        recs.append(r)
    except Exception as e:  # noqa: BLE001 - one failed form does not lose the others
        recs.append({"op": name, "variant": variant, "error": str(e)[:300]})
        print(f"{name} {variant} failed: {e}", flush=True)


def launch_gaps():
    """The device's own time between back-to-back kernels of one stream: GAP_KERNELS small adds
    queued behind a sleeping kernel (so the CPU is far ahead and launches cost the device nothing),
    each kernel's start minus the previous one's end under torch.profiler."""
    from torch.profiler import ProfilerActivity, profile
    a = torch.randn(1 << 16, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    for _ in range(3):
        a + b
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.cuda._sleep(50_000_000)  # about 25 ms at 2 GHz: the queue fills meanwhile
        outs = [a + b for _ in range(GAP_KERNELS)]
        torch.cuda.synchronize()
    del outs
    ks = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                if e.device_type == torch.autograd.DeviceType.CUDA and "add" in e.name.lower())
    gaps = sorted(s2 - e1 for (_, e1), (s2, _) in zip(ks, ks[1:]))
    durs = sorted(e - s for s, e in ks)
    rec = {"op": "launch_gap", "variant": "eager", "kernels": len(ks),
           "gap_us_median": gaps[len(gaps) // 2], "gap_us_p10": gaps[len(gaps) // 10],
           "gap_us_p90": gaps[9 * len(gaps) // 10], "kernel_us_median": durs[len(durs) // 2]}
    print(f"launch gap: {len(ks)} kernels, gap median {rec['gap_us_median']:.2f} us "
          f"(p10 {rec['gap_us_p10']:.2f}, p90 {rec['gap_us_p90']:.2f}), kernel {rec['kernel_us_median']:.2f} us", flush=True)
    return rec


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

    # PyTorch's own RMSNorm (pipeline_model's F.rms_norm, eager): one forward kernel; backward a
    # grad-input kernel and a gamma-gradient kernel.
    x = torch.randn(pm.BATCH, pm.SEQ, pm.HIDDEN, device=dev, dtype=torch.bfloat16, requires_grad=True)
    w = torch.ones(pm.HIDDEN, device=dev, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn_like(x)
    n = x.numel()
    ref = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5)
    y = F.rms_norm(x, (pm.HIDDEN,), w, 1e-5)
    case(recs, f"rmsnorm_fwd_{pm.HIDDEN}", "eager", lambda: F.rms_norm(x, (pm.HIDDEN,), w, 1e-5), 2 * n * E, n, rel(y, ref))
    case(recs, f"rmsnorm_bwd_{pm.HIDDEN}", "eager",
         lambda: torch.autograd.grad(y, (x, w), dy, retain_graph=True), 3 * n * E, n)
    del x, w, dy, ref, y

    # The embedding: a row gather; its backward is PyTorch's sort-based dense gradient (the whole
    # BF16 table zeroed, then the rows summed in): bytes count dy and the table's gradient once.
    table = torch.randn(pm.VOCAB, pm.HIDDEN, device=dev, dtype=torch.bfloat16, requires_grad=True)
    ids = torch.randint(0, pm.VOCAB, (pm.BATCH, pm.SEQ), device=dev, generator=torch.Generator(dev).manual_seed(3))
    n = ids.numel() * pm.HIDDEN
    e = F.embedding(ids, table)
    if not torch.equal(e[0, 5], table[ids[0, 5]]):
        raise RuntimeError("embedding rows differ from the table's")
    de = torch.randn_like(e)
    case(recs, f"embedding_fwd_{pm.HIDDEN}", "eager", lambda: F.embedding(ids, table), 2 * n * E, n)
    case(recs, f"embedding_bwd_{pm.HIDDEN}", "eager",
         lambda: torch.autograd.grad(e, table, de, retain_graph=True), (n + table.numel()) * E, n)
    del table, e, de

    # The loss: pipeline_model.loss_fn (compiled cross-entropy over the BF16 logits).
    logits = torch.randn(pm.BATCH, pm.SEQ, pm.VOCAB, device=dev, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, pm.VOCAB, (pm.BATCH, pm.SEQ), device=dev, generator=torch.Generator(dev).manual_seed(4))
    n = logits.numel()
    ref = F.cross_entropy(logits.view(-1, pm.VOCAB).float(), labels.view(-1))
    loss = pm.loss_fn(logits, labels)
    case(recs, f"loss_fwd_{pm.VOCAB}", "compiled", lambda: pm.loss_fn(logits, labels), n * E, n,
         abs(float(loss) - float(ref)) / abs(float(ref)))
    case(recs, f"loss_bwd_{pm.VOCAB}", "compiled",
         lambda: torch.autograd.grad(loss, logits, retain_graph=True), 2 * n * E, n)
    del logits, labels, ref, loss

    try:
        recs.append(launch_gaps())
    except Exception as e:  # noqa: BLE001
        recs.append({"op": "launch_gap", "variant": "eager", "error": str(e)[:300]})
        print(f"launch gap failed: {e}", flush=True)

    doc = {"schema_version": 1, "provenance": provenance("kernels/torch/memory_bound_forms.py"),
           "bench": {"dtype": "bf16", "timing": TIMING_DOC,
                     "bytes": "fewest bytes: swiglu_chunked fwd 3N bwd 5N (N = tokens x ffn), rope 2N each way, "
                              "layout_copy and split_cat 2N, residual_add 3N, rmsnorm fwd 2N bwd 3N, embedding fwd "
                              "2N bwd N + the table, loss fwd N bwd 2N (N = logits), N elements x 2 bytes",
                     "shapes": f"pipeline_step.py's: batch {pm.BATCH}, sequence {pm.SEQ}, hidden {pm.HIDDEN}, "
                               f"heads {pm.HEADS}/{pm.KV_HEADS} x {pm.HEAD_DIM}; SwiGLU also at DeepSeek-V3's "
                               "dense FFN (16384 x 18432)",
                     "variants": "compiled: pipeline_model.py's torch.compile'd functions; eager: ATen"},
           "cases": recs}
    write_json_atomic(out_path, doc)


if __name__ == "__main__":
    main()
