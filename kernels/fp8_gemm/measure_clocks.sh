#!/usr/bin/env bash
# The FP8 GEMM sweep with each case's SM clock, power and power-cap state (one device call on a
# bare single Hopper GPU): green contexts of 16 to 128 SMs in steps of 8 and the whole GPU, every
# shape, each case's clock sampled by NVML every ms (cs_fp8_gemm --sample-clocks) and read on the
# SMs right after each timed run (--probe-clocks: NVML lags a short case). Twice, the SM
# counts falling and then rising, because a case's clock also depends on the load before it (the
# power controller averages over hundreds of ms):
#   fp8_gemm_clocks_falling.json / .log, fp8_gemm_clocks_rising.json / .log
# and nvidia-smi.txt, build.log.
#
#   kernels/fp8_gemm/measure_clocks.sh OUT_DIR [GENERATED_DIR]
# Exits 1 when the build or a run failed (the other run still goes), else 0.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common/plan_setup.sh"
"$here/build_nvcc.sh" "$bin" "${gen[@]}" > "$out/build.log" 2>&1 || { echo "cs_fp8_gemm build failed (build.log)"; exit 1; }
falling=132,128,120,112,104,96,88,80,72,64,56,48,40,32,24,16
rising=16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,132
for order in falling rising; do
  t0=$SECONDS
  "$bin/cs_fp8_gemm" --shapes all --sms "${!order}" --methods green,green_sm_target --sample-clocks --probe-clocks --runs 60 \
    --json "$out/fp8_gemm_clocks_$order.json" > "$out/fp8_gemm_clocks_$order.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || failed=1
  echo "$order: exit $rc after $((SECONDS - t0)) s"
done
exit $failed
