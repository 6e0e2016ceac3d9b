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

#include "common/check.h"
#include "common/nvml.h"

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

namespace cs::kernels {
namespace {

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
