// Host-only code (compiled by the host C++ compiler, linked against the static CUDA runtime).
#include "common/provenance.h"

#include "clustersim/version.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <type_traits>

#include "common/check.h"

// Set by kernels/CMakeLists.txt.
#ifndef CS_GIT_DESCRIBE
#define CS_GIT_DESCRIBE "unknown"
#endif
#ifndef CS_BUILD_TYPE
#define CS_BUILD_TYPE "unknown"
#endif
#ifndef CS_CUDA_ARCHITECTURE
#define CS_CUDA_ARCHITECTURE "unknown"
#endif
#ifndef CS_CUDA_COMPILER_VERSION
#define CS_CUDA_COMPILER_VERSION "unknown"
#endif

// NVML is loaded at run time (dlopen of the driver's libnvidia-ml.so.1) rather than linked
// (CUDA::nvml): a linked program would not even start where the toolkit is installed but the
// driver is not, and could then not exit with kExitNoGpu and a clear message. Only types and
// constants come from nvml.h, which not every toolkit installs (cuda-nvml-dev); without it, the
// few declarations used here are written out below, as NVML's stable C ABI has them.
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
namespace {

using NvmlInitFn = nvmlReturn_t (*)();
using NvmlShutdownFn = nvmlReturn_t (*)();
using NvmlErrorStringFn = const char* (*)(nvmlReturn_t);
using NvmlDriverVersionFn = nvmlReturn_t (*)(char*, unsigned int);
using NvmlHandleByPciFn = nvmlReturn_t (*)(const char*, nvmlDevice_t*);
using NvmlClockFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned int*);
using NvmlNvLinkStateFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlEnableState_t*);
using NvmlPowerLimitFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);

#if CS_HAVE_NVML_H
// Where the real header is at hand, hold the signatures above to it.
static_assert(std::is_same_v<NvmlInitFn, decltype(&::nvmlInit_v2)>);
static_assert(std::is_same_v<NvmlShutdownFn, decltype(&::nvmlShutdown)>);
static_assert(std::is_same_v<NvmlErrorStringFn, decltype(&::nvmlErrorString)>);
static_assert(std::is_same_v<NvmlDriverVersionFn, decltype(&::nvmlSystemGetDriverVersion)>);
static_assert(std::is_same_v<NvmlHandleByPciFn, decltype(&::nvmlDeviceGetHandleByPciBusId_v2)>);
static_assert(std::is_same_v<NvmlClockFn, decltype(&::nvmlDeviceGetClockInfo)>);
static_assert(std::is_same_v<NvmlClockFn, decltype(&::nvmlDeviceGetMaxClockInfo)>);
static_assert(std::is_same_v<NvmlNvLinkStateFn, decltype(&::nvmlDeviceGetNvLinkState)>);
static_assert(std::is_same_v<NvmlPowerLimitFn, decltype(&::nvmlDeviceGetEnforcedPowerLimit)>);
static_assert(NVML_CLOCK_SM == 1 && NVML_CLOCK_MEM == 2 && NVML_FEATURE_ENABLED == 1);
#endif

// The few NVML entry points used here; `error` says why NVML is unusable when `ok()` is false.
class Nvml {
 public:
  Nvml() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) {
      const char* e = dlerror();
      error_ = std::string("cannot load libnvidia-ml.so.1: ") + (e ? e : "unknown error");
      return;
    }
    const bool all = sym(init_, "nvmlInit_v2") && sym(shutdown_, "nvmlShutdown") &&
                     sym(error_string_, "nvmlErrorString") &&
                     sym(driver_version_, "nvmlSystemGetDriverVersion") &&
                     sym(handle_by_pci_, "nvmlDeviceGetHandleByPciBusId_v2") &&
                     sym(clock_, "nvmlDeviceGetClockInfo") && sym(max_clock_, "nvmlDeviceGetMaxClockInfo") &&
                     sym(nvlink_state_, "nvmlDeviceGetNvLinkState") &&
                     sym(power_limit_, "nvmlDeviceGetEnforcedPowerLimit");
    if (!all) return;
    const nvmlReturn_t r = init_();
    if (r != NVML_SUCCESS) {
      error_ = std::string("nvmlInit_v2 failed: ") + error_string_(r);
      return;
    }
    initialized_ = true;
  }
  ~Nvml() {
    if (initialized_) shutdown_();
    if (lib_ != nullptr) dlclose(lib_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ok() const { return initialized_; }
  const std::string& error() const { return error_; }

  std::optional<std::string> driver_version() const {
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (driver_version_(buf, sizeof buf) != NVML_SUCCESS) return std::nullopt;
    return std::string(buf);
  }
  std::optional<nvmlDevice_t> device(const std::string& pci_bus_id) const {
    nvmlDevice_t d = nullptr;
    if (handle_by_pci_(pci_bus_id.c_str(), &d) != NVML_SUCCESS) return std::nullopt;
    return d;
  }
  std::optional<unsigned> clock(nvmlDevice_t d, nvmlClockType_t type, bool max) const {
    unsigned v = 0;
    if ((max ? max_clock_ : clock_)(d, type, &v) != NVML_SUCCESS) return std::nullopt;
    return v;
  }
  // Links that answer "active"; links that do not exist (or a GPU without NVLink) count as none.
  unsigned nvlink_active_links(nvmlDevice_t d) const {
    unsigned active = 0;
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      nvmlEnableState_t s = NVML_FEATURE_DISABLED;
      if (nvlink_state_(d, link, &s) == NVML_SUCCESS && s == NVML_FEATURE_ENABLED) ++active;
    }
    return active;
  }
  std::optional<double> power_limit_w(nvmlDevice_t d) const {
    unsigned mw = 0;
    if (power_limit_(d, &mw) != NVML_SUCCESS) return std::nullopt;
    return mw / 1000.0;
  }

 private:
  template <typename Fn>
  bool sym(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(dlsym(lib_, name));
    if (fn == nullptr) error_ = std::string("libnvidia-ml.so.1 lacks ") + name;
    return fn != nullptr;
  }

  void* lib_ = nullptr;
  bool initialized_ = false;
  std::string error_;
  NvmlInitFn init_ = nullptr;
  NvmlShutdownFn shutdown_ = nullptr;
  NvmlErrorStringFn error_string_ = nullptr;
  NvmlDriverVersionFn driver_version_ = nullptr;
  NvmlHandleByPciFn handle_by_pci_ = nullptr;
  NvmlClockFn clock_ = nullptr;
  NvmlClockFn max_clock_ = nullptr;
  NvmlNvLinkStateFn nvlink_state_ = nullptr;
  NvmlPowerLimitFn power_limit_ = nullptr;
};

