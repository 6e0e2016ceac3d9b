// What-if over the SM split: the scenario run once per size of its communication partition, the
// SMs taken from (or given back to) its compute partition, so every point has the same GPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/scenario.h"
#include "models/scenario_runner.h"

namespace cs::models {

struct SmSweepSpec {
  std::vector<int> comm_sms;      // the sizes tried, in the order given
  std::string comm_partition;     // empty: the model workload's, else "comm"
  std::string compute_partition;  // empty: the model workload's, else "compute"
  bool training = true;           // also predict the training run where the scenario has one
  int jobs = 1;                   // points run at once (each on its own thread)
};

struct SmSweepPoint {
  int comm_sms = 0;
  int compute_sms = 0;
  bool shared = false;  // comm_sms 0: communication kernels run on the compute partition's SMs
  RunResult result;
};

struct SmSweep {
  std::string comm_partition, compute_partition;
  int total_sms = 0;  // compute + comm, the same at every point
  std::vector<SmSweepPoint> points;
  int best = 0;  // index of the shortest makespan (the first of equals)
};

// The scenario with `comm_sms` SMs in its communication partition and the rest of the pair's SMs
// in its compute partition. 0 SMs: the streams of the communication partition run on the compute
// partition and share its SMs with the compute kernels, as NCCL's kernels do without a reserved
// partition; the emptied partition stays, with 0 SMs and nothing on it.
// UserError (at the scenario's cluster) for sizes the pair cannot give.
Scenario with_comm_sms(const Scenario& sc, int comm_index, int compute_index, int comm_sms);

// Runs every point (UserError before any runs if a size or partition name is impossible).
SmSweep run_sm_sweep(const Scenario& sc, const SmSweepSpec& spec);

// "0:48:4" (from, to inclusive, step) or "0,8,20" into sizes; UserError naming `what` otherwise.
std::vector<int> parse_int_range(const std::string& text, const std::string& what);

}  // namespace cs::models
