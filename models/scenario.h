// A scenario as loaded and validated from YAML (see scenarios/README.md for every key).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/catalog.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "sim/op_graph.h"
#include "sim/sm_pool.h"

namespace cs::models {

// Ops a workload may expand to (GPUs x ops x repeats); beyond it the scenario is refused.
inline constexpr int64_t kMaxExpandedOps = 10'000'000;
// Point-to-point transfers the collectives of a workload may make in all (an all-to-all over n
// GPUs makes n(n-1), a ring all-reduce 2n(n-1)); beyond it the scenario is refused.
inline constexpr int64_t kMaxTransfers = 10'000'000;

// The largest graph a scenario may expand to; beyond it the loader refuses it at the key that
// makes it so. The defaults keep a run within a few GB (about 45 bytes of memory an op in a large step);
// `clustersim run --graph-limit` raises both for a machine that has the memory.
struct GraphLimits {
  int64_t ops = kMaxExpandedOps;      // ops and dependencies
  int64_t transfers = kMaxTransfers;  // point-to-point transfers
};

inline constexpr int kSchemaVersion = 1;

// A position in the scenario file, kept for errors found after loading (unknown op ids, cycles).
struct SourcePos {
  int line = 0, col = 0;
};

// `switch`: GPUs on one non-blocking switch (link_* figures). The fat-tree kinds: HGX nodes on
// InfiniBand (hw/fabric/), with the node, NIC and switch figures below.
struct FabricConfig {
  std::string kind = "switch";
  int oversubscription = 1;
  std::string pxn = "destination";
  double link_bw_GBps = 0;  // switch kind: per GPU and direction
  double link_lat_ns = 0;   // switch kind: GPU to GPU
};

// Figures a cluster runs with: from the catalog, then the scenario's `overrides`.
struct ClusterFigures {
  double hbm_bw_GBps = 0;
  double nvlink_bw_GBps = 0;  // per GPU and direction
  double nvlink_lat_ns = 0;
  double pcie_bw_GBps = 0;
  double nic_bw_GBps = 0;
  double ib_base_lat_ns = 0;
  double ib_hop_lat_ns = 0;
  int switch_ports = 0;
};

struct ClusterConfig {
  std::string preset;  // empty when the cluster is not a preset
  hw::GpuSpec gpu;
  hw::NodeSpec node;
  hw::NicSpec nic;
  hw::SwitchSpec switch_spec;
  int nodes = 0;  // fat-tree kinds; 0 for `switch`
  int gpus = 0;
  std::vector<sim::PartitionSpec> partitions;  // one may hold 0 SMs: none reserved (models/cluster.cc)
  std::vector<SourcePos> partition_pos;         // where each one's SM count is written
  FabricConfig fabric;
  ClusterFigures figures;
  bool nvlink_bw_overridden = false;  // by `overrides.nvlink_bw_GBps` or `fabric.link_bw_GBps`
  bool hbm_bw_overridden = false;     // by `overrides.hbm_bw_GBps`
};

// `roofline`: datasheet figures only (hw/roofline_cost.h). `calibrated`: a profile fitted to
// measurements (hw/calibrated_cost.h); its NVLink figure replaces the catalog's unless the
// scenario overrides NVLink itself, and so does its measured HBM ceiling (a `memory` section)
// unless the scenario overrides HBM.
struct CostModelConfig {
  std::string kind = "roofline";
  double comm_bw_per_sm_GBps = 0;                // roofline only
  std::shared_ptr<const hw::GpuProfile> profile;  // calibrated only
  // Calibrated only: kernels at the clocks their fits ran at, not a training step's (its power
  // limit, or the sustained clock): a case that reproduces a benchmark run alone, as a published
  // table's. Set by code, not by scenario files.
  bool fit_clocks = false;
  // Calibrated only: the attention kernel (`attention_kernel: sdpa | fa2`).
  hw::AttentionKernel attention_kernel = hw::AttentionKernel::kSdpa;
};

enum class OpType : uint8_t { kGemm, kCompute, kCollective, kSend };

struct DepRef {
  std::string op;   // id of the op waited for
  int gpu = -1;     // -1: the same GPU as the waiting op
  SourcePos pos;
};

struct OpSpec {
  OpType type = OpType::kGemm;
  std::string kind_name;  // the YAML key: gemm, compute, all_to_all, ...
  sim::GemmShape gemm;
  sim::GenericCompute compute;
  sim::CollectiveKind collective = sim::CollectiveKind::kAllToAll;
  double size_bytes = 0;
  int send_to = -1;           // absolute destination GPU, or -1
  int send_peer_offset = 0;   // destination = the GPU this many places later in the stream's list
  int64_t repeat = 1;
  std::string id;
  std::string label;
  std::vector<DepRef> after;
  SourcePos pos;
};

struct StreamSpec {
  std::string name;
  std::vector<int> gpus;
  std::string partition;
  int partition_index = 0;
  std::vector<OpSpec> ops;
  SourcePos pos;
};

struct ModelWorkload;  // models/model_workload.h

// One phase of a training run (scenarios/README.md, "Training runs"): how much it trains, its
// global batch (sequences per step, ramped linearly in tokens from `batch_start` to `batch_end`
// over `ramp_tokens`, in steps of the data-parallel granularity dp x micro_batch), and the
// workload it runs: the scenario's, with the phase's own keys in place of its.
struct TrainingPhase {
  std::string name;
  std::optional<double> tokens;  // exactly one of tokens and steps
  std::optional<int64_t> steps;
  int64_t batch_start = 0, batch_end = 0;
  double ramp_tokens = 0;
  std::shared_ptr<const ModelWorkload> workload;  // pipeline.micro_batches set for batch_end
  SourcePos pos;
};

struct TrainingPlan {
  double usd_per_gpu_hour = 0;  // 0: no cost reported
  std::vector<TrainingPhase> phases;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  ClusterConfig cluster;
  CostModelConfig cost;
  std::vector<StreamSpec> streams;             // workload kind `ops`
  std::shared_ptr<const ModelWorkload> model;  // workload kind `model` (with `training`: its first phase's)
  std::optional<TrainingPlan> training;
};

}  // namespace cs::models
