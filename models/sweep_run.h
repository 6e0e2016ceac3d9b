// Running a sweep's points: each on its own engine, on a pool of threads, each result handed to
// the caller as soon as it is done. A point that the loader refuses (an invalid layout, memory that
// does not fit) or that fails to run is recorded with its error; the others go on.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/sweep_spec.h"

namespace cs::models {

// The figures a point's result reports, in this order (scenarios/README.md, "Sweeps").
extern const std::vector<std::string> kSweepMetrics;

// One point's outcome with every figure already written as text, so that results read back from a
// file give byte-identical output to results just computed.
struct SweepRecord {
  int index = 0;
  std::string status;               // "ok", "skipped" or "failed"
  std::vector<std::string> values;  // per SweepSpec::columns: the value the point set, or ""
  std::vector<std::string> metrics; // per kSweepMetrics: the figure, or "" where it has none
  std::string message;              // why it was skipped or failed; of an ok point, what limits its answer
  std::string metric(const std::string& name) const;
};

// A figure of kSweepMetrics as a record writes it (its own number of decimals).
std::string sweep_metric_text(const std::string& name, double v);
// The values a point sets, per SweepSpec::columns ("" where it sets none), as a record writes them.
std::vector<std::string> sweep_values(const SweepSpec& spec, const SweepPoint& p);

// The record of a point that is not run (skipped by a constraint): its values and reason.
SweepRecord skipped_record(const SweepSpec& spec, const SweepPoint& p);
// Loads and runs one point, never throwing for what the point itself gets wrong.
SweepRecord run_sweep_point(const SweepSpec& spec, const SweepPoint& p);

// Runs `todo` (indices into `points`) on `jobs` threads; `done` is called for each record as it
// finishes, from the worker threads one at a time (the caller need not lock). Results do not depend
// on `jobs`: every point runs alone on its own engine.
void run_sweep_points(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::vector<int>& todo,
                      int jobs, const std::function<void(SweepRecord)>& done);

}  // namespace cs::models
