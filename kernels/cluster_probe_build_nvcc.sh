#!/usr/bin/env bash
# Builds cs_cluster_probe with nvcc and g++ alone, for a bare GPU machine (as fp8_gemm/build_nvcc.sh).
#
#   kernels/cluster_probe_build_nvcc.sh OUT_DIR [GENERATED_DIR]
source "$(dirname "$0")/common/nvcc_setup.sh"
g++ "${cxx_flags[@]}" -c "$src/fp8_gemm/sm_partition.cc" -o "$out/obj/sm_partition.o" &
pids+=($!)
"$nvcc" "${cu_flags[@]}" -c "$src/cluster_probe.cu" -o "$out/obj/cluster_probe.o" &
pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -o "$out/cs_cluster_probe" "$out"/obj/provenance.o "$out"/obj/nvml.o \
  "$out"/obj/sm_partition.o "$out"/obj/cluster_probe.o -ldl
echo "built $out/cs_cluster_probe"
