// NVML, loaded at run time (dlopen of the driver's libnvidia-ml.so.1) rather than linked
// (CUDA::nvml): a linked program would not even start where the toolkit is installed but the
// driver is not, and could then not exit with kExitNoGpu and a clear message. Only types and
// constants come from nvml.h, which not every toolkit installs (cuda-nvml-dev); without it, the
// few declarations used here are written out below, as NVML's stable C ABI has them.
#pragma once

#include <optional>
#include <string>

#if __has_include(<nvml.h>)
#include <nvml.h>
#define CS_HAVE_NVML_H 1
#else
#define CS_HAVE_NVML_H 0
extern "C" {
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef enum nvmlReturn_enum { NVML_SUCCESS = 0 } nvmlReturn_t;
typedef enum nvmlClockType_enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 } nvmlClockType_t;
typedef enum nvmlEnableState_enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;
}
#define NVML_NVLINK_MAX_LINKS 18
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#endif

namespace cs::kernels {

// Why the clocks are below their maximum (nvmlClocksEventReason*, NVML's stable bit values).
inline constexpr unsigned long long kClockEventSwPowerCap = 0x4;
inline constexpr unsigned long long kClockEventHwSlowdown = 0x8;
inline constexpr unsigned long long kClockEventSwThermal = 0x20;
inline constexpr unsigned long long kClockEventHwThermal = 0x40;
inline constexpr unsigned long long kClockEventHwPowerBrake = 0x80;

// The few NVML entry points the programs use; `error` says why NVML is unusable when `ok()` is
// false. Not copyable; the library stays loaded while the object lives.
class Nvml {
 public:
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ok() const { return initialized_; }
  const std::string& error() const { return error_; }

  std::optional<std::string> driver_version() const;
  std::optional<nvmlDevice_t> device(const std::string& pci_bus_id) const;
  std::optional<unsigned> clock(nvmlDevice_t d, nvmlClockType_t type, bool max) const;
  // Links that answer "active"; links that do not exist (or a GPU without NVLink) count as none.
  unsigned nvlink_active_links(nvmlDevice_t d) const;
  std::optional<double> power_limit_w(nvmlDevice_t d) const;
  // The board's power draw now (NVML averages it over about a second on Hopper).
  std::optional<double> power_w(nvmlDevice_t d) const;
  // The clock event (throttle) reasons active now, kClockEvent* bits.
  std::optional<unsigned long long> clock_event_reasons(nvmlDevice_t d) const;

 private:
  template <typename Fn>
  bool sym(Fn& fn, const char* name);

  using InitFn = nvmlReturn_t (*)();
  using ShutdownFn = nvmlReturn_t (*)();
  using ErrorStringFn = const char* (*)(nvmlReturn_t);
  using DriverVersionFn = nvmlReturn_t (*)(char*, unsigned int);
  using HandleByPciFn = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
  using ClockFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned int*);
  using NvLinkStateFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlEnableState_t*);
  using PowerFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
  using ReasonsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
  friend struct NvmlSignatureCheck;

  void* lib_ = nullptr;
  bool initialized_ = false;
  std::string error_;
  InitFn init_ = nullptr;
  ShutdownFn shutdown_ = nullptr;
  ErrorStringFn error_string_ = nullptr;
  DriverVersionFn driver_version_ = nullptr;
  HandleByPciFn handle_by_pci_ = nullptr;
  ClockFn clock_ = nullptr;
  ClockFn max_clock_ = nullptr;
  NvLinkStateFn nvlink_state_ = nullptr;
  PowerFn power_limit_ = nullptr;
  PowerFn power_usage_ = nullptr;    // optional: absent, power_w() answers nothing
  ReasonsFn event_reasons_ = nullptr;  // optional: absent, clock_event_reasons() answers nothing
};

}  // namespace cs::kernels