std::string format_uuid(const cudaUUID_t& u) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    const auto b = static_cast<unsigned char>(u.bytes[i]);
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 0xf]);
  }
  return s;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

int attribute(cudaDeviceAttr attr, int device) {
  int v = 0;
  CS_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, device));
  return v;
}

void write_clock(JsonWriter& w, std::string_view key, const ClockMhz& c) {
  w.key(key).begin_object(true).field("current", c.current).field("max", c.max).end_object();
}

}  // namespace

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

GpuAvailability probe_gpus() {
  GpuAvailability a;
  const cudaError_t e = cudaGetDeviceCount(&a.count);
  if (e != cudaSuccess) {
    a.count = 0;
    a.problem = "cudaGetDeviceCount failed: " + describe(e);
    // Without any driver the runtime also says "insufficient driver": tell the two apart.
    if (e == cudaErrorInsufficientDriver) {
      if (void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
        dlclose(lib);
      } else {
        const char* why = dlerror();
        a.problem = "no NVIDIA driver: libcuda.so.1 cannot be loaded (" +
                    std::string(why ? why : "unknown error") + "); " + a.problem;
      }
    }
  } else if (a.count == 0) {
    a.problem = "cudaGetDeviceCount found no device";
  }
  return a;
}

int report_no_gpu(const std::string& program, const GpuAvailability& availability) {
  std::fprintf(stderr, "%s: no usable CUDA GPU: %s\n", program.c_str(), availability.problem.c_str());
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  std::fprintf(stderr,
               "%s: these programs need an NVIDIA GPU (Hopper, sm_90a) and its driver; check "
               "nvidia-smi%s%s%s\n",
               program.c_str(), visible ? " and CUDA_VISIBLE_DEVICES (now \"" : "",
               visible ? visible : "", visible ? "\")" : "");
  return kExitNoGpu;
}

