#include "common/clock_sampler.h"

#include <algorithm>

namespace cs::kernels {

void write_clock_summary(JsonWriter& w, const ClockSummary& s) {
  w.begin_object(true)
      .field("samples", s.samples)
      .field("sm_mhz_mean", s.sm_mhz_mean)
      .field("sm_mhz_min", s.sm_mhz_min)
      .field("sm_mhz_max", s.sm_mhz_max)
      .field("power_w_mean", s.power_w_mean)
      .field("power_w_max", s.power_w_max)
      .field("power_capped_share", s.power_capped_share)
      .field("thermal_share", s.thermal_share)
      .end_object();
}

ClockSummary combine(const std::vector<ClockSummary>& windows) {
  ClockSummary r;
  for (const ClockSummary& w : windows) {
    if (w.samples == 0) continue;
    r.sm_mhz_min = r.samples == 0 ? w.sm_mhz_min : std::min(r.sm_mhz_min, w.sm_mhz_min);
    r.sm_mhz_max = std::max(r.sm_mhz_max, w.sm_mhz_max);
    r.power_w_max = std::max(r.power_w_max, w.power_w_max);
    r.sm_mhz_mean += w.sm_mhz_mean * w.samples;
    r.power_w_mean += w.power_w_mean * w.samples;
    r.power_capped_share += w.power_capped_share * w.samples;
    r.thermal_share += w.thermal_share * w.samples;
    r.samples += w.samples;
  }
  if (r.samples > 0) {
    r.sm_mhz_mean /= r.samples;
    r.power_w_mean /= r.samples;
    r.power_capped_share /= r.samples;
    r.thermal_share /= r.samples;
  }
  return r;
}

ClockSampler::ClockSampler(const Nvml& nvml, nvmlDevice_t device, std::chrono::microseconds period)
    : nvml_(nvml), device_(device), period_(period) {}

ClockSampler::~ClockSampler() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

void ClockSampler::start() {
  stop();
  samples_.clear();
  running_ = true;
  thread_ = std::thread([this] { poll(); });
}

void ClockSampler::poll() {
  auto next = std::chrono::steady_clock::now();
  while (running_) {
    Sample s;
    if (const auto mhz = nvml_.clock(device_, NVML_CLOCK_SM, false)) {
      s.sm_mhz = *mhz;
      s.power_w = nvml_.power_w(device_).value_or(-1.0);
      s.reasons = nvml_.clock_event_reasons(device_).value_or(0);
      samples_.push_back(s);
    }
    next += period_;
    std::this_thread::sleep_until(next);
  }
}

ClockSummary ClockSampler::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
  ClockSummary r;
  if (samples_.empty()) return r;
  r.samples = static_cast<int>(samples_.size());
  r.sm_mhz_min = samples_.front().sm_mhz;
  int powered = 0, capped = 0, thermal = 0;
  constexpr unsigned long long kThermal = kClockEventHwSlowdown | kClockEventSwThermal | kClockEventHwThermal |
                                          kClockEventHwPowerBrake;
  for (const Sample& s : samples_) {
    r.sm_mhz_mean += s.sm_mhz;
    r.sm_mhz_min = std::min(r.sm_mhz_min, static_cast<double>(s.sm_mhz));
    r.sm_mhz_max = std::max(r.sm_mhz_max, static_cast<double>(s.sm_mhz));
    if (s.power_w >= 0) {
      r.power_w_mean += s.power_w;
      r.power_w_max = std::max(r.power_w_max, s.power_w);
      ++powered;
    }
    capped += (s.reasons & kClockEventSwPowerCap) != 0;
    thermal += (s.reasons & kThermal) != 0;
  }
  r.sm_mhz_mean /= r.samples;
  if (powered > 0) r.power_w_mean /= powered;
  r.power_capped_share = static_cast<double>(capped) / r.samples;
  r.thermal_share = static_cast<double>(thermal) / r.samples;
  return r;
}

}  // namespace cs::kernels
