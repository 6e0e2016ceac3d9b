#!/usr/bin/env bash
# Builds cs_all_to_all (build_nvcc.sh) and runs the whole sweep on every visible GPU: ours and NCCL,
# k in {2, 4, 8, 12, 16, 20, 24, 32, 48}, 1 MiB .. 1 GiB per GPU, both payloads. Writes
# OUT_DIR/all_to_all.json and OUT_DIR/all_to_all.log (the command, nvidia-smi topo -m, the build,
# stdout, stderr), as committed under calibrate/data/h200/. With CS_A2A_VARIANTS=1 it also writes
# OUT_DIR/all_to_all_variants.log: our kernel's variants and diagnostics (the first kernel, no
# local-copy CTAs, unaligned slices, NVLink alone, the local copy alone) at 256 MiB and 1 GiB, and
# small sizes, as README.md's cs_all_to_all section quotes them.
#
#   kernels/all_to_all/measure.sh OUT_DIR [GENERATED_DIR] [cs_all_to_all options...]
#
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and the other variables the device notes name).
set -uo pipefail
out=${1:?usage: measure.sh OUT_DIR [GENERATED_DIR] [options...]}
gen=${2:-}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$out"
bin=${TMPDIR:-/tmp}/cs_a2a_build
log=$out/all_to_all.log
gpus="$(nvidia-smi --query-gpu=count --format=csv,noheader | head -1) x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
cmd="kernels/all_to_all/build_nvcc.sh $bin $gen && $bin/cs_all_to_all --json all_to_all.json --target-ms 25 $*"
{
  echo "# cs_all_to_all on $gpus, $(date -u +%F); command: $cmd"
  echo "## nvidia-smi topo -m"
  nvidia-smi topo -m
  echo "## build"
} >"$log" 2>&1
"$here/build_nvcc.sh" "$bin" "$gen" >>"$log" 2>&1 || { echo "build failed" >>"$log"; exit 1; }
"$bin/cs_all_to_all" --json "$out/all_to_all.json" --target-ms 25 "$@" >"$out/stdout.txt" 2>"$out/stderr.txt"
rc=$?
{
  echo "## stdout"
  cat "$out/stdout.txt"
  echo "## stderr"
  cat "$out/stderr.txt"
  echo "## exit code $rc"
} >>"$log"
rm -f "$out/stdout.txt" "$out/stderr.txt"
[[ $rc == 0 && ${CS_A2A_VARIANTS:-} == 1 ]] || exit $rc

vlog=$out/all_to_all_variants.log
big="--modes dispatch_fp8 --target-ms 25 --min-mib 256 --max-mib 1024 --factor 4 --impl ours"
small="--modes dispatch_fp8 --target-ms 25 --max-mib 64 --factor 4 --ks 2,8,20,48 --impl ours"
echo "# cs_all_to_all variants on $gpus, $(date -u +%F), the binary of all_to_all.log; each section: its options, then stderr (impl mode k size count type time_us algbw busbw)" >"$vlog"
for v in "" "--kernel simple" "--self-ctas 0" "--self-ctas 8" "--granule-kib 0" "--only peers" \
         "--only peers --self-ctas 0" "--only self --self-ctas 0"; do
  echo "## $big $v" >>"$vlog"
  # shellcheck disable=SC2086
  "$bin/cs_all_to_all" $big $v >/dev/null 2>>"$vlog" || { echo "## exit code $?" >>"$vlog"; exit 1; }
done
for v in "" "--kernel simple"; do
  echo "## $small $v" >>"$vlog"
  # shellcheck disable=SC2086
  "$bin/cs_all_to_all" $small $v >/dev/null 2>>"$vlog" || { echo "## exit code $?" >>"$vlog"; exit 1; }
done
