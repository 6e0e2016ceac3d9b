// Turns an `ops` workload into an op graph: one engine stream per (stream, GPU), repeats expanded,
// collectives spanning the stream's GPUs, `after` references resolved. Unknown references,
// duplicate ids and dependency cycles (a collective counts as one node: its ops finish together)
// are UserErrors at the position of the offending entry.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/pipeline_record.h"
#include "models/scenario.h"
#include "sim/op_graph.h"

namespace cs::models {

struct OpWorkload {
  sim::OpGraph graph;
  std::vector<std::string> stream_names;              // per workload stream
  std::vector<std::string> stream_partitions;         // its SM partition's name (copy-engine sends hold none of it)
  std::vector<std::vector<uint32_t>> engine_streams;  // per workload stream: one per GPU
  std::vector<SourcePos> op_pos;                      // per engine op: where the file defines it
  std::optional<PipelineRecord> pipeline;             // whole-step pipeline workloads only
};

OpWorkload build_op_workload(const Scenario& sc);

}  // namespace cs::models