Provenance collect_provenance(int argc, char** argv) {
  Provenance p;
  if (argc > 0 && argv[0] != nullptr) {
    std::string a0 = argv[0];
    const auto slash = a0.find_last_of('/');
    p.program = slash == std::string::npos ? a0 : a0.substr(slash + 1);
  }
  for (int i = 0; i < argc; ++i) p.command_line.emplace_back(argv[i] ? argv[i] : "");
  p.host = host_name();
  p.date_utc = utc_now_iso8601();
  p.git_commit = CLUSTERSIM_GIT_DESCRIBE;  // stamped at build time
  p.build_type = CS_BUILD_TYPE;
  p.cuda_architecture = CS_CUDA_ARCHITECTURE;
  p.cuda_compiler_version = CS_CUDA_COMPILER_VERSION;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) p.cuda_visible_devices = v;

  int driver = 0;
  int runtime = 0;
  CS_CUDA_CHECK(cudaDriverGetVersion(&driver));
  CS_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  p.cuda_driver_version = cuda_version_string(driver);
  p.cuda_runtime_version = cuda_version_string(runtime);

  const Nvml nvml;
  p.nvml_used = nvml.ok();
  if (nvml.ok()) {
    p.nvidia_driver_version = nvml.driver_version();
  } else {
    p.nvml_error = nvml.error();
  }

  int count = 0;
  CS_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    CS_CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    GpuInfo g;
    g.index = d;
    g.name = prop.name;
    g.uuid = format_uuid(prop.uuid);
    char bus[32] = {};
    CS_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    g.pci_bus_id = bus;
    g.sm_count = prop.multiProcessorCount;
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.memory_bytes = prop.totalGlobalMem;
    g.memory_bus_width_bits = prop.memoryBusWidth;
    g.l2_bytes = prop.l2CacheSize;
    g.shared_memory_per_sm_bytes = static_cast<int>(prop.sharedMemPerMultiprocessor);
    g.shared_memory_per_block_optin_bytes = static_cast<int>(prop.sharedMemPerBlockOptin);
    g.registers_per_sm = prop.regsPerMultiprocessor;
    g.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    g.ecc_enabled = prop.ECCEnabled != 0;

    // The CUDA attributes give the peak clocks in kHz; NVML, where it answers, replaces them.
    g.clock_source = "cuda_device_attribute";
    g.sm_clock_mhz.max = static_cast<unsigned>(attribute(cudaDevAttrClockRate, d) / 1000);
    g.memory_clock_mhz.max = static_cast<unsigned>(attribute(cudaDevAttrMemoryClockRate, d) / 1000);
    if (nvml.ok()) {
      if (const auto h = nvml.device(g.pci_bus_id)) {
        g.sm_clock_mhz.current = nvml.clock(*h, NVML_CLOCK_SM, false);
        g.memory_clock_mhz.current = nvml.clock(*h, NVML_CLOCK_MEM, false);
        const auto sm_max = nvml.clock(*h, NVML_CLOCK_SM, true);
        const auto mem_max = nvml.clock(*h, NVML_CLOCK_MEM, true);
        if (sm_max && mem_max) {
          g.sm_clock_mhz.max = sm_max;
          g.memory_clock_mhz.max = mem_max;
          g.clock_source = "nvml";
        }
        g.nvlink_active_links = nvml.nvlink_active_links(*h);
        g.power_limit_w = nvml.power_limit_w(*h);
      }
    }
    p.gpus.push_back(std::move(g));
  }

  p.peer_access.assign(static_cast<std::size_t>(count), std::vector<std::optional<bool>>(static_cast<std::size_t>(count)));
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < count; ++j) {
      if (i == j) continue;
      int can = 0;
      CS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, i, j));
      p.peer_access[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = can != 0;
    }
  }
  return p;
}

void begin_bench_json(JsonWriter& w, int schema_version, const Provenance& p) {
  w.begin_object();
  w.field("schema_version", schema_version);
  w.key("provenance");
  write_provenance(w, p);
  w.key("bench").begin_object();
}

void write_provenance(JsonWriter& w, const Provenance& p) {
  w.begin_object();
  w.field("program", p.program);
  w.field("command_line", p.command_line);
  w.field("host", p.host);
  w.field("date_utc", p.date_utc);
  w.field("git_commit", p.git_commit);
  w.key("build").begin_object();
  w.field("build_type", p.build_type);
  w.field("cuda_architecture", p.cuda_architecture);
  w.field("cuda_compiler_version", p.cuda_compiler_version);
  w.end_object();
  w.field("cuda_driver_version", p.cuda_driver_version);
  w.field("cuda_runtime_version", p.cuda_runtime_version);
  w.field("nvidia_driver_version", p.nvidia_driver_version);
  w.key("nvml").begin_object(true).field("used", p.nvml_used).field("error", p.nvml_error).end_object();
  w.field("cuda_visible_devices", p.cuda_visible_devices);
  w.key("gpus").begin_array();
  for (const GpuInfo& g : p.gpus) {
    w.begin_object();
    w.field("index", g.index);
    w.field("name", g.name);
    w.field("uuid", g.uuid);
    w.field("pci_bus_id", g.pci_bus_id);
    w.field("compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor));
    w.field("sm_count", g.sm_count);
    w.field("clock_source", g.clock_source);
    write_clock(w, "sm_clock_mhz", g.sm_clock_mhz);
    write_clock(w, "memory_clock_mhz", g.memory_clock_mhz);
    w.field("memory_bytes", g.memory_bytes);
    w.field("memory_bus_width_bits", g.memory_bus_width_bits);
    w.field("l2_bytes", g.l2_bytes);
    w.field("shared_memory_per_sm_bytes", g.shared_memory_per_sm_bytes);
    w.field("shared_memory_per_block_optin_bytes", g.shared_memory_per_block_optin_bytes);
    w.field("registers_per_sm", g.registers_per_sm);
    w.field("max_threads_per_sm", g.max_threads_per_sm);
    w.field("ecc_enabled", g.ecc_enabled);
    w.field("nvlink_active_links", g.nvlink_active_links);
    w.field("power_limit_w", g.power_limit_w);
    w.end_object();
  }
  w.end_array();
  w.key("peer_access").begin_array();
  for (const auto& row : p.peer_access) w.value(row);
  w.end_array();
  w.end_object();
}

}  // namespace cs::kernels
