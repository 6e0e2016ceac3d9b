// What a training run costs (models/training_run.h), phase by phase and in all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.h"

namespace cs::models {

struct PhaseResult {
  std::string name;
  int gpus = 0;
  int64_t steps = 0;
  double tokens = 0;
  int64_t batch_start = 0, batch_end = 0;
  int64_t seq_len = 0;
  std::string layout;            // models::layout_text of the phase's layout
  int micro_batches = 0;         // per step at the full batch
  sim::Time step;                // at the full batch
  sim::Time step_at_ramp_start;  // simulated at `fit_micro_batches` when the batch ramps
  int fit_micro_batches = 0;     // 0: no ramp
  bool extrapolated = false;     // the ramp starts below the schedule's minimum micro-batch count
  double seconds = 0;            // the phase's wall-clock time
  double tokens_per_s_per_gpu = 0;  // at the full batch
  double tflops_causal = 0, tflops_full = 0;  // model TFLOPS per GPU at the full batch
  double mfu_causal = 0, mfu_full = 0;        // against the GPU's dense BF16 peak
  double gpu_hours = 0, cost_usd = 0;
};

struct TrainingResult {
  std::vector<PhaseResult> phases;
  double gpu_hours = 0, days = 0, cost_usd = 0, usd_per_gpu_hour = 0;
};

}  // namespace cs::models
