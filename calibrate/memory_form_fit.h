// Per-form memory-bound rates and the launch gap of a profile (hw::KernelModel's <form>_GBps and
// launch_gap_us) from kernels/torch/memory_bound_forms.py: each form's bytes over its kernels'
// device time, summed over its cases (the shapes the pipeline bench runs), and the median of the
// measured gaps between back-to-back kernels.
#pragma once

#include <algorithm>
#include <array>
#include <string>

#include "calibrate/measurements.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

struct MemoryFormFit {
  std::array<double, sim::kMemoryForms> GBps{};  // by form; 0 where not measured
  std::array<int, sim::kMemoryForms> cases{};
  double launch_gap_us = 0;  // 0 where not measured
  int gap_files = 0;
  bool empty() const { return gap_files == 0 && std::all_of(cases.begin(), cases.end(), [](int n) { return n == 0; }); }
};

MemoryFormFit fit_memory_forms(const MeasurementSet& set);

// Writes the fitted forms and gap into the profile (values and their sources), `sources` naming the
// measurement files (GPU, date) for the profile's source fields.
void apply_memory_forms(const MemoryFormFit& f, const std::string& sources, hw::GpuProfile& p);

}  // namespace cs::calibrate
