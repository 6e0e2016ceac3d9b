#include "overlap/options.h"

#include <cstdio>
#include <cstdlib>

#include "common/args.h"

namespace cs::kernels::overlap {

namespace fg = cs::kernels::fp8_gemm;

void print_usage() {
  std::printf(
      "usage: %s [options]\n"
      "FP8 GEMMs on 132-k SMs and our all-to-all on k SMs (green contexts of one split), on every GPU:\n"
      "each alone, then together; every result checked before it is timed.\n"
      "  --json PATH       also write JSON (schema_version %d) to PATH\n"
      "  --ks LIST         all-to-all SMs, default 0,4,8,12,16,20,24,32,48 (0: the GEMM alone on all SMs)\n"
      "  --shapes LIST     grouped (4 x 8192 x 4096 x 7168), dense (8192 x 4096 x 7168); default both\n"
      "  --a2a-mib N       all-to-all bytes per GPU, MiB (default 256)\n"
      "  --window-ms X     each stream's work alone per window (default 30)\n"
      "  --reps N          windows of each kind per case (default 5)\n"
      "  --compact         JSON on one line\n"
      "  --sample-clocks   GPU 0's SM clock, power and power-cap state (NVML, every ms) over every window;\n"
      "                    each case gets its GEMM-alone, all-to-all-alone and together windows' clocks\n"
      "  --profile-ranges  wrap the first rep's GEMM-alone, all-to-all-alone and together windows of each\n"
      "                    k > 0 in cudaProfilerStart/Stop (three ranges per k, in that order), for\n"
      "                    ncu --replay-mode app-range (kernels/overlap/measure_dram_ranges.sh)\n",
      kProgram, kSchemaVersion);
}

std::string parse_args(int argc, char** argv, Options& o, bool& help) {
  using cs::kernels::parse_int;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") { help = true; return ""; }
    if (a == "--compact") { o.compact = true; continue; }
    if (a == "--profile-ranges") { o.profile_ranges = true; continue; }
    if (a == "--sample-clocks") { o.sample_clocks = true; continue; }
    if (i + 1 >= argc) return "'" + a + "' needs a value";
    const std::string v = argv[++i];
    if (a == "--json") {
      o.json_path = v;
    } else if (a == "--ks") {
      o.ks.clear();
      for (const auto& t : cs::kernels::split_commas(v)) {
        int k = 0;
        if (!parse_int(t, 0, 120, k)) return "bad k '" + t + "'";
        o.ks.push_back(k);
      }
    } else if (a == "--shapes") {
      o.shapes = cs::kernels::split_commas(v);
      for (const auto& s : o.shapes)
        if (s != "grouped" && s != "dense") return "unknown shape '" + s + "'";
    } else if (a == "--a2a-mib") {
      if (!parse_int(v, 1, 4096, o.a2a_mib)) return "bad --a2a-mib '" + v + "'";
    } else if (a == "--window-ms") {
      o.window_ms = std::atof(v.c_str());
      if (!(o.window_ms >= 1 && o.window_ms <= 1000)) return "bad --window-ms '" + v + "'";
    } else if (a == "--reps") {
      if (!parse_int(v, 1, 100, o.reps)) return "bad --reps '" + v + "'";
    } else {
      return "unknown argument '" + a + "'";
    }
  }
  return "";
}

fg::GemmShape make_shape(const std::string& name) {
  if (name == "grouped") {
    fg::GemmShape s = fg::deepgemm_grouped_shapes()[0];  // 4 x m=8192, n=4096, k=7168
    s.name = "grouped.4x8192x4096x7168";
    return s;
  }
  return {"dense.8192x4096x7168",
          "one DeepSeek-V3 expert's gate and up (7168 -> 2 x 2048) over 8192 tokens, as one dense GEMM", 8192, 4096,
          7168, 1};
}

}  // namespace cs::kernels::overlap
