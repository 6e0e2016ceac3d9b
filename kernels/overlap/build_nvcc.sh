#!/usr/bin/env bash
# Builds cs_overlap with nvcc and g++ alone, for a bare GPU machine without the project's other
# dependencies (like fp8_gemm/build_nvcc.sh and all_to_all/build_nvcc.sh).
#
#   kernels/overlap/build_nvcc.sh OUT_DIR [GENERATED_DIR]
source "$(dirname "$0")/../common/nvcc_setup.sh"
"$src/fp8_gemm/write_lt_tiles.sh" "$cuda" "$out/obj"
for f in fp8_gemm/sm_partition fp8_gemm/lt_matmul fp8_gemm/lt_algos fp8_gemm/timing overlap/green_pair overlap/options overlap/report; do
  g++ "${cxx_flags[@]}" -I"$out/obj" -c "$src/$f.cc" -o "$out/obj/$(basename $f).o" &
  pids+=($!)
done
for f in fp8_gemm/operands fp8_gemm/clock_probe overlap/device_work overlap; do
  "$nvcc" "${cu_flags[@]}" -c "$src/$f.cu" -o "$out/obj/$(basename $f).o" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -o "$out/cs_overlap" "$out"/obj/*.o -L"$cuda/lib64" -lcublasLt -ldl -lpthread
echo "built $out/cs_overlap"
