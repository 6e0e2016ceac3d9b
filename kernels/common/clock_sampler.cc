#include "common/clock_sampler.h"

#include <algorithm>

namespace cs::kernels {

namespace {

// A window of a million samples (over 15 minutes at 1 ms) is more than any case needs; past it
// the thread stops recording rather than risk running out of memory inside itself.
constexpr std::size_t kMaxSamples = std::size_t{1} << 20;

}  // namespace

void write_clock_summary(JsonWriter& w, const ClockSummary& s) {
  w.begin_object(true)
      .field("samples", s.samples)
      .field("sm_mhz_mean", s.sm_mhz_mean)
      .field("sm_mhz_median", s.sm_mhz_median)
      .field("sm_mhz_min", s.sm_mhz_min)
      .field("sm_mhz_max", s.sm_mhz_max)
      .field("power_samples", s.power_samples)
      .field("power_w_mean", s.power_w_mean)
      .field("power_w_max", s.power_w_max)
      .field("power_capped_share", s.power_capped_share)
      .field("hw_or_thermal_slowdown_share", s.hw_or_thermal_slowdown_share)
      .end_object();
}

ClockSummary combine(const std::vector<ClockSummary>& windows) {
  ClockSummary r;
  int with_reasons = 0;
  double capped = 0, slowed = 0;
  for (const ClockSummary& w : windows) {
    if (w.samples == 0) continue;
    r.sm_mhz_min = r.samples == 0 ? w.sm_mhz_min : std::min(r.sm_mhz_min, w.sm_mhz_min);
    r.sm_mhz_max = std::max(r.sm_mhz_max, w.sm_mhz_max);
    r.sm_mhz_mean += w.sm_mhz_mean * w.samples;
    r.sm_mhz_median += w.sm_mhz_median * w.samples;
    r.samples += w.samples;
    r.power_w_max = std::max(r.power_w_max, w.power_w_max);
    r.power_w_mean += w.power_w_mean * w.power_samples;
    r.power_samples += w.power_samples;
    if (w.power_capped_share && w.hw_or_thermal_slowdown_share) {
      capped += *w.power_capped_share * w.samples;
      slowed += *w.hw_or_thermal_slowdown_share * w.samples;
      with_reasons += w.samples;
    }
  }
  if (r.samples > 0) {
    r.sm_mhz_mean /= r.samples;
    r.sm_mhz_median /= r.samples;
  }
  if (r.power_samples > 0) r.power_w_mean /= r.power_samples;
  if (with_reasons > 0) {
    r.power_capped_share = capped / with_reasons;
    r.hw_or_thermal_slowdown_share = slowed / with_reasons;
  }
  return r;
}

std::unique_ptr<ClockSampler> ClockSampler::open(const std::string& pci_bus_id, std::chrono::microseconds period,
                                                 std::string& why) {
  auto nvml = std::make_unique<Nvml>();
  if (!nvml->ok()) {
    why = nvml->error();
    return nullptr;
  }
  const auto device = nvml->device(pci_bus_id);
  if (!device) {
    why = "NVML has no GPU at PCI bus id " + pci_bus_id;
    return nullptr;
  }
  return std::unique_ptr<ClockSampler>(new ClockSampler(std::move(nvml), *device, period));
}

ClockSampler::ClockSampler(std::unique_ptr<Nvml> nvml, nvmlDevice_t device, std::chrono::microseconds period)
    : nvml_(std::move(nvml)), device_(device), period_(period) {}

ClockSampler::~ClockSampler() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

void ClockSampler::start() {
  stop();
  samples_.clear();
  samples_.reserve(4096);
  running_ = true;
  thread_ = std::thread([this] { poll(); });
}

void ClockSampler::poll() {
  auto next = std::chrono::steady_clock::now();
  while (running_ && samples_.size() < kMaxSamples) {
    if (const auto mhz = nvml_->clock(device_, NVML_CLOCK_SM, false)) {
      Sample s;
      s.sm_mhz = *mhz;
      s.power_w = nvml_->power_w(device_).value_or(-1.0);
      s.reasons = nvml_->clock_event_reasons(device_);
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
  std::vector<unsigned> mhz;
  mhz.reserve(samples_.size());
  int with_reasons = 0, capped = 0, slowed = 0;
  constexpr unsigned long long kSlowdown =
      kClockEventHwSlowdown | kClockEventSwThermal | kClockEventHwThermal | kClockEventHwPowerBrake;
  for (const Sample& s : samples_) {
    mhz.push_back(s.sm_mhz);
    r.sm_mhz_mean += s.sm_mhz;
    if (s.power_w >= 0) {
      r.power_w_mean += s.power_w;
      r.power_w_max = std::max(r.power_w_max, s.power_w);
      ++r.power_samples;
    }
    if (s.reasons) {
      ++with_reasons;
      capped += (*s.reasons & kClockEventSwPowerCap) != 0;
      slowed += (*s.reasons & kSlowdown) != 0;
    }
  }
  std::sort(mhz.begin(), mhz.end());
  r.sm_mhz_min = mhz.front();
  r.sm_mhz_max = mhz.back();
  const std::size_t n = mhz.size();
  r.sm_mhz_median = n % 2 ? mhz[n / 2] : 0.5 * (mhz[n / 2 - 1] + mhz[n / 2]);
  r.sm_mhz_mean /= r.samples;
  if (r.power_samples > 0) r.power_w_mean /= r.power_samples;
  if (with_reasons > 0) {
    r.power_capped_share = static_cast<double>(capped) / with_reasons;
    r.hw_or_thermal_slowdown_share = static_cast<double>(slowed) / with_reasons;
  }
  return r;
}

}  // namespace cs::kernels
