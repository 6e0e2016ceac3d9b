#!/usr/bin/env bash
# One device call's clock-and-power plan on a host of 2 or more Hopper GPUs: power_response.py on
# GPU 0 (how the SM clock follows BF16, FP8 and copy loads, steps and duty cycles), then the
# schedules of SCHEDULES_DIR run by pipeline_step.py with every GPU's clock, power and temperature
# sampled every 2 ms by nvml_sampler.py on the same time axis as the steps.
#   kernels/torch/measure_power.sh OUT_DIR SCHEDULES_DIR
set -euo pipefail
out=${1:?usage: measure_power.sh OUT_DIR SCHEDULES_DIR}
schedules=${2:?usage: measure_power.sh OUT_DIR SCHEDULES_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
{ nvidia-smi; nvidia-smi -q -d POWER,CLOCK,TEMPERATURE,PERFORMANCE; } > "$out/power_nvidia-smi.txt" 2>&1 || true
CUDA_VISIBLE_DEVICES=0 python3 "$here/power_response.py" "$out/power_response.json" 2>&1 | tee "$out/power_response.log" || echo "power_response.py failed" >&2
python3 "$here/nvml_sampler.py" "$out/pipeline_nvml.json" &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT
python3 "$here/pipeline_step.py" "$schedules" "$out/pipeline_step.json" 2>&1 | tee "$out/pipeline_step.log"
kill -TERM $sampler
wait $sampler
trap - EXIT
