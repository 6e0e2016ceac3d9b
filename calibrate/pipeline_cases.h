// Pipeline-parallel training steps as kernels/torch/pipeline_step.py measured them (a dense model
// cut into stages, one GPU per rank of one host, every rank's tasks in the order clustersim's
// schedule generator gives), and the same step simulated under a calibrated profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "models/pipeline_schedule.h"
#include "sim/time.h"

namespace cs::calibrate {

// The bench's model (bench.model): a dense GQA + SwiGLU transformer.
struct PipelineModel {
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn_hidden = 0, vocab = 0;
};

// One measured step. Invariants (the reader refuses the file otherwise): layers_per_stage has one
// entry per model stage and sums to model.layers; task_tokens is what make_schedule(params())
// gives, rank by rank.
struct PipelineCase {
  std::string name;  // e.g. dualpipe_pp2_m08
  models::ScheduleKind schedule = models::ScheduleKind::k1f1b;
  int stages = 0, micro_batches = 0, virtual_stages = 1;  // as models::ScheduleParams counts them
  int ranks = 0;                                          // GPUs, one pipeline rank each
  std::vector<int> layers_per_stage;                      // per model stage
  PipelineModel model;
  int64_t seq_len = 0, micro_batch = 0;  // tokens per sequence, sequences per micro-batch
  std::string precision;                 // "bf16": BF16 weights and activations
  double iteration_us = 0;               // median over the timed steps, gate to the last rank's last task
  std::vector<std::vector<std::string>> task_tokens;  // per rank, in execution order (models::task_token)
  // Per rank, each task's end in the last timed step, ms from the step's start (its gate), in
  // task_tokens' order; a task's span runs from the end of the rank's task before it.
  std::vector<std::vector<double>> task_end_ms;
  std::string gpu;                                    // e.g. "NVIDIA H100 80GB HBM3"
  int index = 0;                                      // position in the file's "cases"
  int source = 0;                                     // index into MeasurementSet::sources

  models::ScheduleParams params() const { return {schedule, stages, micro_batches, virtual_stages}; }
  std::string label() const;  // "dualpipe pp2 m8", "interleaved pp2 v2 m8"
};

// The cases of a pipeline_step.py result `d` read from `file`. Throws hw::UserError naming the file
// and case for a missing or ill-typed field, a case that failed its gradient check, a schedule
// clustersim does not know, sizes below 1 or layers that do not add up, stage boundaries sent by
// anything but the copy engine (bench.stage_boundary), and tokens that differ
// from what the schedule generator gives now (the generator changed since the measurement).
std::vector<PipelineCase> read_pipeline_cases(const nlohmann::json& d, const std::string& file, int source);

// The whole step simulated as a `model` scenario on `c.ranks` GPUs of `gpu` under profile `p`, every
// SM computing and stage boundaries sent by the copy engine (`pipeline.p2p: copy_engine`):
// the latest pipeline end over the ranks (each rank's last chunk; no optimizer, which the bench
// does not run). Throws hw::UserError (naming `file` and the case) where the scenario loader
// refuses the case.
sim::Time simulate_pipeline_step(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const PipelineCase& c,
                                 const std::string& file);

}  // namespace cs::calibrate
