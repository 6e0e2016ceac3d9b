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
