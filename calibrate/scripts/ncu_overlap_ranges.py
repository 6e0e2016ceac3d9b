#!/usr/bin/env python3
"""DRAM bytes of the GEMMs alone and beside the copy, from cs_overlap --profile-ranges under ncu.

cs_overlap --profile-ranges makes three profiler ranges per case with k > 0, in order: its GEMMs
alone, its copy alone, both together (one window each, the same op counts). Under
`ncu --replay-mode app-range` each range's DRAM bytes are those of the window's work. Per case this
writes the bytes per GEMM alone, per copy alone, and per GEMM together: the together window's
bytes less its copies' (at their alone bytes per copy), over its GEMMs.

usage: ncu_overlap_ranges.py BENCH.json NCU.csv -o OUT.json
"""
import json
import sys

from ncu_csv import bench_and_results, derived_provenance


def main():
    a, bench, rs = bench_and_results()
    cases = [c for c in bench["cases"] if c["k"] > 0]
    if len(rs) != 3 * len(cases):
        sys.exit(f"{a.csv}: {len(rs)} ranges, {3 * len(cases)} expected (three per case with k > 0)")
    total = lambda r: r["dram__bytes_read.sum"] + r["dram__bytes_write.sum"]
    out = []
    for i, c in enumerate(cases):
        g, cp, t = rs[3 * i: 3 * i + 3]
        n, m = c["gemm_count"], c["a2a_count"]
        copy = total(cp) / m
        out.append({
            "shape": c["shape"], "m": c["m"], "n": c["n"], "k_dim": c["k_dim"], "groups": c["groups"],
            "k": c["k"], "compute_sms": c["compute_sms"], "gemm_count": n, "a2a_count": m,
            "a2a_bytes": bench["bench"]["a2a_bytes_per_gpu"],
            "gemm_alone_us": c["gemm_alone_us"], "gemm_together_us": c["gemm_together_us"],
            "a2a_alone_us": c["a2a_alone_us"], "a2a_together_us": c["a2a_together_us"],
            "gemm_alone_dram_bytes": total(g) / n,
            "copy_alone_dram_bytes": copy,
            "gemm_together_dram_bytes": (total(t) - m * copy) / n,
        })
    prov = derived_provenance(bench, a, "ncu_overlap_ranges", "calibrate/scripts/ncu_overlap_ranges.py")
    json.dump({"schema_version": 1, "provenance": prov,
               "bench": {"note": "times are the bench's own under the profiler (clocks locked to base by ncu); "
                                 "bytes per op, read plus written"},
               "cases": out}, open(a.o, "w"), indent=1)


if __name__ == "__main__":
    main()
