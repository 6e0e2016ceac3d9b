"""NCCL's ring collectives on the GPUs of one host, as nccl-tests reports them: reduce-scatter and
all-reduce of FP32 (ZeRO-1's gradients), all-gather and all-reduce of BF16 (its weights), one
process per GPU through torch.distributed.

Why: the optimizer step of a data-parallel training (DeepSeek-V3's ZeRO-1 reduce-scatter and
all-gather) runs NCCL's ring kernels, not our copy kernel (all_to_all.cu), whose per-SM rate the
profiles fit. NCCL moves a ring step through one thread block per channel (load, reduce, store to
the peer's buffer); how fast a channel goes, and how many NCCL runs, is what this measures.

Sizes follow nccl-tests: S is each GPU's buffer (all-reduce: the buffer reduced; reduce-scatter: each
GPU's input; all-gather: each GPU's output). algbw = S / time; busbw = algbw x 2(n-1)/n for
all-reduce and x (n-1)/n for the other two. Each case is checked before it is timed (the sum of
rank-valued inputs, the gathered ranks), else exit 3 with nothing written.

The channel count is NCCL's to choose unless NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS pin it; the
caller sets both (the driver, nccl_collectives.sh) and this program records them; NCCL_DEBUG=INFO's
"coll channels" line in the log says how many NCCL took.

Usage: python3 nccl_collectives.py OUT.json [--sizes-mib 1,4,...] [--runs 20] [--warmup 5]
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from common import provenance

KINDS = [  # (name, dtype, bus factor as a function of n)
    ("reduce_scatter", torch.float32, lambda n: (n - 1) / n),
    ("all_gather", torch.bfloat16, lambda n: (n - 1) / n),
    ("all_reduce", torch.float32, lambda n: 2 * (n - 1) / n),
    ("all_reduce", torch.bfloat16, lambda n: 2 * (n - 1) / n),
]


def check_and_bind(kind, dtype, size_bytes, rank, n, dev):
    """Buffers for one case, its call, and a check of one call's result (raises on a mismatch)."""
    elems = size_bytes // torch.tensor([], dtype=dtype).element_size()
    elems -= elems % n
    if kind == "reduce_scatter":
        x = torch.full((elems,), float(rank + 1), dtype=dtype, device=dev)
        y = torch.empty((elems // n,), dtype=dtype, device=dev)
        call = lambda: dist.reduce_scatter_tensor(y, x)  # noqa: E731
        want = float(n * (n + 1) // 2)
        out = y
    elif kind == "all_gather":
        x = torch.full((elems // n,), float(rank + 1), dtype=dtype, device=dev)
        y = torch.empty((elems,), dtype=dtype, device=dev)
        call = lambda: dist.all_gather_into_tensor(y, x)  # noqa: E731
        want = None
        out = y
    else:
        x = torch.full((elems,), float(rank + 1), dtype=dtype, device=dev)
        call = lambda: dist.all_reduce(x)  # noqa: E731
        want = float(n * (n + 1) // 2)
        out = x
    call()
    torch.cuda.synchronize()
    if kind == "all_gather":
        expect = torch.arange(1, n + 1, dtype=dtype, device=dev).repeat_interleave(elems // n)
        ok = torch.equal(out, expect)
    else:
        ok = bool((out == want).all())
    if not ok:
        raise RuntimeError(f"{kind} {dtype} {size_bytes} B gave a wrong result on rank {rank}")
    if kind == "all_reduce":
        x.fill_(float(rank + 1))  # timed calls keep summing: values grow, time does not change
    return call, elems * out.element_size()  # S: each GPU's whole buffer (elems is its element count)


def worker(rank, n, args, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=n, device_id=dev)
    cases = []
    try:
        for kind, dtype, bus in KINDS:
            for mib in args.sizes_mib:
                call, size = check_and_bind(kind, dtype, mib << 20, rank, n, dev)
                runs = args.runs if mib <= 1024 else max(5, args.runs // 4)
                for _ in range(args.warmup):
                    call()
                torch.cuda.synchronize()
                dist.barrier()
                ts = []
                for _ in range(runs):
                    a = torch.cuda.Event(enable_timing=True)
                    b = torch.cuda.Event(enable_timing=True)
                    a.record()
                    call()
                    b.record()
                    b.synchronize()
                    ts.append(a.elapsed_time(b))
                # nccl-tests reports the slowest rank's time: take each run's maximum over ranks.
                t = torch.tensor(ts, device=dev)
                dist.all_reduce(t, op=dist.ReduceOp.MAX)
                ts = sorted(t.tolist())
                med = statistics.median(ts)
                algbw = size / (med * 1e-3) / 1e9
                cases.append({"kind": kind, "dtype": str(dtype).replace("torch.", ""), "size_bytes": size,
                              "runs": runs, "median_ms": med, "min_ms": ts[0], "max_ms": ts[-1],
                              "algbw_GBps": algbw, "busbw_GBps": algbw * bus(n)})
                if rank == 0:
                    print(f"{kind:>15} {cases[-1]['dtype']:>9} {size:>12d} B  {med * 1e3:10.1f} us  "
                          f"algbw {algbw:7.1f}  busbw {algbw * bus(n):7.1f} GB/s", flush=True)
                del call
                torch.cuda.empty_cache()
    except RuntimeError as e:
        print(e, file=sys.stderr, flush=True)
        sys.exit(3)
    if rank == 0:
        with open(args.out + ".rank0", "w") as f:
            json.dump({"cases": cases, "nccl_version": ".".join(map(str, torch.cuda.nccl.version()))}, f)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sizes-mib", default="1,4,16,64,256,1024,4096")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--port", type=int, default=29511)
    args = ap.parse_args()
    args.sizes_mib = [int(s) for s in args.sizes_mib.split(",")]
    n = torch.cuda.device_count()
    if n < 2:
        sys.exit("nccl_collectives.py needs 2 or more GPUs")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=worker, args=(r, n, args, args.port)) for r in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    part = args.out + ".rank0"
    if any(p.exitcode != 0 for p in procs) or not os.path.exists(part):
        print("a check failed or a rank died; nothing written:", [p.exitcode for p in procs], file=sys.stderr)
        sys.exit(3)
    with open(part) as f:
        result = json.load(f)
    os.remove(part)
    env = {k: os.environ[k] for k in sorted(os.environ) if k.startswith("NCCL_")}
    doc = {"provenance": provenance("kernels/torch/nccl_collectives.py"), "gpus": n,
           "nccl_version": result["nccl_version"], "nccl_env": env, "cases": result["cases"]}
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
