# Sourced by the measurement plans (measure_gpu.sh, fp8_gemm/measure_clocks.sh, fp8_gemm/measure_tiles.sh,
# overlap/measure_clocks.sh) with their own arguments OUT_DIR [GENERATED_DIR]. Sets `out`, `gen`
# (an array: empty, or the folder holding clustersim/version.h), `bin` (a fresh temporary folder for
# the programs built) and `failed=0`; makes OUT_DIR and writes the GPU's state there before
# anything runs (nvidia-smi.txt).
out=${1:?usage: $(basename "$0") OUT_DIR [GENERATED_DIR]}
gen=(${2:+"$2"})
bin=$(mktemp -d)
failed=0
mkdir -p "$out"
"$(dirname "${BASH_SOURCE[0]}")/gpu_snapshot.sh" "$out/nvidia-smi.txt"
