// Fits hw::CommModel to all-to-all measurements of our NVLink kernel: the time the simulator gives
// an all-to-all of S bytes per GPU over n GPUs of one node, on k SMs per GPU, in closed form:
//   launch_us + max(S / (k sm_copy), lat + S (n-1)/n / nvlink)
// (the kernel copies all S bytes, its own chunk included; the other GPUs' share crosses NVLink
// after the link latency, while the local copy keeps the SMs busy). Log residuals, as gemm_fit.
#pragma once

#include <vector>

#include "calibrate/fit_stats.h"
#include "calibrate/measurements.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

// Our kernel's cases only (NCCL's are another algorithm); every 4th (k, size) cell of the grid
// held out, on a diagonal so each k and each size keeps most of its cases.
std::vector<bool> comm_holdout(const std::vector<AllToAllCase>& cases, int every = 4);
bool comm_fits_case(const AllToAllCase& c);

struct CommFit {
  hw::CommModel model;
  FitStats fit;
  int iterations = 0;
  bool converged = false;
};

CommFit fit_comm(const std::vector<AllToAllCase>& cases, const std::vector<bool>& use, const hw::CommModel& start,
                 double link_lat_us);
double predict_us(const hw::CommModel& m, const AllToAllCase& c, double link_lat_us);

}  // namespace cs::calibrate
