// The HBM bytes a tiled GEMM really moves: its operands are read once per time they fall out of L2,
// not once (calibrate/data/h100/fp8_gemm_dram_bytes.json: 4096 x 7168 x 16384 reads 4.5 times
// A and B under Nsight Compute; 4096 x 7168 x 2048, whose operands fit in L2, 1.3 times).
//
// The kernel is persistent: `sms` CTAs take output tiles (`tile`: cuBLASLt's 128 x 128 unless
// given) in raster order, a wave of `sms` tiles at a time. The raster walks the n-tiles in bands
// of `swizzle_n_blocks`: within a band, n fastest, then m (DeepGEMM's and, by our Nsight Compute
// counts, cuBLASLt's Hopper schedule; groups one after another). Every tile streams its A row
// panel (tile m x k) and B column panel (k x tile n) through L2; the tiles of one wave stream
// together, so a panel the wave shares is read once while its lines outlive the wave's spread of
// phases (below). L2 is an LRU cache of `l2_bytes` over whole panels and the wave's output tiles
// (written back through it): a panel still cached when a later wave needs it costs nothing. C is
// written once. Groups run one after another and share no panel: each reads what one does.
// Split-K (small-m shapes) and partial edge output tiles are not modelled.
//
// A wave's tiles do not read a shared panel at one instant: they run out of phase, their phases
// spread over a span S (a profile's `l2_wave_skew` tile times), and every read of a line keeps it
// in L2 for its residency T (the L2 it holds over the rate lines come in). A tile whose read of a
// shared panel comes more than one residency after the last read fetches it again. Alone, the
// overlap bench's GEMMs keep a line about twice S and lose nothing; beside a heavy copy they do
// not (calibrate/data/h200/overlap_dram_ranges.json: 1.7 times their bytes beside a 48-SM copy),
// and a GEMM of long tiles and a high rate can lose some alone. With n
// readers at phases uniform over the spread S, the expected fetches beyond the first are
// (n - 1)(1 - T/S)^n for T < S (of n uniform points, each of the n - 1 gaps exceeds T with
// probability (1 - T/S)^n).
#pragma once

#include <limits>

#include "hw/gemm_model.h"
#include "sim/op_graph.h"

namespace cs::hw {

struct GemmTrafficParams {
  int swizzle_n_blocks = 0;  // n-tiles per raster band; 0: no traffic model (compulsory bytes)
  double l2_bytes = 0;       // L2 one kernel's operands can reuse
  // A line's L2 residency over the spread of a wave's tile phases (T / S above); >= 1 or not
  // finite: a panel the wave shares is read once.
  double residency_over_skew = std::numeric_limits<double>::infinity();
  bool present() const { return swizzle_n_blocks > 0 && l2_bytes > 0; }
};

// HBM bytes read and written by `g` on `sms` SMs (>= 1); the compulsory bytes when `p` is absent.
// Never below the compulsory bytes. Costs O(tiles of one group) time, and is not run past 2^20
// tiles per group (compulsory bytes then); callers cache it.
double gemm_dram_bytes(const sim::GemmShape& g, int sms, const GemmTrafficParams& p, GemmTile tile = {});

}  // namespace cs::hw
