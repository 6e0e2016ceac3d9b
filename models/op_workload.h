// Turns an `ops` workload into an op graph: one engine stream per (stream, GPU), repeats expanded,
// collectives spanning the stream's GPUs, `after` references resolved. Unknown references,
// duplicate ids and dependency cycles (a collective counts as one node: its ops finish together)
// are UserErrors at the position of the offending entry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/pipeline_record.h"
#include "models/scenario.h"
#include "sim/op_graph.h"

namespace cs::models {

// Where the file defines each engine op, kept as runs of equal positions: a model workload's tens
// of millions of ops all come from its one `workload:` entry.
class OpPositions {
 public:
  void assign(size_t ops, SourcePos pos);  // `ops` ops, all at `pos`
  void push_back(SourcePos pos);           // the next op
  SourcePos operator[](uint32_t op) const;
  size_t size() const { return ops_; }

 private:
  std::vector<uint32_t> first_;  // per run: its first op
  std::vector<SourcePos> pos_;   // per run: its position
  size_t ops_ = 0;
};

struct OpWorkload {
  sim::OpGraph graph;
  std::vector<std::string> stream_names;              // per workload stream
  std::vector<std::string> stream_partitions;         // its SM partition's name (copy-engine sends hold none of it)
  std::vector<std::vector<uint32_t>> engine_streams;  // per workload stream: one per GPU
  OpPositions op_pos;                                 // per engine op: where the file defines it
  std::optional<PipelineRecord> pipeline;             // whole-step pipeline workloads only
  // Folded and mirrored model workloads: per GPU of the cluster, the simulated GPU whose links
  // stand in for its own (sim/stand_in_routing.h); empty when every GPU is its own.
  std::vector<int> stand_in;
};

OpWorkload build_op_workload(const Scenario& sc);

}  // namespace cs::models
