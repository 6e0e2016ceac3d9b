#!/usr/bin/env bash
# Writes what the GPU is before a measurement plan runs: nvidia-smi's summary, then its name,
# driver, clocks (current and maximum), power (draw and limit) and temperature as CSV.
#   kernels/common/gpu_snapshot.sh OUT_FILE
set -uo pipefail
file=${1:?usage: gpu_snapshot.sh OUT_FILE}
nvidia-smi > "$file" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
  --format=csv >> "$file" 2>&1
