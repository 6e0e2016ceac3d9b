#!/usr/bin/env bash
# Writes DIR/lt_tiles.inc, {id, rows, cols} of every CUBLASLT_MATMUL_TILE_<rows>x<cols> in the
# toolkit's cublasLt.h (fp8_gemm/lt_algos.cc), as kernels/CMakeLists.txt does: for the
# build_nvcc.sh scripts.
#
#   kernels/fp8_gemm/write_lt_tiles.sh CUDA_HOME DIR
set -euo pipefail
sed -n 's/^ *CUBLASLT_MATMUL_TILE_\([0-9]*\)x\([0-9]*\) = \([0-9]*\),.*/{\3, \1, \2},/p' "$1/include/cublasLt.h" >"$2/lt_tiles.inc"
