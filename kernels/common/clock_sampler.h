// What the SM clock and the board power did while a measurement ran: a thread polls NVML every
// `period` between start() and stop(). A GEMM sweep's clock differs from case to case (the power
// cap bites on some SM counts and shapes, not on others), so one clock per sweep cannot tell a
// slower clock from a slower kernel; one per case can.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common/json_writer.h"
#include "common/nvml.h"

namespace cs::kernels {

struct ClockSummary {
  int samples = 0;  // 0: NVML answered nothing (the fields below are then 0)
  double sm_mhz_mean = 0, sm_mhz_min = 0, sm_mhz_max = 0;
  double power_w_mean = 0, power_w_max = 0;  // of the samples that had a power reading
  double power_capped_share = 0;             // of samples with the software power cap active
  double thermal_share = 0;                  // of samples with a thermal or hardware slowdown active
};

// Writes `s` as one JSON object (the next value of `w`).
void write_clock_summary(JsonWriter& w, const ClockSummary& s);

// Several windows as one: means and shares weighted by their samples, the extremes of all.
ClockSummary combine(const std::vector<ClockSummary>& windows);

class ClockSampler {
 public:
  // `nvml` must outlive the sampler and be ok().
  ClockSampler(const Nvml& nvml, nvmlDevice_t device, std::chrono::microseconds period);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  void start();          // begins a window (a running one is stopped and dropped first)
  ClockSummary stop();   // ends the window: what its samples say

 private:
  struct Sample {
    unsigned sm_mhz = 0;
    double power_w = -1;  // < 0: no reading
    unsigned long long reasons = 0;
  };
  void poll();

  const Nvml& nvml_;
  nvmlDevice_t device_;
  std::chrono::microseconds period_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::vector<Sample> samples_;  // written by the thread only while running_
};

}  // namespace cs::kernels
