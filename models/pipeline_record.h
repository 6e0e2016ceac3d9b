// What a whole-step pipeline workload emitted, kept beside its op graph so the run can be read
// back as DeepSeek's step breakdown (models/step_breakdown.h): which ops form each rank's chunks,
// in schedule order, and which form its optimizer step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/pipeline_schedule.h"

namespace cs::models {

// One task of a rank's schedule: the ops emitted for it are graph ops [first_op, end_op) that
// lie on the rank's own streams (the pipeline sends emitted with it run on the producer's).
struct ChunkSpan {
  int rank = 0;
  ChunkTask::Kind kind = ChunkTask::kForward;
  uint32_t first_op = 0, end_op = 0;
};

struct PipelineRecord {
  std::string schedule;  // schedule_kind_name
  int ranks = 0;
  std::vector<ChunkSpan> spans;                // per rank in schedule order (ranks interleaved)
  std::vector<std::vector<uint32_t>> streams;  // per rank: its GPUs' compute and comm streams
  // Per rank: the ops of its optimizer step; empty when none ran.
  std::vector<std::vector<uint32_t>> optimizer;
};

}  // namespace cs::models
