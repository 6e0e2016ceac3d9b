// Layer splits for pipelines whose ranks hold several model stages: interleaved 1F1B (rank r holds
// stages r, r + pp, ...), DualPipe (stage r of one model copy and pp-1-r of the other) and
// DualPipeV (r and 2pp-1-r). The split that makes the largest stage smallest (stage_layers) can
// leave those ranks far apart: DeepSeek-V3's last stage (a layer beside the head and MTP, about
// four layers' forward) caps every stage at four layers, so over 32 stages it fills the back ones
// to four and leaves 21 at the front with one, and interleaved at PP16 puts five layers on ranks
// 6 to 14 and two on ranks 0 to 4. A rank runs every chunk of every stage it holds, so the ranks'
// loads, not the stages', pace such a pipeline.
#pragma once

#include <functional>
#include <vector>

#include "models/parallel_layout.h"

namespace cs::models {

// Each rank's load: the forward FLOPs (stage_loads) of the stages `stages_of_rank` lists for it.
std::vector<double> rank_loads(const std::vector<int>& split, const std::vector<std::vector<int>>& stages_of_rank,
                               const LayerCosts& costs);

// From `split`, moves one layer at a time from one stage to another (the stages between keep their
// counts and shift by a layer): each time the move after which the ranks' loads, sorted from the
// largest, compare smallest (the busiest rank first, then the next busiest, ...), as long as they
// are smaller than before the move. Every stage keeps a layer, and a move `allowed` refuses (a
// rank's memory) is not taken. Deterministic: among moves that leave equal loads, the one from the
// first stage, then to the first stage.
std::vector<int> balance_rank_loads(std::vector<int> split, const std::vector<std::vector<int>>& stages_of_rank,
                                    const LayerCosts& costs,
                                    const std::function<bool(const std::vector<int>&)>& allowed);

}  // namespace cs::models
