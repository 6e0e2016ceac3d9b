#!/usr/bin/env python3
"""DRAM bytes per FP8 GEMM case, from an Nsight Compute run of cs_fp8_gemm.

Reads the bench's JSON (cases in launch order) and the ncu --csv output beside it, where every
case launched, per group, one checking GEMM, `warmup` warm-up GEMMs and `runs` timed GEMMs, each a
kernel in the CSV. Writes one JSON with, per case, the median over its timed kernels of the DRAM
bytes read and written per group: the GEMM's real HBM traffic with a cold L2 (the bench flushes L2
between runs). The profiler's times are not copied: they are not the kernel's times.

usage: ncu_dram_bytes.py BENCH.json NCU.csv[.gz] -o OUT.json
"""
import json
import statistics
import sys

from ncu_csv import bench_and_results, cases_and_launches, derived_provenance


def main():
    a, bench, ks = bench_and_results()
    cases = []
    for c, seg, timed in cases_and_launches(bench, ks, a.csv):
        names = {k["Kernel Name"] for k in seg}
        if len(names) != 1:
            sys.exit(f"{a.csv}: case {c['m']}x{c['n']}x{c['k']} matched kernels of several names: {sorted(names)}")
        cases.append({
            "name": c["name"], "m": c["m"], "n": c["n"], "k": c["k"], "groups": c["groups"],
            "sms": c["sm_obtained"], "kernel": seg[0]["Kernel Name"], "grid": seg[0]["Grid Size"],
            "split_k": c["algo"].get("split_k", 1),
            "dram_read_bytes": statistics.median(k["dram__bytes_read.sum"] for k in timed),
            "dram_write_bytes": statistics.median(k["dram__bytes_write.sum"] for k in timed),
            "l2_bytes": statistics.median(k["lts__t_bytes.sum"] for k in timed),
        })
    prov = derived_provenance(bench, a, "ncu_dram_bytes", "calibrate/scripts/ncu_dram_bytes.py")
    json.dump({"schema_version": 1, "provenance": prov,
               "bench": {"per_group": "median over the timed kernels of one group's kernel",
                         "l2_flushed_between_runs": bench["bench"]["flush_bytes"]},
               "cases": cases}, open(a.o, "w"), indent=1)


if __name__ == "__main__":
    main()
