// cs_overlap's command line and the GEMM shapes it runs (host code).
#pragma once

#include <string>
#include <vector>

#include "fp8_gemm/shapes.h"

namespace cs::kernels::overlap {

inline constexpr int kSchemaVersion = 1;
inline constexpr const char* kProgram = "cs_overlap";

struct Options {
  std::string json_path;
  std::vector<int> ks = {0, 4, 8, 12, 16, 20, 24, 32, 48};
  std::vector<std::string> shapes = {"grouped", "dense"};
  int a2a_mib = 256;
  double window_ms = 30;
  int reps = 5;
  bool compact = false;
  bool sample_clocks = false;  // GPU 0's SM clock and power per window (NVML, every ms)
  // Wraps the first rep's GEMM-alone, all-to-all-alone and together windows of every k > 0 in
  // cudaProfilerStart/Stop, in that order: three ranges per k for `ncu --replay-mode app-range`.
  bool profile_ranges = false;
};

void print_usage();
// Empty on success, else what is wrong; `help` set for --help.
std::string parse_args(int argc, char** argv, Options& o, bool& help);
// "grouped" (4 x 8192 x 4096 x 7168, DeepGEMM's first grouped shape) or "dense".
fp8_gemm::GemmShape make_shape(const std::string& name);

}  // namespace cs::kernels::overlap
