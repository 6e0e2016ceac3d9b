#!/usr/bin/env bash
# Every cuBLASLt configuration of the DeepGEMM shapes on the whole GPU (one device call on a bare
# single Hopper GPU): cs_fp8_gemm --algos all, which times the heuristic's choice, its ranked list
# and every tile of every algorithm id, each checked first; with DeepSeek's block scaling, then with
# one scale per tensor (more tiles may exist there). Each case's SM clock is sampled by NVML.
#   fp8_gemm_tiles_block.json / .log, fp8_gemm_tiles_per_tensor.json / .log
# and nvidia-smi.txt, build.log.
#
#   kernels/fp8_gemm/measure_tiles.sh OUT_DIR [GENERATED_DIR]
# Exits 1 when the build or a run failed (the other run still goes), else 0.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../common/plan_setup.sh"
"$here/build_nvcc.sh" "$bin" "${gen[@]}" > "$out/build.log" 2>&1 || { echo "cs_fp8_gemm build failed (build.log)"; exit 1; }
for scaling in block per_tensor; do
  t0=$SECONDS
  "$bin/cs_fp8_gemm" --shapes deepgemm --sms 132 --methods sm_target --scaling "$scaling" --algos all --runs 20 \
    --sample-clocks --json "$out/fp8_gemm_tiles_$scaling.json" > "$out/fp8_gemm_tiles_$scaling.log" 2>&1
  rc=$?
  [[ $rc == 0 ]] || failed=1
  echo "$scaling: exit $rc after $((SECONDS - t0)) s"
done
exit $failed
