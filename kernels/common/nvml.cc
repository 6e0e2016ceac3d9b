// Host-only code (compiled by the host C++ compiler).
#include "common/nvml.h"

#include <dlfcn.h>

#include <type_traits>

namespace cs::kernels {

#if CS_HAVE_NVML_H
// Where the real header is at hand, hold the signatures to it.
struct NvmlSignatureCheck {
  static_assert(std::is_same_v<Nvml::InitFn, decltype(&::nvmlInit_v2)>);
  static_assert(std::is_same_v<Nvml::ShutdownFn, decltype(&::nvmlShutdown)>);
  static_assert(std::is_same_v<Nvml::ErrorStringFn, decltype(&::nvmlErrorString)>);
  static_assert(std::is_same_v<Nvml::DriverVersionFn, decltype(&::nvmlSystemGetDriverVersion)>);
  static_assert(std::is_same_v<Nvml::HandleByPciFn, decltype(&::nvmlDeviceGetHandleByPciBusId_v2)>);
  static_assert(std::is_same_v<Nvml::ClockFn, decltype(&::nvmlDeviceGetClockInfo)>);
  static_assert(std::is_same_v<Nvml::ClockFn, decltype(&::nvmlDeviceGetMaxClockInfo)>);
  static_assert(std::is_same_v<Nvml::NvLinkStateFn, decltype(&::nvmlDeviceGetNvLinkState)>);
  static_assert(std::is_same_v<Nvml::PowerFn, decltype(&::nvmlDeviceGetEnforcedPowerLimit)>);
  static_assert(std::is_same_v<Nvml::PowerFn, decltype(&::nvmlDeviceGetPowerUsage)>);
  static_assert(NVML_CLOCK_SM == 1 && NVML_CLOCK_MEM == 2 && NVML_FEATURE_ENABLED == 1);
  // The older throttle-reason names and entry point are in every nvml.h; the event-reason names
  // only from NVML 12.2 (driver 535), which an older toolkit's header lacks.
  static_assert(std::is_same_v<Nvml::ReasonsFn, decltype(&::nvmlDeviceGetCurrentClocksThrottleReasons)>);
  static_assert(nvmlClocksThrottleReasonSwPowerCap == kClockEventSwPowerCap &&
                nvmlClocksThrottleReasonHwSlowdown == kClockEventHwSlowdown &&
                nvmlClocksThrottleReasonSwThermalSlowdown == kClockEventSwThermal &&
                nvmlClocksThrottleReasonHwThermalSlowdown == kClockEventHwThermal &&
                nvmlClocksThrottleReasonHwPowerBrakeSlowdown == kClockEventHwPowerBrake);
};
#endif

template <typename Fn>
bool Nvml::sym(Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(lib_, name));
  if (fn == nullptr) error_ = std::string("libnvidia-ml.so.1 lacks ") + name;
  return fn != nullptr;
}

Nvml::Nvml() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) {
    const char* e = dlerror();
    error_ = std::string("cannot load libnvidia-ml.so.1: ") + (e ? e : "unknown error");
    return;
  }
  const bool all = sym(init_, "nvmlInit_v2") && sym(shutdown_, "nvmlShutdown") &&
                   sym(error_string_, "nvmlErrorString") && sym(driver_version_, "nvmlSystemGetDriverVersion") &&
                   sym(handle_by_pci_, "nvmlDeviceGetHandleByPciBusId_v2") && sym(clock_, "nvmlDeviceGetClockInfo") &&
                   sym(max_clock_, "nvmlDeviceGetMaxClockInfo") && sym(nvlink_state_, "nvmlDeviceGetNvLinkState") &&
                   sym(power_limit_, "nvmlDeviceGetEnforcedPowerLimit");
  if (!all) return;
  // Optional entry points: a driver without them still gives the rest. The event reasons took
  // this name in driver 535 (before: nvmlDeviceGetCurrentClocksThrottleReasons, same ABI).
  power_usage_ = reinterpret_cast<PowerFn>(dlsym(lib_, "nvmlDeviceGetPowerUsage"));
  event_reasons_ = reinterpret_cast<ReasonsFn>(dlsym(lib_, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (event_reasons_ == nullptr)
    event_reasons_ = reinterpret_cast<ReasonsFn>(dlsym(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  const nvmlReturn_t r = init_();
  if (r != NVML_SUCCESS) {
    error_ = std::string("nvmlInit_v2 failed: ") + error_string_(r);
    return;
  }
  initialized_ = true;
}

Nvml::~Nvml() {
  if (initialized_) shutdown_();
  if (lib_ != nullptr) dlclose(lib_);
}

std::optional<std::string> Nvml::driver_version() const {
  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (driver_version_(buf, sizeof buf) != NVML_SUCCESS) return std::nullopt;
  return std::string(buf);
}

std::optional<nvmlDevice_t> Nvml::device(const std::string& pci_bus_id) const {
  nvmlDevice_t d = nullptr;
  if (handle_by_pci_(pci_bus_id.c_str(), &d) != NVML_SUCCESS) return std::nullopt;
  return d;
}

std::optional<unsigned> Nvml::clock(nvmlDevice_t d, nvmlClockType_t type, bool max) const {
  unsigned v = 0;
  if ((max ? max_clock_ : clock_)(d, type, &v) != NVML_SUCCESS) return std::nullopt;
  return v;
}

unsigned Nvml::nvlink_active_links(nvmlDevice_t d) const {
  unsigned active = 0;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t s = NVML_FEATURE_DISABLED;
    if (nvlink_state_(d, link, &s) == NVML_SUCCESS && s == NVML_FEATURE_ENABLED) ++active;
  }
  return active;
}

std::optional<double> Nvml::power_limit_w(nvmlDevice_t d) const {
  unsigned mw = 0;
  if (power_limit_(d, &mw) != NVML_SUCCESS) return std::nullopt;
  return mw / 1000.0;
}

std::optional<double> Nvml::power_w(nvmlDevice_t d) const {
  unsigned mw = 0;
  if (power_usage_ == nullptr || power_usage_(d, &mw) != NVML_SUCCESS) return std::nullopt;
  return mw / 1000.0;
}

std::optional<unsigned long long> Nvml::clock_event_reasons(nvmlDevice_t d) const {
  unsigned long long bits = 0;
  if (event_reasons_ == nullptr || event_reasons_(d, &bits) != NVML_SUCCESS) return std::nullopt;
  return bits;
}

}  // namespace cs::kernels
