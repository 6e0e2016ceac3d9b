// Predicts every measured case with the simulator under a profile and sets the two side by side,
// with the error summary over the cases the fit held out and over all of them.
#pragma once

#include <string>
#include <vector>

#include "calibrate/fit_stats.h"
#include "calibrate/measurements.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

struct CaseCheck {
  std::string kind;  // gemm | gemm_bf16 | gemm_fp8_blocks | gemm_fp8_tiles | all_to_all | attention | attention_fa2 |
                     // memory_bound | memory_form | overlap (the window's makespan) | pipeline (a step) | power (a GEMM
                     // call under the power limit)
  std::string label;  // the shape or the size, with the SMs
  double measured_us = 0, predicted_us = 0;
  bool held_out = false;
  bool beyond_range = false;  // outside the range the profile was fitted on
  double error() const { return predicted_us / measured_us - 1; }
};

// The communication-SM count that finishes one fixed job soonest: `gemms` GEMMs beside `a2as`
// all-to-alls of the shape's bench cases. Measured: from each case's per-op times (both streams at
// their together times until the shorter ends, the rest at its alone time); predicted: the job
// simulated at each count.
struct OverlapOptimum {
  std::string shape;
  int gemms = 0, a2as = 0;
  std::vector<int> ctas;
  std::vector<double> measured_us, predicted_us;  // the job's time at each count
  int measured_best = 0, predicted_best = 0;       // CTA counts
  int steps_apart = 0;                            // sweep steps between the two optima
};

struct Validation {
  std::vector<CaseCheck> cases;
  FitStats gemm_held, gemm_all, comm_held, comm_all;
  FitStats gemm_bf16_held, gemm_bf16_all;  // BF16 GEMMs, where measured
  // FP8 GEMMs of fp8_tile_scaling.py: each at its own scaling (the tiles at the profile's slowdown),
  // both scalings' cases; the tiles' alone.
  FitStats gemm_scalings, gemm_tiles;
  FitStats attention, memory_bound;  // the calls the fit used (the profile's kernels section)
  FitStats attention_fa2;            // the flash backend's calls, where the profile has attention_fa2
  FitStats memory_forms;             // memory_bound_forms.py's kernels at the rates fitted to them
  FitStats overlap;   // never fitted: every case is held out
  FitStats pipeline;  // whole pipeline-parallel steps; never fitted: every case is held out
  FitStats power;     // GEMM calls under the power limit (kernels/torch/power_response.py)
  std::vector<OverlapOptimum> optima;
};

// Every N-th GEMM shape and all-to-all grid cell held out of the fit: the bundled profiles were
// fitted so (README, Calibration), and `calibrate fit` and `validate` default to it.
inline constexpr int kBundledHoldoutEvery = 4;

// `holdout_every` must be what the fit used (the held-out cases are chosen the same way).
Validation validate_profile(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const MeasurementSet& set,
                            int holdout_every);

}  // namespace cs::calibrate
