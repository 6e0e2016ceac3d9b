#!/usr/bin/env bash
# DRAM bytes of cs_overlap's windows under Nsight Compute: for each k, the GEMMs alone, the copy
# alone and both together, each window one profiler range (--profile-ranges), replayed as the
# application ran it (app-range: the streams run concurrently, as unprofiled). The together
# window's bytes less the copy-alone window's are what the GEMMs moved beside the copy.
#
#   kernels/overlap/measure_dram_ranges.sh OUT_DIR [GENERATED_DIR]
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
bin=$(mktemp -d)
"$here/build_nvcc.sh" "$bin" "${2:-}" > "$out/overlap_under_ncu_ranges_build.log" 2>&1
export NCCL_NVLS_ENABLE=0
ncu=${NCU:-/usr/local/cuda/bin/ncu}
"$ncu" --replay-mode app-range \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum --csv \
  "$bin/cs_overlap" --ks 4,24,48 --shapes grouped,dense --reps 2 --profile-ranges \
  --json "$out/overlap_under_ncu_ranges.json" > "$out/overlap_under_ncu_ranges.csv" 2> "$out/overlap_under_ncu_ranges.err"
nvidia-smi > "$out/overlap_under_ncu_ranges_nvidia-smi.txt"
# Then: calibrate/scripts/ncu_overlap_ranges.py overlap_under_ncu_ranges.json overlap_under_ncu_ranges.csv
#       -o overlap_dram_ranges.json
