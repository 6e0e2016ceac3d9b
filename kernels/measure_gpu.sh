#!/usr/bin/env bash
# One device call's measurement plan on a bare single Hopper GPU (no CMake, no project
# dependencies): builds cs_fp8_gemm and cs_overlap with nvcc, then runs, each with its own
# nvidia-smi clock and power log (CSV, 250 ms, which `calibrate fit --sustained-clock-log` and
# `--gemm-clock-log` read):
#   fp8_gemm.json / .log / _clocks.log   the FP8 GEMM sweep (28 shapes x 8 SM counts x 3 methods)
#   overlap.json / .log / _clocks.log    GEMMs beside the all-to-all copy, k = 0 to 48 SMs
#   memory_bound.json / _clocks.log      PyTorch copy, RMSNorm, SwiGLU (where PyTorch is installed)
# and nvidia-smi.txt (the GPU, driver, clocks and power limit before anything ran).
#
#   kernels/measure_gpu.sh OUT_DIR [GENERATED_DIR]     e.g. kernels/measure_gpu.sh $OUT build/generated
# Exits 1 when a build or a bench failed (the others still run), else 0.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common/plan_setup.sh"

"$here/fp8_gemm/build_nvcc.sh" "$bin/g" "${gen[@]}" > "$out/build.log" 2>&1 &
b1=$!
"$here/overlap/build_nvcc.sh" "$bin/o" "${gen[@]}" >> "$out/build.log" 2>&1 &
b2=$!
wait $b1 || { echo "cs_fp8_gemm build failed (build.log)"; exit 1; }
wait $b2 || { echo "cs_overlap build failed (build.log)"; exit 1; }

# Runs "$@" with the GPU's clocks logged to $out/$1_clocks.log; the name is the first argument.
with_clocks() {
  local name=$1; shift
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 250 > "$out/${name}_clocks.log" 2>&1 &
  local logger=$!
  sleep 1
  local t0=$SECONDS
  "$@"
  local rc=$?
  sleep 1
  kill "$logger" 2>/dev/null
  wait "$logger" 2>/dev/null
  echo "$name: exit $rc after $((SECONDS - t0)) s"
  return $rc
}

with_clocks fp8_gemm "$bin/g/cs_fp8_gemm" --json "$out/fp8_gemm.json" > "$out/fp8_gemm.log" 2>&1 || failed=1
with_clocks overlap "$bin/o/cs_overlap" --json "$out/overlap.json" > "$out/overlap.log" 2>&1 || failed=1
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  with_clocks memory_bound python3 "$here/torch/memory_bound.py" "$out/memory_bound.json" > "$out/memory_bound.log" 2>&1 ||
    failed=1
else
  echo "memory_bound: PyTorch with CUDA not found, skipped"
fi
exit $failed
