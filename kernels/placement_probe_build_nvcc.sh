#!/usr/bin/env bash
# Builds cs_placement_probe with nvcc and g++ alone, for a bare GPU machine (as fp8_gemm/build_nvcc.sh).
#
#   kernels/placement_probe_build_nvcc.sh OUT_DIR [GENERATED_DIR]
source "$(dirname "$0")/common/nvcc_setup.sh"
g++ "${cxx_flags[@]}" -c "$src/fp8_gemm/sm_partition.cc" -o "$out/obj/sm_partition.o" &
pids+=($!)
"$nvcc" "${cu_flags[@]}" -c "$src/placement_probe.cu" -o "$out/obj/placement_probe.o" &
pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -o "$out/cs_placement_probe" "$out"/obj/provenance.o "$out"/obj/nvml.o \
  "$out"/obj/sm_partition.o "$out"/obj/placement_probe.o -ldl -lpthread
echo "built $out/cs_placement_probe"
