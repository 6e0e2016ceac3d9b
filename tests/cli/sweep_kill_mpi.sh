#!/usr/bin/env bash
# `clustersim sweep` as planners run it for hours: killed with SIGKILL mid-way and rerun, it
# completes with every point exactly once and the bytes of an unbroken serial run; under
# `mpirun -np 2` its results are the serial run's too.
#   sweep_kill_mpi.sh CLUSTERSIM SOURCE_DIR WORK_DIR [MPIEXEC]   (MPIEXEC "none": no MPI part)
set -euo pipefail
bin=$1 src=$2 work=$3 mpiexec=${4:-none}
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# The tests' tiny sweep with a larger batch and more SM splits: enough work per point (about
# 0.2 s, more under the sanitizers) that the kill lands mid-way.
sed -e 's/global_batch: 16/global_batch: 256/' -e 's/values: \[0, 20, 200\]/range: {from: 0, to: 40, step: 8}/' \
  "$src/tests/cli/data/tiny-sweep.yaml" > slow.yaml
total=$("$bin" sweep slow.yaml --list | tail -1 | cut -d' ' -f1)
rows() { [ -f "$1" ] && echo $(( $(wc -l < "$1") - 2 )) || echo 0; }
ran() { if [ -f "$1" ]; then grep -c -E '^[0-9]+,(ok|failed),' "$1" || true; else echo 0; fi; }  # skipped points are on file at once

"$bin" sweep slow.yaml -o serial.csv -j 1 > /dev/null 2>&1
[ "$(rows serial.csv)" -eq "$total" ] || fail "the serial run wrote $(rows serial.csv) of $total points"

"$bin" sweep slow.yaml -o killed.csv -j 2 > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 6000); do
  [ "$(ran killed.csv)" -ge 3 ] && break
  sleep 0.01
done
kill -9 "$pid" 2> /dev/null || true
wait "$pid" 2> /dev/null || true
done_before=$(ran killed.csv)
echo "killed with $done_before of $(ran serial.csv) points run, and $(rows killed.csv) of $total on file"
[ "$done_before" -ge 3 ] || fail "fewer than 3 points ran before the kill"
[ "$done_before" -lt "$(ran serial.csv)" ] || fail "the sweep finished before the kill; the test needs slower points"

"$bin" sweep slow.yaml -o killed.csv -j 2 > rerun.out 2> rerun.err || fail "the rerun failed: $(cat rerun.err)"
grep -q "the rest on file" rerun.err || fail "the rerun did not take the points on file: $(cat rerun.err)"
cmp serial.csv killed.csv || fail "the resumed results differ from the serial run's"
dups=$(tail -n +3 killed.csv | cut -d, -f1 | sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] || fail "$dups points appear twice"

if [ "$mpiexec" = none ]; then
  echo "no MPI in this build: the mpirun part is skipped"
  exit 0
fi
# Root in a container needs Open MPI's consent; the isolated launcher needs no ssh.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm=isolated OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI's own allocations are not ours to report under LeakSanitizer.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
"$mpiexec" -np 2 --oversubscribe "$bin" sweep slow.yaml -o mpi.csv -j 1 > mpi.out 2> mpi.err ||
  fail "mpirun failed: $(cat mpi.err)"
grep -q "on each of 2 MPI ranks" mpi.err || fail "the sweep did not run on 2 ranks: $(cat mpi.err)"
cmp serial.csv mpi.csv || fail "the MPI results differ from the serial run's"
"$mpiexec" -np 2 --oversubscribe "$bin" sweep slow.yaml -o mpi.json -j 1 > /dev/null 2>&1 || fail "mpirun (JSON) failed"
"$bin" sweep slow.yaml -o serial.json -j 2 > /dev/null 2>&1
cmp serial.json mpi.json || fail "the MPI JSON differs from the threaded run's"
echo "killed and resumed, and mpirun -np 2: the same results as the serial run"
