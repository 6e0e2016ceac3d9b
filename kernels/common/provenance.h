// Provenance of a kernel run: which GPUs, driver, CUDA, clocks, host, date and commit produced a
// measurement. Every program here writes it into its JSON report (see kernels/README.md).
// C++17 and free of CUDA headers, so that .cu files and host C++ files can both include it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json_writer.h"

namespace cs::kernels {

struct ClockMhz {
  std::optional<unsigned> current;  // NVML only: the clock at the time of reading
  std::optional<unsigned> max;      // NVML's maximum, else the CUDA device attribute (peak clock)
};

struct GpuInfo {
  int index = 0;                    // CUDA device ordinal (after CUDA_VISIBLE_DEVICES)
  std::string name;                 // "NVIDIA H100 80GB HBM3"
  std::string uuid;                 // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  std::string pci_bus_id;           // "0000:18:00.0"
  int sm_count = 0;
  int cc_major = 0;
  int cc_minor = 0;
  std::string clock_source;         // "nvml" or "cuda_device_attribute"
  ClockMhz sm_clock_mhz;
  ClockMhz memory_clock_mhz;
  std::uint64_t memory_bytes = 0;
  int memory_bus_width_bits = 0;
  int l2_bytes = 0;
  int shared_memory_per_sm_bytes = 0;
  int shared_memory_per_block_optin_bytes = 0;
  int registers_per_sm = 0;
  int max_threads_per_sm = 0;
  bool ecc_enabled = false;
  std::optional<unsigned> nvlink_active_links;  // NVML only
  std::optional<double> power_limit_w;          // NVML only: the enforced power limit
};

struct Provenance {
  std::string program;
  std::vector<std::string> command_line;
  std::string host;
  std::string date_utc;             // ISO 8601, "2026-11-23T07:30:00Z"
  std::string git_commit;           // `git describe --always --dirty`, stamped when the program was built
  std::string build_type;           // CMAKE_BUILD_TYPE
  std::string cuda_architecture;    // what the kernels were compiled for: "sm_90a"
  std::string cuda_compiler_version;  // nvcc's version at build time: "13.0.88"
  std::string cuda_driver_version;  // cudaDriverGetVersion: the newest CUDA the driver supports, "13.0"
  std::string cuda_runtime_version; // cudaRuntimeGetVersion: "13.0"
  std::optional<std::string> nvidia_driver_version;  // NVML only: "580.159.04"
  bool nvml_used = false;
  std::optional<std::string> nvml_error;  // why NVML could not be used, when it could not
  std::optional<std::string> cuda_visible_devices;  // the environment variable, when set
  std::vector<GpuInfo> gpus;
  // peer_access[i][j]: whether GPU i can access GPU j's memory directly (cudaDeviceCanAccessPeer;
  // NVLink or PCIe). The diagonal is empty (null in JSON).
  std::vector<std::vector<std::optional<bool>>> peer_access;
};

struct GpuAvailability {
  int count = 0;
  std::string problem;  // empty when at least one GPU is usable
};

// Counts the visible GPUs without throwing. When none is usable, `problem` says why, e.g.
// "cudaGetDeviceCount failed: cudaErrorInsufficientDriver (...)".
GpuAvailability probe_gpus();

// The standard handling of "no GPU" for a program's main(): prints
//   "<program>: no usable CUDA GPU: <problem>" and a hint to stderr.
// Returns kExitNoGpu so that main() can `return report_no_gpu(...)`.
int report_no_gpu(const std::string& program, const GpuAvailability& availability);

// Reads the provenance of all visible GPUs. Uses NVML (loaded at run time from the driver's
// libnvidia-ml.so.1) for current and maximum clocks, the driver version, NVLink and power limit;
// falls back to CUDA device attributes where NVML is missing. Throws CudaError when a CUDA call
// fails. Creates no CUDA context.
Provenance collect_provenance(int argc, char** argv);

// Writes `p` as one JSON object (the next value of `w`).
void write_provenance(JsonWriter& w, const Provenance& p);

// Opens a bench's JSON document: {"schema_version": .., "provenance": {..}, "bench": { -- the
// caller writes the bench's fields and closes both objects.
void begin_bench_json(JsonWriter& w, int schema_version, const Provenance& p);

// "13.0" for 13000, as cudaDriverGetVersion and cudaRuntimeGetVersion report versions.
std::string cuda_version_string(int version);

}  // namespace cs::kernels
