#!/usr/bin/env bash
# One device call's NCCL plan on a host of 2 or more GPUs: nccl_collectives.py over every GPU with
# NCCL's own channel count, then with the count pinned (NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS),
# then over two GPUs with NCCL's own count; the GPUs' summary and topology first.
#   kernels/torch/measure_nccl.sh OUT_DIR [CHANNELS...]   (default channels: 2 4 8 16 20 32)
# Writes OUT_DIR/nccl_collectives.json (every run: its NCCL_* settings, provenance and cases),
# nccl_collectives.log (the console, NCCL's init lines), nccl_channels.txt and nccl_nvidia-smi.txt.
set -uo pipefail
out=${1:?usage: measure_nccl.sh OUT_DIR [CHANNELS...]}
shift
channels=("$@")
[ ${#channels[@]} -gt 0 ] || channels=(2 4 8 16 20 32)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# NVLink multicast stays off on shared hosts (the device notes): NVLS would also be another
# algorithm than the ring this measures.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT PYTHONUNBUFFERED=1
runs=$(mktemp -d)
{ nvidia-smi; nvidia-smi topo -m; } > "$out/nccl_nvidia-smi.txt" 2>&1 || true
n=$(nvidia-smi -L | wc -l)
run() {  # name, then env assignments
  local name=$1
  shift
  echo "== $name: $*" | tee -a "$out/nccl_collectives.log"
  env "$@" python3 "$here/nccl_collectives.py" "$runs/$name.json" >> "$out/nccl_collectives.log" 2>&1 ||
    echo "$name failed (exit $?)" | tee -a "$out/nccl_collectives.log"
}
run "nccl_${n}gpu_default"
for c in "${channels[@]}"; do
  run "nccl_${n}gpu_ch$c" NCCL_MIN_NCHANNELS=$c NCCL_MAX_NCHANNELS=$c
done
[ "$n" -gt 2 ] && run nccl_2gpu_default CUDA_VISIBLE_DEVICES=0,1
# One file of every run, in the order run.
python3 - "$runs" "$out/nccl_collectives.json" <<'PY'
import glob, json, os, sys
runs = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json")), key=os.path.getmtime):
    with open(path) as f:
        doc = json.load(f)
    doc["run"] = os.path.basename(path)[:-5]
    runs.append(doc)
with open(sys.argv[2], "w") as f:
    json.dump({"runs": runs}, f, indent=1)
PY
# The channel counts NCCL took, per run (rank 0's init lines).
grep -E "^== |coll channels|NCCL version" "$out/nccl_collectives.log" > "$out/nccl_channels.txt" || true
