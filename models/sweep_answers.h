// What a sweep's results answer: the best point by the objective, the Pareto front of time against
// GPUs, and, where the sweep varies the SM split, the best split for each of its other settings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/sweep_run.h"
#include "models/sweep_spec.h"

namespace cs::models {

struct CommOptimum {
  std::string setting;  // the other keys' values, e.g. "workload.pipeline.schedule=1f1b"; "" for none
  int record = 0;       // the best point of that setting (a position in the records)
  int points = 0;       // ok points of that setting
};

struct SweepAnswers {
  SweepObjective objective = SweepObjective::kStepTime;
  int ok = 0, skipped = 0, failed = 0;
  std::optional<int> best;      // position in the records
  std::string objective_note;   // why no point could be ranked, when none was
  std::string pareto_time;      // "days" (training runs) or "step_ms"
  std::vector<int> pareto;      // positions, fewest GPUs first
  std::vector<CommOptimum> comm_optima;  // empty unless the sweep sets comm_sms
};

// `records` hold every point of the sweep in index order.
SweepAnswers sweep_answers(const SweepSpec& spec, const std::vector<SweepRecord>& records);

// The figure (models::kSweepMetrics) the objective reads.
const char* objective_metric(SweepObjective o);
// The record's value of the objective (lower is better: tokens per second are negated), if it has one.
std::optional<double> objective_value(SweepObjective o, const SweepRecord& r);

}  // namespace cs::models
