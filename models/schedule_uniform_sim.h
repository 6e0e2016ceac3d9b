// A pipeline schedule run on the engine with uniform chunk times: each task is one compute op on
// its rank's stream taking exactly its given time, every dependency of task_dependencies() an op
// dependency, communication free. This is the setting of the published bubble formulas
// (REFERENCE.md, DualPipe table); the model-level execution (chunks expanded into layer ops,
// flows between stages) builds on the same schedules elsewhere.
//
// Bubble of a rank = step makespan - the rank's busy time (the sum of its tasks' times), i.e.
// all the time the rank is idle between the step's start and the last rank's end.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "models/pipeline_schedule.h"
#include "models/step_breakdown.h"
#include "sim/time.h"

namespace cs::models {

// Times of one chunk (one micro-batch through one model stage). B is the FULL backward, as in
// the DualPipe README ("the execution time of a full backward chunk"); W is its weight part, so
// an input-only backward (kBackwardInput) takes B - W. Requires 0 <= W <= B.
struct ChunkTimes {
  sim::Time forward;           // F
  sim::Time backward;          // B, full: input and weight gradients
  sim::Time weight;            // W, the weight-gradient part of B
  sim::Time forward_backward;  // F&B: an overlapped forward and full backward pair
  sim::Time backward_input() const { return backward - weight; }
  sim::Time of(const ChunkTask& t) const;
};

struct TaskTiming {
  sim::Time start, end;
};

struct ScheduleRun {
  sim::Time makespan;
  std::vector<sim::Time> busy;                   // per rank
  std::vector<sim::Time> bubble;                 // per rank: makespan - busy
  std::vector<std::vector<TaskTiming>> timing;   // per rank, per task (like per_rank)
  size_t stuck_tasks = 0;                        // tasks that never ran (a deadlock); 0 when valid
  StepBreakdown breakdown;                       // the same run in DeepSeek's step categories

  sim::Time max_bubble() const;
};

// The published bubble of the schedule's kind (REFERENCE.md's table; interleaved: Megatron's
// (PP-1)(F+B)/v, which per virtual-stage chunk is (PP-1)(f+b)) and where it holds. The conditions
// were established by test_schedule_bubbles.cc: outside them the simulated bubble differs.
struct PublishedBubble {
  std::string formula;     // e.g. "(PP/2-1)(F&B+B-3W)"
  sim::Time value;         // the formula at these sizes and times
  std::string applies_to;  // "every rank" | "the largest (middle ranks)" | "the largest (last device)"
  std::string conditions;  // "" when none, e.g. "W <= F and W <= B-W"
  bool conditions_hold = true;
};
PublishedBubble published_bubble(const PipelineSchedule& s, const ChunkTimes& t);

// Runs the schedule. With `trace`, streams a Perfetto JSON (sim::TraceWriter: one process per
// rank, one track, a slice per task named by task_token). Throws std::invalid_argument for
// times with W > B or a negative time.
ScheduleRun simulate_uniform(const PipelineSchedule& s, const ChunkTimes& t, std::ostream* trace = nullptr);

}  // namespace cs::models
