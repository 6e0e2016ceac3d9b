// `clustersim compare`: a scenario's simulated kernels against a measured run (a Kineto trace or
// cs_overlap output), class by class (calibrate/kineto_trace.h): counts, total times, the time
// GEMMs and communication ran at once, and the makespan, with the class the model errs most on.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/kineto_trace.h"
#include "models/scenario.h"
#include "sim/op_graph.h"

namespace cs::calibrate {

// One op of the simulated GPU, in microseconds from the run's start.
struct SimulatedOp {
  std::string label;
  KernelClass cls = KernelClass::kOther;
  sim::MemoryForm form = sim::MemoryForm::kAny;  // a memory-bound op's form
  double start_us = 0, dur_us = 0;
  int stream = 0;
  int partition_sms = 0;  // SMs of the op's partition (0: a copy-engine send, which holds none)
  sim::GemmShape gemm;    // GEMMs only
  double bytes = 0;       // communication only: the collective's per-GPU bytes
};

// Kernels counted and their durations summed, measured and simulated side by side.
struct Tally {
  int measured_count = 0, simulated_count = 0;
  double measured_ms = 0, simulated_ms = 0;
  double error_pct() const;  // (simulated - measured) / measured; NaN when measured is 0
  bool empty() const { return measured_count == 0 && simulated_count == 0; }
  void add_measured(double dur_us) { ++measured_count, measured_ms += dur_us / 1000.0; }
  void add_simulated(double dur_us) { ++simulated_count, simulated_ms += dur_us / 1000.0; }
};

struct ClassRow : Tally {
  KernelClass cls = KernelClass::kOther;
};

// Class other's kernels of one memory-bound form (kAny: the kernels no form matched).
struct FormRow : Tally {
  sim::MemoryForm form = sim::MemoryForm::kAny;
};

struct CompareReport {
  std::string scenario, scenario_gpu;  // scenario name, catalog GPU model
  std::string measured_file, measured_format, measured_gpu, measured_range;
  int simulated_gpu = 0;               // the GPU of the scenario whose ops are compared
  std::vector<ClassRow> classes;       // classes seen in either run, in KernelClass order
  std::vector<FormRow> other_forms;    // class other by form, those seen in either run, unmatched last
  // Span from the first kernel's start to the last one's end; busy: the union of kernel intervals;
  // overlap: the time a GEMM and a communication kernel ran at once.
  double measured_makespan_ms = 0, simulated_makespan_ms = 0;
  double measured_busy_ms = 0, simulated_busy_ms = 0;
  double measured_overlap_ms = 0, simulated_overlap_ms = 0;
  std::string largest_error_class;  // by absolute time difference
  double largest_error_ms = 0;      // simulated - measured
  std::vector<std::string> notes;
};

// The simulated ops of `gpu`, classified like kernels (GEMM ops, attention by their label
// "attn.core", communication by collective kind and dispatch/combine labels). Runs the scenario.
std::vector<SimulatedOp> simulate_ops(const models::Scenario& sc, int gpu, double& makespan_us);

// Lines up the two runs class by class.
CompareReport compare_runs(const std::vector<MeasuredKernel>& measured, const std::vector<SimulatedOp>& simulated);

// Reads the measured file, checks that it fits the scenario (same GPU; for cs_overlap the
// scenario's GEMM shape and SM split must be one of its cases), simulates and compares.
// Throws hw::UserError for the user's mistakes.
CompareReport compare_scenario(const models::Scenario& sc, const std::string& measured_path);

std::string compare_console(const CompareReport& r);

// Shared by both compare modes (here and calibrate/compare_pipeline.h). Throws hw::UserError (at
// `measured_path`) unless `measured_gpu`, the name the file gives ("NVIDIA H200"), holds the
// scenario's catalog key ("h200"); an empty name is not checked.
void require_scenario_gpu(const models::Scenario& sc, const std::string& measured_gpu, const std::string& measured_path);
// A table cell: `v` with `digits` decimals, "-" when not finite; the error of `simulated` against
// `measured` in percent, "-" when nothing was measured.
std::string table_fixed(double v, int digits);
std::string table_error_pct(double measured, double simulated);
nlohmann::json compare_json(const CompareReport& r);

}  // namespace cs::calibrate
