# Sourced by the kernels' build_nvcc.sh scripts (a bare GPU machine: nvcc and g++, none of the
# project's other dependencies). From the script's arguments OUT_DIR [GENERATED_DIR] it sets
#   out, gen, src (kernels/), cuda, nvcc, nvcc_version, cxx_flags, cu_flags
# and starts the shared objects (provenance, NVML, clock sampler) in the background, their pids in `pids`.
# GENERATED_DIR holds clustersim/version.h (the git commit a CMake build stamped, e.g.
# build/generated); without it the commit reads "unknown".
set -euo pipefail
out=${1:?usage: build_nvcc.sh OUT_DIR [GENERATED_DIR]}
gen=${2:-}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)   # kernels/
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
for f in nvml clock_sampler; do
  g++ "${cxx_flags[@]}" -c "$src/common/$f.cc" -o "$out/obj/$f.o" &
  pids+=($!)
done
