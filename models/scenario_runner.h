// Runs a loaded scenario on the engine and summarises what happened.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <ostream>
#include <string>
#include <vector>

#include "models/resource_busy.h"
#include "models/op_workload.h"
#include "models/scenario.h"
#include "models/step_breakdown.h"
#include "models/training_result.h"
#include "sim/executor.h"
#include "sim/time.h"

namespace cs::models {

struct StreamResult {
  std::string name;
  std::string partition;  // a name in the cluster's SM partitions
  // How its ops run: kCopyEngine when they are all copy-engine sends, which hold none of the
  // partition's SMs; kSms otherwise (kernels on the partition's SMs).
  sim::Mover mover = sim::Mover::kSms;
  int gpus = 0;
  int64_t ops_per_gpu = 0;  // mean over the stream's GPUs, rounded down
  sim::Time busy_mean;  // per GPU: summed op durations, averaged over the stream's GPUs
  sim::Time busy_max;
  sim::Time end_max;    // when the stream's last op finished on its slowest GPU
};

struct LinkResult {
  std::string name;
  double capacity_GBps = 0;
  double bytes = 0;
  sim::Time busy;
};

// Where a folded or mirrored run is not the run of every GPU (models/model_workload.h).
struct FidelityWarning {
  std::string brief;  // a few words, for a sweep point's note
  std::string text;   // the whole warning
};

// What a `model` workload ran and how it was checked.
struct ModelRunSummary {
  std::string model;
  std::string layout;  // e.g. "tp 1, dp 128, pp 16, ep 64, ZeRO-1"
  int stage = 0;
  std::string pipeline;  // the schedule of a whole-step run; empty for one stage
  int stage_gpus = 0;
  int simulated_gpus = 0;  // fewer than stage_gpus when replicas are folded
  std::string fidelity;    // "full", "folded" or "mirrored"
  std::vector<FidelityWarning> fidelity_warnings;  // where it is not the run of every GPU
  int64_t micro_batches = 0;
  int64_t tokens_per_micro_batch = 0;  // per GPU
  std::string precision;
  std::string schedule;  // the memory shape checked
  std::vector<std::string> placement;
  int worst_pp_rank = 0;
  std::vector<std::pair<std::string, double>> memory_bytes;  // worst rank, by category
  double memory_available_bytes = 0;
  double nodes_per_token = 0;  // MoE: expected distinct nodes and GPUs a token is dispatched to
  double gpus_per_token = 0;
};

struct RunResult {
  std::string scenario;
  std::string file;
  std::string gpu_model;
  int gpus = 0;
  std::string fabric;  // e.g. "h800-2048: multi_plane_fat_tree, 256 x hgx-8gpu, 1:1, PXN at destination"
  std::vector<sim::PartitionSpec> partitions;
  std::string cost_model;
  bool calibrated = false;
  std::vector<std::string> cost_warnings;  // uses of a calibrated profile beyond its measured range
  // Under a power-capped profile: each simulated GPU's SM clock averaged over the time GEMMs ran
  // on it (sim::ExecResult::gemm_mean_MHz); empty otherwise.
  std::vector<double> gemm_mean_MHz;
  sim::Time makespan;
  std::vector<StreamResult> streams;
  std::vector<LinkResult> links;  // links that carried traffic, in creation order
  std::vector<ResourceBusy> resources;  // busy shares by kind of resource (models/resource_busy.h)
  int64_t ops = 0;
  uint64_t events = 0;
  uint64_t reallocations = 0;
  uint64_t flows_reallocated = 0, flow_rate_changes = 0;  // sim::FlowNetwork's counters
  std::optional<ModelRunSummary> model;  // `model` workloads only
  std::optional<StepBreakdown> step;     // whole-step pipeline runs only
  std::optional<TrainingResult> training;  // scenarios with `training:` (models/training_run.h)
};

struct RunOptions {
  std::ostream* trace = nullptr;  // Perfetto JSON is streamed here when set
  // Called once after a successful run with the op graph and every op's timing, for a caller that
  // reads the run op by op (the HTML report's timeline and collective table) without RunResult
  // holding per-op data for every run.
  std::function<void(const OpWorkload&, const sim::ExecResult&)> inspect;
};

// Builds the op graph (UserError on bad references or cycles) and runs it. Ops that never run
// although the graph has no cycle are a deadlock the user made (collectives issued in different
// orders on different GPUs while their partition has too few SMs to run them side by side): a
// UserError at the first stuck op.
RunResult run_scenario(const Scenario& sc, const RunOptions& options = {});
RunResult run_scenario(const Scenario& sc, const OpWorkload& work, const RunOptions& options = {});

}  // namespace cs::models
