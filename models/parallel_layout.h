// A parallel layout and where its ranks sit.
//
// GPUs = tp x cp x dp x pp. Context parallelism (cp) splits each sequence over cp ranks, which
// hold the same weights as data-parallel ranks do: a stage's cp x dp "replicas" all carry the
// dense weights, their gradients are reduced over all of them and ZeRO-1 shards over all of them;
// only the batch is split dp ways. Expert parallelism is carved out of the replicas: they form
// cp*dp/ep groups of ep ranks; each group holds every routed expert of the stage's layers once
// (E/ep per rank), and the groups are the experts' data-parallel replicas. Rank order (Megatron's
// default): tp fastest, then cp, then dp (ep ranks consecutive over both), then pp, so a TP group
// stays inside a node, a CP group is cp*tp consecutive GPUs, an EP group spans ep*tp/gpus_per_node
// nodes, and a pipeline stage is tp*cp*dp consecutive GPUs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.h"

namespace cs::models {

enum class TpComm : uint8_t { kAllReduce, kReduceScatter };  // kReduceScatter: sequence parallel

struct ParallelLayout {
  int tp = 1, dp = 1, pp = 1, ep = 1;
  int cp = 1;  // context parallelism: ranks sharing one sequence (load-balanced causal halves)
  int zero_stage = 1;  // 0: every DP rank keeps full optimizer states; 1: sharded over DP (ZeRO-1)
  TpComm tp_comm = TpComm::kAllReduce;
  std::vector<int> layers_per_stage;  // empty: split as evenly as possible (stage_layers())

  int gpus() const { return tp * cp * dp * pp; }
  int replicas() const { return cp * dp; }         // ranks of a stage (per TP rank) with the same weights
  int expert_dp() const { return replicas() / ep; }  // replicas of each expert
};

struct RankCoords {
  int tp = 0, pp = 0;
  int dp = 0;   // the rank among the stage's cp x dp weight replicas (not the batch shard)
  int cp = 0;   // rank within its CP group (dp % cp)
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
// `dp`: the rank among the stage's cp x dp replicas, as in RankCoords.
int gpu_of(const ParallelLayout& l, int tp, int dp, int pp);

// Forward model FLOPs of one sequence per layer (a dense or an MoE layer costing its kind's), and
// what the last stage adds besides its layers (final norm, head and MTP modules), at `seq_len`.
struct LayerCosts {
  std::vector<double> layer;
  double tail = 0;
};
LayerCosts forward_layer_costs(const ModelSpec& m, int64_t seq_len);
// Forward FLOPs per stage of `split` (its layers summing to costs.layer's), the tail on the last.
std::vector<double> stage_loads(const std::vector<int>& split, const LayerCosts& costs);

// Layers per pipeline stage (l.pp of them; at most the model's layers unless given): the given split, or the contiguous split (at least one layer per
// stage) that makes the largest stage's forward FLOPs per token smallest, counting the embedding
// on stage 0 and the head and MTP modules on the last stage, at sequence `seq_len` (a pipeline
// runs at the pace of its slowest stage). DeepSeek-V3 on 16 stages: 15 x 4 layers and 1 layer
// beside the head and MTP, as the head and MTP cost about four layers' forward.
std::vector<int> stage_layers(const ParallelLayout& l, const ModelSpec& m, int64_t seq_len = 4096);
int first_layer_of_stage(const std::vector<int>& split, int stage);

// The layout in one line, e.g. "tp 1, cp 8, dp 16, pp 16, ep 64, ZeRO-1" (cp only when above 1).
std::string layout_text(const ParallelLayout& l);

// A few lines saying where the ranks sit, e.g. "EP group: 64 GPUs on 8 nodes (GPUs 0-63)".
// `split`: the layers per model stage the run uses (workload_stage_layers: over pp x v stages for
// interleaved 1F1B, at the run's sequence length); empty: stage_layers(l, m). `over_ranks`: the
// split evens out the ranks' loads (rank_split.h).
std::vector<std::string> explain_placement(const ParallelLayout& l, const ModelSpec& m, int gpus_per_node,
                                           const std::vector<int>& split = {}, bool over_ranks = false);

}  // namespace cs::models
