// The `model` workload: a model of the zoo (or the user's) in a parallel layout, run on the engine
// as the op graphs of one pipeline stage: every GPU of the stage runs its layers' forward and
// backward ops for a number of micro-batches, compute ops on the compute partition's stream and
// the MoE all-to-alls and TP collectives on the communication partition's stream, so the two
// overlap where the data allow it (the shared expert runs while the dispatch is in flight). The
// pipeline schedule across stages comes with the schedule generators; this workload measures a
// stage's chunks and checks that the layout fits in memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "hw/yaml_reader.h"
#include "models/memory_model.h"
#include "models/model_spec.h"
#include "models/op_workload.h"
#include "models/parallel_layout.h"
#include "models/pipeline_schedule.h"
#include "models/scenario.h"

namespace cs::models {

struct ModelWorkload {
  ModelSpec model;
  ParallelLayout layout;
  int64_t seq_len = 4096;
  int64_t micro_batch = 1;    // sequences per micro-batch (per data-parallel rank)
  int64_t micro_batches = 1;  // run one after another
  int stage = 0;
  bool backward = true;
  // Set: the whole pipeline runs one step in this schedule (`stage` and `micro_batches` unused) on
  // layout.pp ranks: stages = layout.pp (DualPipeV: 2 x layout.pp), the layers split over
  // stages x virtual_stages model stages, and the memory check follows the generated schedule.
  std::optional<ScheduleParams> pipeline;
  // How the pipeline's stage-boundary sends move (`pipeline.p2p`): kernels on the communication
  // partition's SMs (sms, the default) or the copy engine on no SM (copy_engine).
  sim::Mover pipeline_p2p = sim::Mover::kSms;
  bool fp8 = true;
  bool recompute_norm = true;
  bool recompute_mla_up = true;
  bool attention_layout_copies = false;  // implementation.attention_layout_copies (LayerContext's)
  double zipf_exponent = 0;   // expert-load skew; 0: balanced routing
  // The memory check's shape without a pipeline: 1f1b | dualpipe; with one, its name (zb1p: 1f1b).
  std::string schedule = "1f1b";
  std::string precision = "deepseek_fp8";
  // What runs of each stage's data-parallel replicas:
  //   kFull      all of them;
  //   kFolded    one replica (one EP group; a dense model's one TP group). Replicas of a stage
  //              exchange nothing within a micro-batch, so the two agree wherever the replicas do
  //              not contend for the same switch links;
  //   kMirrored  one GPU per pipeline rank (data-parallel rank 0, every TP rank of it). Its MoE
  //              all-to-alls become one-sided puts of its own row of the all-to-all-v (what it
  //              sends, relayed bytes included) to its unsimulated peers; under balanced routing
  //              every GPU of an EP group does the same, so its ingress equals its egress. Refused
  //              with skewed routing.
  //   Folded and mirrored, the simulated GPUs' own links stand in for their unsimulated peers'
  //   (stand_in_gpus): bytes sent to a peer load what the peer's stand-in owns, as the peers'
  //   bytes load it in the full run.
  enum class Fidelity : uint8_t { kFull, kFolded, kMirrored };
  Fidelity fidelity = Fidelity::kFull;
  // Replicas (cp x dp ranks, RankCoords.dp) of each stage that run: all; when folded, one EP
  // group (MoE) and at least one whole CP group, whichever holds the other (the loader refuses
  // folded when neither divides the other); when mirrored, one.
  int simulated_dp() const {
    switch (fidelity) {
      case Fidelity::kFull: return layout.replicas();
      case Fidelity::kFolded: return std::max(model.moe ? layout.ep : 1, layout.cp);
      case Fidelity::kMirrored: return 1;
    }
    return layout.replicas();
  }
  bool mirrored() const { return fidelity == Fidelity::kMirrored; }
  // Tokens of one micro-batch on one GPU: context parallelism splits each sequence cp ways.
  int64_t tokens_per_gpu() const { return micro_batch * seq_len / layout.cp; }
  int compute_partition = 0;  // indices into the cluster's SM partitions
  int comm_partition = 1;
  // The partition communication kernels run on: comm_partition, or, where it holds 0 SMs (none
  // reserved), compute_partition, whose SMs they then share, as `clustersim sweep` runs comm_sms 0.
  int comm_kernel_partition(const ClusterConfig& c) const {
    return c.partitions[comm_partition].sms > 0 ? comm_partition : compute_partition;
  }
  // The layers per model stage the run uses, set by the loader (workload_stage_layers says which).
  std::vector<int> stage_split;
  bool split_balances_ranks = false;  // stage_split moved layers to even out ranks that hold several stages
  SourcePos pos, layout_pos;
};

// Reads `workload:` of kind `model` (scenarios/README.md); checks the layout against the model
// and the cluster and the memory of every pipeline rank against the GPU's HBM. UserError at the
// offending key, or at `layout` with the bytes by category when it does not fit.
// A stage's graph beyond `limits` is refused at `micro_batches`.
ModelWorkload parse_model_workload(const hw::YamlMap& w, const ClusterConfig& cluster, const GraphLimits& limits = {});

// GPUs per node as the layout sees them (a single switch is one node).
int gpus_per_node(const ClusterConfig& c);
// Folded and mirrored: per GPU of the cluster, the simulated GPU of its stage and TP rank that
// stands in for it (the replica dp mod simulated_dp(); see OpWorkload::stand_in). Full: empty.
std::vector<int> stand_in_gpus(const ModelWorkload& mw, const ClusterConfig& c);
// Where a folded or mirrored run may not be the run of every GPU on this cluster: where the GPUs
// a simulated GPU stands in for (stand_in_gpus) meet unlike uplinks and so do not all run alike,
// on a partial tree (uplinks left dark) or an oversubscribed one whose leaves hold unlike parts of
// a stage. None at full fidelity, nor on a whole tree whose stages fill or divide its leaves: there
// the stand-ins' images load the switch links as every GPU would (models/stand_in_images.h).
struct FidelityWarning;  // models/scenario_runner.h
std::vector<FidelityWarning> fidelity_warnings(const ModelWorkload& mw, const ClusterConfig& c);

// Layers per model stage as the workload runs them: the loader's stage_split, else stage_layers
// over its pipeline schedule's model stages (pp x v interleaved, 2 x pp DualPipeV), or the
// layout's pp without a pipeline, at its sequence length.
std::vector<int> workload_stage_layers(const ModelWorkload& mw);
// The split the loader gives a workload: the layout's layers_per_stage when given; else
// stage_layers, and where the pipeline's ranks hold several model stages (interleaved 1F1B,
// DualPipe, DualPipeV), that split with layers moved between stages to even out the ranks' loads
// (balance_rank_loads), each move only while the worst rank's memory stays within the GPU's (or,
// where stage_layers' split does not fit either, no worse than it).
void choose_stage_split(ModelWorkload& mw, const ClusterConfig& c);
// The memory inputs of the workload for one pipeline rank.
MemoryInputs memory_inputs(const ModelWorkload& mw, const ClusterConfig& c, int pp_rank);

struct ModelRunSummary;  // models/scenario_runner.h
// The workload's summary for the run result: placement, memory of the worst rank, routing.
ModelRunSummary summarize_model_workload(const ModelWorkload& mw, const ClusterConfig& c);

// Ops (with their dependencies) and point-to-point transfers the stage's graph will hold, to
// refuse workloads beyond the loader's limits before building them.
struct WorkloadSize {
  uint64_t ops = 0;
  uint64_t transfers = 0;
};
WorkloadSize model_workload_size(const ModelWorkload& mw);

// The op graph of one stage (see the file comment), or of the whole pipeline when `pipeline` is
// set. Stream names: "compute" and "comm".
OpWorkload build_model_workload(const ModelWorkload& mw, const ClusterConfig& c);
// The whole pipeline: every rank's chunks in its schedule's order, chunk boundaries as one-sided
// sends of the BF16 activations (forward) and their gradients (backward) between the same data-
// and tensor-parallel ranks of neighbouring stages, DualPipe's overlapped pairs interleaved.
OpWorkload build_pipeline_workload(const ModelWorkload& mw, const ClusterConfig& c);

}  // namespace cs::models
