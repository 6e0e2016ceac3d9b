#!/usr/bin/env bash
# The overlap bench with the SM clock, power and power-cap state of every window (one device call
# on a bare single Hopper GPU): cs_overlap --sample-clocks, with the default 30 ms windows and with
# 100 ms ones (the power controller averages over tens to hundreds of ms, so a short window's
# clock also carries the window before it):
#   overlap_clocks_30ms.json / .log, overlap_clocks_100ms.json / .log, nvidia-smi.txt, build.log
#
#   kernels/overlap/measure_clocks.sh OUT_DIR [GENERATED_DIR]
# Exits 1 when the build or a run failed (the other run still goes), else 0.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common/plan_setup.sh"
"$here/build_nvcc.sh" "$bin" "${gen[@]}" > "$out/build.log" 2>&1 || { echo "cs_overlap build failed (build.log)"; exit 1; }
for ms in 30 100; do
  t0=$SECONDS
  "$bin/cs_overlap" --sample-clocks --window-ms "$ms" --json "$out/overlap_clocks_${ms}ms.json" \
    > "$out/overlap_clocks_${ms}ms.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || failed=1
  echo "${ms} ms windows: exit $rc after $((SECONDS - t0)) s"
done
exit $failed
