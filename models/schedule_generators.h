// The per-kind generators behind make_schedule (models/pipeline_schedule.cc). Each returns every
// rank's task order for sizes that schedule_problem() accepted.
#pragma once

#include <vector>

#include "models/pipeline_schedule.h"

namespace cs::models::detail {

using RankOrders = std::vector<std::vector<ChunkTask>>;

// With `commits`, also every rank's point-to-point batches (PipelineSchedule::commits).
RankOrders one_f_one_b(int pp, int m,
                       std::vector<std::vector<CommitBatch>>* commits = nullptr);  // models/schedule_1f1b.cc
RankOrders interleaved_1f1b(int pp, int m, int v,
                            std::vector<std::vector<CommitBatch>>* commits = nullptr);  // models/schedule_1f1b.cc
RankOrders zb_h1(int pp, int m);                       // models/schedule_zb1p.cc
// With `commits`, also every rank's point-to-point batches (PipelineSchedule::commits).
RankOrders dualpipe(int pp, int m, std::vector<std::vector<CommitBatch>>* commits = nullptr);  // schedule_dualpipe.cc
RankOrders dualpipe_v(int pp, int m, std::vector<std::vector<CommitBatch>>* commits = nullptr);  // (pp/2 ranks)

}  // namespace cs::models::detail
