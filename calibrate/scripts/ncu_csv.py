"""Reading `ncu --csv` output: one row per (result, metric); results by their ID, in order."""
import csv
import gzip


def ncu_results(path):
    """[{column: value, metric name: number}] per result ID, ascending; the profiled program's own
    output lines (not starting with a quote) are skipped. Columns other than the metric's are
    kept from the result's first row (Kernel Name, Grid Size, ...)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = [line for line in f if line.startswith('"')]
    reader = csv.reader(rows)
    header = next(reader)
    col = {name: i for i, name in enumerate(header)}
    out = {}
    for row in reader:
        if row[0] == "ID":  # a header repeated by a later pass
            continue
        r = out.setdefault(int(row[col["ID"]]), {k: row[i] for k, i in col.items() if not k.startswith("Metric")})
        r[row[col["Metric Name"]]] = float(row[col["Metric Value"]].replace(",", ""))
    return [out[i] for i in sorted(out)]


def bench_and_results():
    """The command line both scripts take (BENCH.json NCU.csv -o OUT.json): the parsed arguments,
    the bench's JSON and the profiler's results."""
    import argparse
    import json
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("csv")
    ap.add_argument("-o", required=True)
    a = ap.parse_args()
    return a, json.load(open(a.bench)), ncu_results(a.csv)


def derived_provenance(bench, args, program, script):
    """The bench's provenance, renamed to `program` and naming the files and script it came from."""
    prov = dict(bench["provenance"])
    prov["program"] = program
    prov["derived_from"] = [args.bench, args.csv]
    prov["derived_by"] = script
    return prov


def cases_and_launches(bench, launches, source, what="kernels"):
    """[(case, its launches, its timed launches)] in the bench's launch order: every case launched,
    per group, one checking GEMM, `warmup` warm-up GEMMs and `runs` timed GEMMs, each one item of
    `launches`. Exits naming `source` when the counts disagree."""
    import sys
    runs, warmup = bench["bench"]["runs"], bench["bench"]["warmup"]
    per_group = 1 + warmup + runs
    out, i = [], 0
    for c in bench["cases"]:
        n = per_group * c["groups"]
        seg = launches[i:i + n]
        i += n
        if len(seg) != n:
            sys.exit(f"{source}: {len(launches)} {what}, fewer than the cases launched")
        timed = [seg[g * per_group + 1 + warmup + r] for g in range(c["groups"]) for r in range(runs)]
        out.append((c, seg, timed))
    if i != len(launches):
        sys.exit(f"{source}: {len(launches)} {what}, {i} expected from the cases")
    return out
