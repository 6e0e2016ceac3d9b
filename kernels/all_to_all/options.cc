#include "all_to_all/options.h"

#include <cstdio>
#include <cstdlib>

#include "common/args.h"

namespace cs::kernels::a2a {

using cs::kernels::parse_int;
using cs::kernels::split_commas;

const char* kernel_name(Kernel k) { return k == Kernel::kTiled ? "tiled" : "simple"; }

void print_usage(const char* program, int schema_version) {
  std::printf(
      "usage: %s [options]\n"
      "All-to-all between all visible GPUs (one process, peer access): our NVLink kernels on k CTAs and,\n"
      "when built with NCCL, grouped ncclSend/ncclRecv limited to k CTAs. Payloads are checked first.\n"
      "  --json PATH       also write JSON (schema_version %d)\n"
      "  --ks LIST         CTA counts, default 2,4,8,12,16,20,24,32,48\n"
      "  --modes LIST      dispatch_fp8,combine_bf16 (default both)\n"
      "  --min-mib N --max-mib N   bytes per GPU, default 1 .. 1024\n"
      "  --factor N        size step, 2 (default) or 4\n"
      "  --impl LIST       ours,nccl (default both; nccl only where built with it)\n"
      "  --warmup N        untimed runs (default 3)\n"
      "  --target-ms X     timed work per case (default 40)\n"
      "  --kernel K        ours: tiled (default) or simple (the first kernel, for comparison)\n"
      "  --granule-kib N   tiled: each CTA's slice of a chunk is whole granules of N KiB (default 4; 0: 16 B)\n"
      "  --self-ctas N     tiled: min(N, k/2) CTAs copy the local chunk alone, the others the peers';\n"
      "                    0: every CTA copies its slice of every chunk (default: the kernel's rule,\n"
      "                    ceil(8/(n-1)) CTAs of their own once k >= 16)\n"
      "  --only WHAT       diagnostics: timed launches copy only the peers' chunks or only the local one\n"
      "                    (impl ours-peers / ours-self; the check still runs a whole all-to-all)\n"
      "  --compact         JSON on one line\n",
      program, schema_version);
}

std::string parse_args(int argc, char** argv, Options& o, bool& help) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") { help = true; return ""; }
    if (a == "--compact") { o.compact = true; continue; }
    if (i + 1 >= argc) return "'" + a + "' needs a value";
    const std::string v = argv[++i];
    long x = 0;
    if (a == "--json") {
      o.json_path = v;
    } else if (a == "--ks") {
      o.ks.clear();
      for (const auto& t : split_commas(v)) {
        if (!parse_int(t, 1, 1024, x)) return "bad k '" + t + "'";
        o.ks.push_back(static_cast<int>(x));
      }
    } else if (a == "--modes") {
      o.modes.clear();
      for (const auto& t : split_commas(v)) {
        if (t == "dispatch_fp8") o.modes.push_back(Mode::kDispatchFp8);
        else if (t == "combine_bf16") o.modes.push_back(Mode::kCombineBf16);
        else return "unknown mode '" + t + "'";
      }
    } else if (a == "--min-mib" || a == "--max-mib") {
      if (!parse_int(v, 1, 65536, x)) return "bad " + a + " '" + v + "'";
      (a == "--min-mib" ? o.min_bytes : o.max_bytes) = static_cast<unsigned long long>(x) << 20;
    } else if (a == "--factor") {
      if (!parse_int(v, 2, 4, x) || x == 3) return "--factor wants 2 or 4";
      o.size_factor = static_cast<int>(x);
    } else if (a == "--impl") {
      o.ours = o.nccl = false;
      for (const auto& t : split_commas(v)) {
        if (t == "ours") o.ours = true;
        else if (t == "nccl") o.nccl = true;
        else return "unknown impl '" + t + "'";
      }
    } else if (a == "--warmup") {
      if (!parse_int(v, 0, 1000, x)) return "bad --warmup";
      o.warmup = static_cast<int>(x);
    } else if (a == "--target-ms") {
      o.target_ms = std::strtod(v.c_str(), nullptr);
      if (!(o.target_ms > 0)) return "bad --target-ms";
    } else if (a == "--kernel") {
      if (v == "tiled") o.kernel = Kernel::kTiled;
      else if (v == "simple") o.kernel = Kernel::kSimple;
      else return "unknown kernel '" + v + "'";
    } else if (a == "--granule-kib") {
      if (!parse_int(v, 0, 1024, x)) return "--granule-kib wants 0 .. 1024";
      o.granule_kib = static_cast<int>(x);
    } else if (a == "--self-ctas") {
      if (!parse_int(v, 0, 1024, x)) return "--self-ctas wants 0 .. 1024";
      o.self_ctas = static_cast<int>(x);
    } else if (a == "--only") {
      if (v == "all") o.only = Only::kAll;
      else if (v == "peers") o.only = Only::kPeers;
      else if (v == "self") o.only = Only::kSelf;
      else return "--only wants all, peers or self";
    } else {
      return "unknown argument '" + a + "'";
    }
  }
  if (o.min_bytes > o.max_bytes) return "--min-mib is above --max-mib";
  return "";
}

}  // namespace cs::kernels::a2a
