#!/usr/bin/env bash
# Builds cs_all_to_all with nvcc and g++ alone, for a bare GPU machine without the project's other
# dependencies (like fp8_gemm/build_nvcc.sh). NCCL is used when NCCL_HOME (include/nccl.h,
# lib/libnccl.so*) is set or the pip package nvidia-nccl-cu13 is found by python3.
#
#   kernels/all_to_all/build_nvcc.sh OUT_DIR [GENERATED_DIR]
source "$(dirname "$0")/../common/nvcc_setup.sh"
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
g++ "${cxx_flags[@]}" -c "$src/all_to_all/options.cc" -o "$out/obj/options.o"
"$nvcc" "${cu_flags[@]}" "${nccl_flags[@]}" -c "$src/all_to_all.cu" -o "$out/obj/all_to_all.o"
for p in "${pids[@]}"; do wait "$p"; done
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -o "$out/cs_all_to_all" "$out"/obj/all_to_all.o "$out"/obj/provenance.o "$out"/obj/nvml.o "$out"/obj/options.o \
  "${nccl_libs[@]}" -ldl
echo "built $out/cs_all_to_all"
