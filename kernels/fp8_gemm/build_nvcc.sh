#!/usr/bin/env bash
# Builds cs_fp8_gemm with nvcc and g++ alone, for a bare GPU machine that has the CUDA toolkit but
# not the project's other dependencies (the top-level CMake needs yaml-cpp, fmt, Boost, ...).
# The normal build is CMake (kernels/README.md); this one makes the same program.
#
#   kernels/fp8_gemm/build_nvcc.sh OUT_DIR [GENERATED_DIR]
#
# GENERATED_DIR: see common/nvcc_setup.sh.
source "$(dirname "$0")/../common/nvcc_setup.sh"
"$src/fp8_gemm/write_lt_tiles.sh" "$cuda" "$out/obj"
for f in sm_partition lt_matmul lt_algos timing report; do
  g++ "${cxx_flags[@]}" -I"$out/obj" -c "$src/fp8_gemm/$f.cc" -o "$out/obj/$f.o" &
  pids+=($!)
done
"$nvcc" "${cu_flags[@]}" -c "$src/fp8_gemm/operands.cu" -o "$out/obj/operands.o" &
pids+=($!)
"$nvcc" "${cu_flags[@]}" -c "$src/fp8_gemm/clock_probe.cu" -o "$out/obj/clock_probe.o" &
pids+=($!)
"$nvcc" "${cu_flags[@]}" -c "$src/fp8_gemm.cu" -o "$out/obj/fp8_gemm.o" &
pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -o "$out/cs_fp8_gemm" "$out"/obj/*.o -L"$cuda/lib64" -lcublasLt -ldl -lpthread
echo "built $out/cs_fp8_gemm"
