// cs_all_to_all's payload modes and command-line options (host code).
#pragma once

#include <string>
#include <vector>

namespace cs::kernels::a2a {

// FP8 dispatch moves 1-byte elements, BF16 combine 2-byte ones; both move the same bytes.
enum class Mode { kDispatchFp8, kCombineBf16 };
// Our kernels (copy_kernels.cuh): the default one, and the first one for comparison.
enum class Kernel { kTiled, kSimple };
// Diagnostics: which destinations the timed launches copy (the check always runs a whole one).
enum class Only { kAll, kPeers, kSelf };
inline const char* mode_name(Mode m) { return m == Mode::kDispatchFp8 ? "dispatch_fp8" : "combine_bf16"; }
inline int elem_bytes(Mode m) { return m == Mode::kDispatchFp8 ? 1 : 2; }

struct Options {
  std::string json_path;
  std::vector<int> ks = {2, 4, 8, 12, 16, 20, 24, 32, 48};
  std::vector<Mode> modes = {Mode::kDispatchFp8, Mode::kCombineBf16};
  unsigned long long min_bytes = 1ull << 20, max_bytes = 1ull << 30;
  int size_factor = 2;
  bool ours = true, nccl = true, compact = false;
  int warmup = 3;
  double target_ms = 40.0;  // timed work per case, split into iters (3..200)
  Kernel kernel = Kernel::kTiled;
  int granule_kib = 4;  // tiled: slices are whole granules; 0: 16 bytes (diagnostics)
  int self_ctas = -1;   // tiled: -1 the kernel's rule; 0 never; N > 0: min(N, k/2) CTAs copy the local chunk alone
  Only only = Only::kAll;
};

const char* kernel_name(Kernel k);
void print_usage(const char* program, int schema_version);
// Returns an error message, empty when the arguments are good; sets `help` for --help.
std::string parse_args(int argc, char** argv, Options& o, bool& help);

}  // namespace cs::kernels::a2a
