// A pipeline schedule as text (`clustersim schedule show`): a grid with one row per rank and one
// column per time slot of a uniform-times run, then per-rank busy time, bubble, activations in
// flight and stages held, and the simulated bubble beside the published formula.
#pragma once

#include <string>

#include "models/pipeline_schedule.h"
#include "models/schedule_uniform_sim.h"

namespace cs::reports {

// Grids wider than this many slots are left out (the summary still prints; a trace shows all).
inline constexpr int64_t kMaxGridSlots = 4000;

// The grid alone: a slot is the greatest common divisor of the task times, a task spanning k
// slots prints as its token padded with '-' over them, an idle slot as '.'.
std::string schedule_grid(const models::PipelineSchedule& s, const models::ChunkTimes& t,
                          const models::ScheduleRun& run);

// Header, grid (when at most kMaxGridSlots wide), legend, per-rank table and the bubble line.
// Times print in microseconds (the CLI's unit).
std::string schedule_show(const models::PipelineSchedule& s, const models::ChunkTimes& t,
                          const models::ScheduleRun& run);

}  // namespace cs::reports
