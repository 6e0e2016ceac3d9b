#include "calibrate/memory_form_fit.h"

#include <cstdio>

#include "calibrate/fit_stats.h"

namespace cs::calibrate {

MemoryFormFit fit_memory_forms(const MeasurementSet& set) {
  MemoryFormFit f;
  std::array<double, sim::kMemoryForms> bytes{}, us{};
  for (const MemoryFormCase& c : set.memory_forms) {
    const auto i = static_cast<size_t>(c.form);
    bytes[i] += c.bytes, us[i] += c.device_us, ++f.cases[i];
  }
  // Summed bytes over summed time: the rate the form's kernels of the bench's shapes run at
  // together, which is what a step of those shapes spends.
  for (size_t i = 1; i < bytes.size(); ++i)
    if (f.cases[i] > 0) f.GBps[i] = bytes[i] / us[i] * 1e-3;
  f.gap_files = static_cast<int>(set.launch_gaps_us.size());
  f.launch_gap_us = median(set.launch_gaps_us);
  return f;
}

void apply_memory_forms(const MemoryFormFit& f, const std::string& sources, hw::GpuProfile& p) {
  for (int i = 1; i < sim::kMemoryForms; ++i) {
    if (f.cases[i] == 0) continue;
    const auto form = static_cast<sim::MemoryForm>(i);
    char buf[160];
    std::snprintf(buf, sizeof buf, "bytes / kernels' device time (torch.profiler) of %d case%s of the pipeline bench's %s kernel",
                  f.cases[i], f.cases[i] == 1 ? "" : "s", sim::memory_form_name(form));
    p.kernels.form_GBps[i] = f.GBps[i];
    p.kernel_params[hw::KernelModel::param_name(hw::KernelModel::form_param(form))] = {f.GBps[i], "measured",
                                                                                       std::string(buf) + ": " + sources};
  }
  if (f.gap_files > 0) {
    p.kernels.launch_gap_us = f.launch_gap_us;
    p.kernel_params["launch_gap_us"] = {
        f.launch_gap_us, "measured",
        "median device time between 200 back-to-back small kernels queued behind a sleeping one (torch.profiler): " +
            sources};
  }
}

}  // namespace cs::calibrate
