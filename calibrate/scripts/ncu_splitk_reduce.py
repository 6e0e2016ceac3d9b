#!/usr/bin/env python3
"""The split-K reduction kernel beside each FP8 GEMM, from an Nsight Compute run of cs_fp8_gemm
whose kernel filter lets cuBLASLt's `splitKreduce_kernel` through (`-k regex:'nvjet|...|educe'`).

Reads the bench's JSON (cases in launch order) and the ncu --csv output of gpu__time_duration.sum,
where every case launched, per group, one checking GEMM, `warmup` warm-up GEMMs and `runs` timed
GEMMs, each a GEMM kernel followed by a reduction kernel when cuBLASLt split k. Writes one JSON
with, per case, the medians over the timed launches of both kernels' durations and the grids.
Profiler durations serialise the kernels and drop launch gaps: they tell the reduction's share
and how it moves with the partition, not a case's time in the bench.

usage: ncu_splitk_reduce.py BENCH.json NCU.csv[.gz] -o OUT.json
"""
import json
import statistics
import sys

from ncu_csv import bench_and_results, cases_and_launches, derived_provenance


def main():
    a, bench, ks = bench_and_results()
    launches = []  # [GEMM kernel, reduction kernel or None]
    for k in ks:
        if "splitKreduce" in k["Kernel Name"]:
            if not launches or launches[-1][1] is not None:
                sys.exit(f"{a.csv}: a reduction kernel with no GEMM kernel before it")
            launches[-1][1] = k
        else:
            launches.append([k, None])
    cases = []
    for c, _, timed in cases_and_launches(bench, launches, a.csv, "GEMM launches"):
        reduced = [r for _, r in timed if r is not None]
        if reduced and len(reduced) != len(timed):
            sys.exit(f"{a.csv}: case {c['m']}x{c['n']}x{c['k']} reduced in some launches only")
        cases.append({
            "name": c["name"], "m": c["m"], "n": c["n"], "k": c["k"], "groups": c["groups"],
            "sms": c["sm_obtained"], "method": c["method"], "split_k": c["algo"].get("split_k", 1),
            "gemm_kernel": timed[0][0]["Kernel Name"], "gemm_grid": timed[0][0]["Grid Size"],
            "gemm_us": statistics.median(g["gpu__time_duration.sum"] for g, _ in timed) / 1e3,
            "reduce_grid": reduced[0]["Grid Size"] if reduced else None,
            "reduce_us": statistics.median(r["gpu__time_duration.sum"] for r in reduced) / 1e3 if reduced else 0.0,
        })
    prov = derived_provenance(bench, a, "ncu_splitk_reduce", "calibrate/scripts/ncu_splitk_reduce.py")
    json.dump({"schema_version": 1, "provenance": prov,
               "bench": {"per_case": "medians over the timed launches (profiler durations, kernels serialised)"},
               "cases": cases}, open(a.o, "w"), indent=1)


if __name__ == "__main__":
    main()
