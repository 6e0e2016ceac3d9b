#!/usr/bin/env bash
# Builds cs_all_to_all with nvcc and g++ alone, for a bare GPU machine without the project's other
# dependencies (like fp8_gemm/build_nvcc.sh). NCCL is used when NCCL_HOME (include/nccl.h,
# lib/libnccl.so*) is set or the pip package nvidia-nccl-cu13 is found by python3.
#
#   kernels/all_to_all/build_nvcc.sh OUT_DIR [GENERATED_DIR]
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
nccl=${NCCL_HOME:-$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null || true)}
nccl_flags=() nccl_libs=()
if [[ -n $nccl && -f $nccl/include/nccl.h ]]; then
  lib=$(ls "$nccl"/lib/libnccl.so* | head -1)
  nccl_flags=(-DCS_HAVE_NCCL -I"$nccl/include")
  mkdir -p "$out/lib" && ln -sf "$lib" "$out/lib/libnccl.so"   # the pip wheel has only libnccl.so.2
  nccl_libs=(-L"$out/lib" -lnccl -Xlinker -rpath="$nccl/lib")
  echo "NCCL: $nccl ($lib)"
else
  echo "NCCL not found: building without it"
fi
nvcc_version=$("$nvcc" --version | sed -n 's/.*release [0-9.]*, V\([0-9.]*\).*/\1/p')
g++ -std=c++20 -O2 -Wall -Wextra -Wshadow -I"$src" -I"$gen" -I"$cuda/include" -DCS_BUILD_TYPE='"Release"' \
  -DCS_CUDA_ARCHITECTURE='"sm_90a"' -DCS_CUDA_COMPILER_VERSION="\"$nvcc_version\"" \
  -c "$src/common/provenance.cc" -o "$out/obj/provenance.o" &
pid=$!
g++ -std=c++20 -O2 -Wall -Wextra -Wshadow -I"$src" -c "$src/all_to_all/options.cc" -o "$out/obj/options.o"
"$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -lineinfo -Xcompiler=-Wall,-Wextra,-Wshadow \
  -I"$src" "${nccl_flags[@]}" -c "$src/all_to_all.cu" -o "$out/obj/all_to_all.o"
wait "$pid"
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -o "$out/cs_all_to_all" "$out"/obj/all_to_all.o "$out"/obj/provenance.o "$out"/obj/options.o \
  "${nccl_libs[@]}" -ldl
echo "built $out/cs_all_to_all"
