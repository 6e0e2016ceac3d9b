#!/usr/bin/env bash
# One device call's pipeline plan on a host of 2 or more Hopper GPUs: a BF16 GEMM sweep on GPU 0
# (bf16_gemm.py), then the schedules of
# SCHEDULES_DIR (made by `clustersim schedule show ... --json`, see calibrate/data/h100/README.md)
# run by pipeline_step.py, with the GPUs' summary and topology before and an nvidia-smi clock and
# power log (CSV, 250 ms) during the run.
#   kernels/torch/measure_pipeline.sh OUT_DIR SCHEDULES_DIR
set -euo pipefail
out=${1:?usage: measure_pipeline.sh OUT_DIR SCHEDULES_DIR}
schedules=${2:?usage: measure_pipeline.sh OUT_DIR SCHEDULES_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# NVLink multicast stays off on shared hosts (the device notes): nothing here uses it, and no
# library this program loads may turn it on.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{ nvidia-smi; nvidia-smi topo -m; } > "$out/pipeline_nvidia-smi.txt" 2>&1 || true
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 250 > "$out/pipeline_clocks.csv" 2>/dev/null &
smi=$!
trap 'kill $smi 2>/dev/null || true' EXIT
# BF16 GEMMs on GPU 0 alone first (the BF16 MMA rate the pipeline's GEMMs run at, fitted apart).
CUDA_VISIBLE_DEVICES=0 PYTHONUNBUFFERED=1 python3 "$here/bf16_gemm.py" "$out/bf16_gemm.json" > "$out/bf16_gemm.log" 2>&1 ||
  echo "bf16_gemm.py failed: see bf16_gemm.log" >&2
PYTHONUNBUFFERED=1 python3 "$here/pipeline_step.py" "$schedules" "$out/pipeline_step.json" \
  --trace dualpipe_pp2_m08 --trace-out "$out/kineto_pipeline_dualpipe_m08.json" 2>&1 | tee "$out/pipeline_step.log"
