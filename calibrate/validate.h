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
  std::string kind;   // gemm | all_to_all
  std::string label;  // the shape or the size, with the SMs
  double measured_us = 0, predicted_us = 0;
  bool held_out = false;
  bool beyond_range = false;  // outside the range the profile was fitted on
  double error() const { return predicted_us / measured_us - 1; }
};

struct Validation {
  std::vector<CaseCheck> cases;
  FitStats gemm_held, gemm_all, comm_held, comm_all;
};

// `holdout_every` must be what the fit used (the held-out cases are chosen the same way).
Validation validate_profile(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const MeasurementSet& set,
                            int holdout_every);

}  // namespace cs::calibrate
