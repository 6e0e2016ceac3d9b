// `clustersim compare SCENARIO --measured pipeline_step.json`: a whole-step pipeline scenario
// beside the matching case of kernels/torch/pipeline_step.py's output. Both ran the same schedule
// (the bench's order is the generator's), so they line up task by task: each rank's end of the
// step, and per task kind (forward, backward, input and weight backward, DualPipe's pairs) the
// median span. A span runs from the end of the rank's task before it to the task's end: waiting
// for a neighbour's activations or gradients counts, as the bench's events measure it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/scenario.h"

namespace cs::calibrate {

struct PipelineTaskRow {
  std::string kind;  // forward | backward | backward_input | backward_weight | forward_backward
  int measured_count = 0, simulated_count = 0;
  double measured_median_ms = 0, simulated_median_ms = 0;
};

struct PipelineCompare {
  std::string scenario, scenario_gpu, measured_file, measured_gpu, case_name, schedule;
  double measured_step_ms = 0;           // median over the timed steps
  double simulated_step_ms = 0;          // the latest pipeline end over the ranks (no optimizer)
  std::vector<double> measured_rank_end_ms, simulated_rank_end_ms;  // the last timed step; simulated
  std::vector<PipelineTaskRow> tasks;    // task kinds present in either, in the order above
  std::vector<std::string> notes;
};

// Finds the case of `measured_path` that is the scenario's step (schedule, micro-batches, model,
// layers per stage, sequence, micro-batch, GPU), simulates the scenario and lines the two up.
// Throws hw::UserError when the scenario runs no whole-step pipeline, or no case matches (the
// message lists the file's cases).
PipelineCompare compare_pipeline(const models::Scenario& sc, const std::string& measured_path);

std::string pipeline_compare_console(const PipelineCompare& r);
nlohmann::json pipeline_compare_json(const PipelineCompare& r);

}  // namespace cs::calibrate
