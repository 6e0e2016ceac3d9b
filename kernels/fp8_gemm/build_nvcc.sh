#!/usr/bin/env bash
# Builds cs_fp8_gemm with nvcc and g++ alone, for a bare GPU machine that has the CUDA toolkit but
# not the project's other dependencies (the top-level CMake needs yaml-cpp, fmt, Boost, ...).
# The normal build is CMake (kernels/README.md); this one makes the same program.
#
#   kernels/fp8_gemm/build_nvcc.sh OUT_DIR [GENERATED_DIR]
#
# GENERATED_DIR holds clustersim/version.h (the git commit stamped by a CMake build here, e.g.
# build/generated); without it the commit reads "unknown".
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
cu_flags=(-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -lineinfo -Xcompiler=-Wall,-Wextra,-Wshadow
          -I"$src")
pids=()
g++ "${cxx_flags[@]}" -DCS_BUILD_TYPE='"Release"' -DCS_CUDA_ARCHITECTURE='"sm_90a"' \
  -DCS_CUDA_COMPILER_VERSION="\"$nvcc_version\"" -c "$src/common/provenance.cc" -o "$out/obj/provenance.o" &
pids+=($!)
for f in sm_partition lt_matmul timing report; do
  g++ "${cxx_flags[@]}" -c "$src/fp8_gemm/$f.cc" -o "$out/obj/$f.o" &
  pids+=($!)
done
"$nvcc" "${cu_flags[@]}" -c "$src/fp8_gemm/operands.cu" -o "$out/obj/operands.o" &
pids+=($!)
"$nvcc" "${cu_flags[@]}" -c "$src/fp8_gemm.cu" -o "$out/obj/fp8_gemm.o" &
pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -o "$out/cs_fp8_gemm" "$out"/obj/*.o -L"$cuda/lib64" -lcublasLt -ldl
echo "built $out/cs_fp8_gemm"
