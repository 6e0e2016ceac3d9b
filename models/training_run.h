// A whole training run from representative steps: each phase's step simulated at its full batch
// (and, while the batch ramps, at its smallest batch too, the step time taken as affine in the
// micro-batch count between them: a pipeline step is fill and drain plus a fixed time per
// micro-batch), then summed over the phase's steps into GPU-hours, wall-clock days and cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/yaml_reader.h"
#include "models/scenario.h"
#include "models/scenario_runner.h"

namespace cs::models {

// Reads `training:` (scenarios/README.md). `workload` is the scenario's workload map, whose keys a
// phase's `workload:` replaces; `model_keys` are the keys a model workload allows. UserErrors at
// the offending key: a batch that is not a multiple of dp x micro_batch, a full-batch micro-batch
// count the schedule refuses, a workload without `pipeline:`, a step beyond `limits`.
TrainingPlan parse_training(const hw::YamlNode& training, const hw::YamlNode& workload,
                            const std::vector<std::string>& model_keys, const ClusterConfig& cluster,
                            const GraphLimits& limits = {});

// Simulates each phase's representative steps (the first phase's full-batch step is `first`, the
// scenario's own run) and sums the run.
TrainingResult predict_training(const Scenario& sc, const RunResult& first);

}  // namespace cs::models
