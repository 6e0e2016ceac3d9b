// A training step's time, rank by rank, in the categories of DeepSeek's step breakdown (ISCA'25
// "Insights into DeepSeek-V3", Table 4): warm-up forward, steady phase (1F1B), input backward,
// weight backward, optimizer, and the bubble (idle).
//
// Phases follow each rank's schedule: warm-up is every task before its first one that runs a
// backward (less the forward that pairs with a lone first backward, so 1F1B's rank r warms up
// with Megatron's pp-1-r forwards); the steady phase runs from there through its last task that
// runs a forward (and, when that is a lone forward, the backward it pairs with), overlapped
// DualPipe pairs and lone chunks alike; the cool-down is the rest, split into backward tasks (full or input: "input
// backward") and weight tasks ("weight backward"). A task lasts from its
// first op's start to its last op's end on the rank's GPUs, clipped where the previous task of the
// rank still ran (the next chunk's compute may start under the last one's combine); the optimizer
// counts its ops' own time. The gaps (waiting for a neighbour's activations or gradients, or for a
// data-parallel peer), and the time after the rank's optimizer finishes until the step ends, are
// its bubble. So the six parts of each rank sum to the step time exactly.
#pragma once

#include <string>
#include <vector>

#include "models/pipeline_record.h"
#include "sim/executor.h"
#include "sim/op_graph.h"

namespace cs::models {

struct RankStepTimes {
  int rank = 0;
  sim::Time warmup_forward, steady, input_backward, weight_backward, optimizer, bubble;
  sim::Time pipeline_end;  // when its last chunk finished

  sim::Time total() const { return warmup_forward + steady + input_backward + weight_backward + optimizer + bubble; }
};

// The same step split by what each task runs instead of the phase it falls in: DualPipe's four
// chunk kinds (its _forward_chunk, _backward_chunk, _weight_chunk and the overlapped
// _forward_backward_chunk), wherever in the schedule they run. Table 4's 1F, 1B, 1W and 1F1B read
// as time per chunk kind match this split (DualPipe's rank 0 runs 23 lone forwards, 23 lone
// backwards and 15 weight chunks at PP16 and 120 micro-batches, 29 of them in its steady phase).
// Optimizer and bubble are the phase split's.
struct RankChunkTimes {
  int rank = 0;
  sim::Time forward, backward, weight, forward_backward, optimizer, bubble;  // backward: full or input

  sim::Time total() const { return forward + backward + weight + forward_backward + optimizer + bubble; }
};

struct StepBreakdown {
  std::string schedule;
  sim::Time step;
  std::vector<RankStepTimes> ranks;
  RankStepTimes mean;  // each part averaged over the ranks (rank = -1)
  std::vector<RankChunkTimes> by_chunk;  // per rank, as `ranks`
  RankChunkTimes by_chunk_mean;          // rank = -1
};

StepBreakdown step_breakdown(const PipelineRecord& rec, const sim::OpGraph& g, const std::vector<sim::OpTiming>& timing,
                             sim::Time step);

}  // namespace cs::models
