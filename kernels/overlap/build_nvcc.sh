#!/usr/bin/env bash
# Builds cs_overlap with nvcc and g++ alone, for a bare GPU machine without the project's other
# dependencies (like fp8_gemm/build_nvcc.sh and all_to_all/build_nvcc.sh).
#
#   kernels/overlap/build_nvcc.sh OUT_DIR [GENERATED_DIR]
set -euo pipefail
out=${1:?usage: build_nvcc.sh OUT_DIR [GENERATED_DIR]}
gen=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)   # kernels/
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$cuda/bin/nvcc}
mkdir -p "$out/obj"
if [[ -z $gen || ! -f $gen/clustersim/version.h ]]; then
  gen=$out/generated
  mkdir -p "$gen/clustersim"
  printf '#pragma once\n#define CLUSTERSIM_GIT_DESCRIBE "unknown"\n#define CLUSTERSIM_VERSION_STRING "unknown"\n' \
    >"$gen/clustersim/version.h"
fi
nvcc_version=$("$nvcc" --version | sed -n 's/.*release [0-9.]*, V\([0-9.]*\).*/\1/p')
cxx_flags=(-std=c++20 -O2 -Wall -Wextra -Wshadow -I"$src" -I"$gen" -I"$cuda/include")
cu_flags=(-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -lineinfo -Xcompiler=-Wall,-Wextra,-Wshadow -I"$src")
pids=()
g++ "${cxx_flags[@]}" -DCS_BUILD_TYPE='"Release"' -DCS_CUDA_ARCHITECTURE='"sm_90a"' \
  -DCS_CUDA_COMPILER_VERSION="\"$nvcc_version\"" -c "$src/common/provenance.cc" -o "$out/obj/provenance.o" &
pids+=($!)
for f in fp8_gemm/sm_partition fp8_gemm/lt_matmul fp8_gemm/timing overlap/green_pair overlap/options; do
  g++ "${cxx_flags[@]}" -c "$src/$f.cc" -o "$out/obj/$(basename $f).o" &
  pids+=($!)
done
for f in fp8_gemm/operands overlap/device_work overlap; do
  "$nvcc" "${cu_flags[@]}" -c "$src/$f.cu" -o "$out/obj/$(basename $f).o" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -o "$out/cs_overlap" "$out"/obj/*.o -L"$cuda/lib64" -lcublasLt -ldl
echo "built $out/cs_overlap"
