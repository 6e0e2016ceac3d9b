// What the SM clock and the board power did while a measurement ran: a thread polls NVML every
// `period` between start() and stop(). A GEMM sweep's clock differs from case to case (the power
// cap bites on some SM counts and shapes, not on others), so one clock per sweep cannot tell a
// slower clock from a slower kernel; one per case can.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/json_writer.h"
#include "common/nvml.h"

namespace cs::kernels {

struct ClockSummary {
  int samples = 0;  // SM clock readings; 0: NVML answered nothing (the fields below are then 0)
  double sm_mhz_mean = 0, sm_mhz_median = 0, sm_mhz_min = 0, sm_mhz_max = 0;
  // NVML's board power: on Hopper an average over about a second, so it lags a short case.
  int power_samples = 0;
  double power_w_mean = 0, power_w_max = 0;
  // Shares of the samples with the software power cap, and with a hardware, thermal or power-brake
  // slowdown, active; unknown where the driver does not report clock event reasons.
  std::optional<double> power_capped_share, hw_or_thermal_slowdown_share;
};

// Writes `s` as one JSON object (the next value of `w`); unknown values as null.
void write_clock_summary(JsonWriter& w, const ClockSummary& s);

// Several windows as one: means and shares weighted by their samples, the extremes of all; the
// median is the windows' medians weighted by their samples (the samples themselves are not kept).
ClockSummary combine(const std::vector<ClockSummary>& windows);

class ClockSampler {
 public:
  // A sampler of the GPU at `pci_bus_id` over NVML, or nullptr with `why` set when NVML or the GPU
  // cannot be reached.
  static std::unique_ptr<ClockSampler> open(const std::string& pci_bus_id, std::chrono::microseconds period,
                                            std::string& why);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  void start();          // begins a window (a running one is stopped and dropped first)
  ClockSummary stop();   // ends the window: what its samples say

 private:
  ClockSampler(std::unique_ptr<Nvml> nvml, nvmlDevice_t device, std::chrono::microseconds period);
  struct Sample {
    unsigned sm_mhz = 0;
    double power_w = -1;  // < 0: no reading
    std::optional<unsigned long long> reasons;
  };
  void poll();

  std::unique_ptr<Nvml> nvml_;
  nvmlDevice_t device_;
  std::chrono::microseconds period_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  // Written by the thread between start() and the join in stop(); read only after that join.
  std::vector<Sample> samples_;
};

}  // namespace cs::kernels
