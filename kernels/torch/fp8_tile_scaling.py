"""FP8 GEMMs of DeepSeek-V3's shapes under both of its block scalings, paired: 1x128 activation tiles
against 128x128 weight blocks (forward and input gradient), and 1x128 tiles on both operands (the
weight gradient, which multiplies two activations). cuBLASLt through torch._scaled_mm, on the whole
GPU and on green contexts of fewer SMs; the data `calibrate fit` takes the profile's
`gemm_fp8_tiles` section from.

Why it exists: kernels/torch/deepseek_layers.py found the weight gradients' kernels (nvjet ...
Avec128_Bvec128) about 1.3 times slower per FLOP than the others (Ablk128_Bvec128), and the
profile's FP8 rates are fitted to the latter only (kernels/fp8_gemm).

Shapes (m x n x k, y = A B^T with B n x k): DeepSeek-V3's per-GPU GEMMs at EP64, 4096 tokens; the
weight gradients (k = tokens: 4096, or 8192 rows per expert) and the forward ones. kv_down's 576
outputs are padded to 640 (128x128 blocks need n a multiple of 128). Each case: 3 warm-ups and 20
runs, each after a 256 MiB write that flushes L2, timed by CUDA events, with NVML's SM clock
sampled every 2 ms (median over the runs). The two scalings of a shape run back to back, in
alternating order from one shape to the next. Both are checked first against a float product of
the dequantized operands (relative L2 error under 1e-2; else exit 3, nothing written).

Usage: python3 fp8_tile_scaling.py OUT.json
"""
import os
import sys

import torch

os.environ["CS_WEIGHT_SCALING"] = "block128"  # deepseek_layers.probe() then also finds 128x128 weights
import deepseek_layers as dl  # noqa: E402
from bf16_gemm import ClockSampler, green_context, time_case  # noqa: E402
from common import provenance  # noqa: E402
from nvml_sampler import write_json_atomic  # noqa: E402

SHAPES = [  # (name, m, n, k)
    ("wgrad.q_down", 7168, 1536, 4096), ("wgrad.q_up", 1536, 24576, 4096), ("wgrad.kv_down", 7168, 640, 4096),
    ("wgrad.kv_up", 512, 32768, 4096), ("wgrad.o_proj", 16384, 7168, 4096), ("wgrad.shared_up", 7168, 4096, 4096),
    ("wgrad.shared_down", 2048, 7168, 4096), ("wgrad.expert_up", 7168, 4096, 8192),
    ("wgrad.expert_down", 2048, 7168, 8192),
    ("fwd.q_down", 4096, 1536, 7168), ("fwd.q_up", 4096, 24576, 1536), ("fwd.kv_up", 4096, 32768, 512),
    ("fwd.o_proj", 4096, 7168, 16384), ("fwd.shared_up", 4096, 4096, 7168), ("fwd.shared_down", 4096, 7168, 2048),
    ("fwd.expert_up", 8192, 4096, 7168), ("fwd.expert_down", 8192, 7168, 2048),
]
SM_LIMITS = (112, 64, 32)  # besides the whole GPU, where green contexts exist
RUNS, WARMUP, FLUSH_MIB = 20, 3, 256
SCALINGS = {"block_1x128_128x128": dl._quant_blocks, "tile_1x128_1x128": dl._quant_groups}


def main():
    out_path = sys.argv[1]
    tried = dl.probe()
    if dl.MODE["weights"] != "128x128":
        print(f"fp8_tile_scaling: this PyTorch lacks 1x128 x 128x128 scaling: {tried}", file=sys.stderr)
        sys.exit(3)
    torch.manual_seed(0)
    clocks = ClockSampler()
    flush = torch.zeros(FLUSH_MIB * 2**20 // 4, device="cuda")
    sms_total = torch.cuda.get_device_properties(0).multi_processor_count
    limits = [(sms_total, None)] + [(s, c) for s in SM_LIMITS if (c := green_context(s)) is not None]
    cases = []
    for si, (name, m, n, k) in enumerate(SHAPES):
        a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        b = (torch.randn(n, k, device="cuda") / k**0.5).to(torch.bfloat16)
        aq, sa = dl._quant_groups(a)
        ops = {}
        for scaling, qb in SCALINGS.items():
            bq, sb = qb(b)
            ref = dl._dequant(aq[:256], sa[:256]) @ (bq.float() * sb.repeat_interleave(128, 0).repeat_interleave(128, 1)
                                                   if sb.shape[0] != n else dl._dequant(bq, sb)).t()
            got = dl.mm(aq[:256], sa[:256], bq, sb).float()
            err = float((got - ref).norm() / ref.norm())
            if not err < 1e-2:
                print(f"fp8_tile_scaling: {name} {scaling}: relative L2 error {err:.3e}", file=sys.stderr)
                sys.exit(3)
            ops[scaling] = (bq, sb, err)
        order = list(SCALINGS) if si % 2 == 0 else list(reversed(SCALINGS))
        for sms, ctx in limits:
            for scaling in order:
                bq, sb, err = ops[scaling]
                if ctx is not None:
                    ctx.set_context()
                try:
                    t = time_case(lambda: dl.mm(aq, sa, bq, sb), flush, clocks, runs=RUNS, warmup=WARMUP)
                finally:
                    if ctx is not None:
                        ctx.pop_context()
                case = {"name": name, "m": m, "n": n, "k": k, "groups": 1, "dtype": "fp8", "scaling": scaling,
                        "sm_limit": sms, "sm_obtained": sms, "method": "green" if ctx is not None else "whole_gpu",
                        **t, "tflops": 2.0 * m * n * k / (t["median_us"] * 1e-6) / 1e12,
                        "checked": True, "check": {"rows": 256, "rel_l2_error": err}}
                cases.append(case)
                mhz = t.get("clocks", {}).get("sm_mhz_median")
                print(f"{name} {m}x{n}x{k} {scaling} on {sms} SMs: {t['median_us']:.1f} us, {case['tflops']:.0f} "
                      f"TFLOP/s" + (f", {mhz:.0f} MHz" if mhz else ""), flush=True)
        del a, b, aq, sa, ops
    clocks.close()
    out = {"schema_version": 1, "provenance": provenance("kernels/torch/fp8_tile_scaling.py"),
           "bench": {"op": "torch._scaled_mm, E4M3 in, BF16 out; A in 1x128 tiles, B in 128x128 blocks or 1x128 tiles",
                     "runs": RUNS, "warmup": WARMUP, "flush_mib": FLUSH_MIB, "sm_limits": [s for s, _ in limits],
                     "scale_layouts": {"a": dl.MODE["layout"][0], "b_tiles": dl.MODE["layout"][1],
                                       "b_blocks": dl.MODE["block_layout"]}, "probe": tried,
                     "clock_sampling": "NVML SM clock every 2 ms (ctypes)" if clocks.ok else None},
           "cases": cases}
    write_json_atomic(out_path, out, indent=1)


if __name__ == "__main__":
    main()
