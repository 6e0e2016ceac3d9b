// A parallel layout and where its ranks sit.
//
// GPUs = tp x dp x pp. Expert parallelism is carved out of data parallelism: the dp ranks of a
// pipeline stage form dp/ep groups of ep ranks; each group holds every routed expert of the
// stage's layers once (E/ep per rank), and the dp/ep groups are the experts' data-parallel
// replicas. Rank order (Megatron's default): tp fastest, then dp (its ep ranks consecutive), then
// pp, so a TP group stays inside a node, an EP group spans ep*tp/gpus_per_node nodes, and a
// pipeline stage is tp*dp consecutive GPUs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.h"

namespace cs::models {

enum class TpComm : uint8_t { kAllReduce, kReduceScatter };  // kReduceScatter: sequence parallel

struct ParallelLayout {
  int tp = 1, dp = 1, pp = 1, ep = 1;
  int zero_stage = 1;  // 0: every DP rank keeps full optimizer states; 1: sharded over DP (ZeRO-1)
  TpComm tp_comm = TpComm::kAllReduce;
  std::vector<int> layers_per_stage;  // empty: split as evenly as possible (stage_layers())

  int gpus() const { return tp * dp * pp; }
  int expert_dp() const { return dp / ep; }  // replicas of each expert
};

struct RankCoords {
  int tp = 0, dp = 0, pp = 0;
  int ep = 0;   // rank within its EP group
  int edp = 0;  // which EP group of the stage (the experts' data-parallel rank)
  int node = 0, local = 0;
};

// Checks a layout against a model and a cluster; returns an empty string when valid, else what is
// wrong (the caller places the message). `model_stages`: the stages the layers are split over
// (layers_per_stage lists that many, each needs a layer when split evenly); 0 means pp, more when
// a rank holds several (interleaved 1F1B: pp x v; DualPipeV: 2 x pp).
std::string layout_problem(const ParallelLayout& l, const ModelSpec& m, int cluster_gpus, int gpus_per_node,
                           int model_stages = 0);

RankCoords rank_coords(const ParallelLayout& l, int gpu, int gpus_per_node);
int gpu_of(const ParallelLayout& l, int tp, int dp, int pp);

// Layers per pipeline stage (l.pp of them; at most the model's layers unless given): the given split, or the contiguous split (at least one layer per
// stage) that makes the largest stage's forward FLOPs per token smallest, counting the embedding
// on stage 0 and the head and MTP modules on the last stage, at sequence `seq_len` (a pipeline
// runs at the pace of its slowest stage). DeepSeek-V3 on 16 stages: 15 x 4 layers and 1 layer
// beside the head and MTP, as the head and MTP cost about four layers' forward.
std::vector<int> stage_layers(const ParallelLayout& l, const ModelSpec& m, int64_t seq_len = 4096);
int first_layer_of_stage(const std::vector<int>& split, int stage);

// A few lines saying where the ranks sit, e.g. "EP group: 64 GPUs on 8 nodes (GPUs 0-63)".
std::vector<std::string> explain_placement(const ParallelLayout& l, const ModelSpec& m, int gpus_per_node);

}  // namespace cs::models
