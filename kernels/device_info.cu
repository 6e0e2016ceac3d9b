// cs_device_info: describes every visible GPU and the run's provenance as one JSON object on
// stdout (schema_version 1; kernels/README.md shows it), after checking on each GPU that a
// trivial kernel computes what the host computes.
//
// Exit codes: 0 done; 1 error (a CUDA call failed, bad arguments); 2 no usable GPU or driver;
// 3 a GPU's result disagreed with the host (nothing is printed on stdout then).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/json_writer.h"
#include "common/provenance.h"

namespace {

using cs::kernels::JsonWriter;

constexpr int kSchemaVersion = 1;

// The trivial kernel: out[i] = (a * in[i] + b) ^ i in 32-bit unsigned arithmetic (wrapping), which
// the host reproduces exactly.
__host__ __device__ inline std::uint32_t affine_xor(std::uint32_t x, std::uint32_t a, std::uint32_t b,
                                                    std::size_t i) {
  return (a * x + b) ^ static_cast<std::uint32_t>(i);
}

__global__ void affine_xor_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out,
                                  std::size_t n, std::uint32_t a, std::uint32_t b) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = affine_xor(in[i], a, b, i);
  }
}

// Device memory freed on every path out.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) { CS_CUDA_CHECK(cudaMalloc(&ptr_, bytes)); }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

struct CheckResult {
  int gpu = 0;
  std::size_t elements = 0;
  std::size_t mismatches = 0;
  std::size_t first_mismatch = 0;
  std::string problem;  // why the check could not run (e.g. no kernel image for this GPU)
  bool passed() const { return problem.empty() && mismatches == 0; }
};

CheckResult check_gpu(const cs::kernels::GpuInfo& gpu) {
  constexpr std::size_t kElements = std::size_t{1} << 22;  // 16 MiB per buffer
  constexpr std::uint32_t kA = 2654435761u;                 // Knuth's multiplicative constant
  constexpr std::uint32_t kB = 0x9e3779b9u;

  CheckResult r;
  r.gpu = gpu.index;
  r.elements = kElements;
  CS_CUDA_CHECK(cudaSetDevice(gpu.index));

  std::vector<std::uint32_t> in(kElements);
  std::uint32_t state = 0x12345678u ^ static_cast<std::uint32_t>(gpu.index);  // xorshift32
  for (auto& x : in) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    x = state;
  }
  std::vector<std::uint32_t> out(kElements, 0);

  const DeviceBuffer d_in(kElements * sizeof(std::uint32_t));
  const DeviceBuffer d_out(kElements * sizeof(std::uint32_t));
  CS_CUDA_CHECK(cudaMemcpy(d_in.as<std::uint32_t>(), in.data(), kElements * sizeof(std::uint32_t),
                           cudaMemcpyHostToDevice));
  CS_CUDA_CHECK(cudaMemset(d_out.as<std::uint32_t>(), 0, kElements * sizeof(std::uint32_t)));

  const int blocks = 4 * (gpu.sm_count > 0 ? gpu.sm_count : 1);
  affine_xor_kernel<<<blocks, 256>>>(d_in.as<std::uint32_t>(), d_out.as<std::uint32_t>(), kElements, kA, kB);
  const cudaError_t launch = cudaGetLastError();
  if (launch == cudaErrorNoKernelImageForDevice || launch == cudaErrorUnsupportedPtxVersion) {
    r.problem = "no kernel image for this GPU (" + gpu.name + ", compute capability " +
                std::to_string(gpu.cc_major) + "." + std::to_string(gpu.cc_minor) +
                "): these kernels are built for sm_90a (Hopper) only: " + cs::kernels::describe(launch);
    return r;
  }
  CS_CUDA_CHECK(launch);
  CS_CUDA_CHECK(cudaDeviceSynchronize());
  CS_CUDA_CHECK(cudaMemcpy(out.data(), d_out.as<std::uint32_t>(), kElements * sizeof(std::uint32_t),
                           cudaMemcpyDeviceToHost));

  for (std::size_t i = 0; i < kElements; ++i) {
    if (out[i] != affine_xor(in[i], kA, kB, i)) {
      if (r.mismatches++ == 0) r.first_mismatch = i;
    }
  }
  return r;
}

void print_usage(const char* argv0) {
  std::printf(
      "usage: %s [--compact]\n"
      "Checks a trivial kernel on every visible GPU against the host, then prints one JSON object\n"
      "(schema_version %d) describing the GPUs and the run's provenance on stdout.\n"
      "  --compact   print the JSON on one line\n"
      "Exit codes: 0 done, 1 error, 2 no usable GPU or driver, 3 a GPU's result was wrong.\n",
      argv0, kSchemaVersion);
}

int run(int argc, char** argv) {
  const std::string program = "cs_device_info";
  int indent = 2;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      print_usage(argv[0]);
      return cs::kernels::kExitOk;
    }
    if (std::strcmp(argv[i], "--compact") == 0) {
      indent = 0;
      continue;
    }
    std::fprintf(stderr, "%s: unknown argument '%s' (try --help)\n", program.c_str(), argv[i]);
    return cs::kernels::kExitError;
  }

  const cs::kernels::GpuAvailability availability = cs::kernels::probe_gpus();
  if (availability.count == 0) return cs::kernels::report_no_gpu(program, availability);

  const cs::kernels::Provenance prov = cs::kernels::collect_provenance(argc, argv);

  // Correctness first: nothing is reported unless every GPU computed the right result.
  std::vector<CheckResult> checks;
  bool all_passed = true;
  for (const auto& gpu : prov.gpus) {
    checks.push_back(check_gpu(gpu));
    const CheckResult& c = checks.back();
    if (!c.passed()) {
      all_passed = false;
      if (!c.problem.empty()) {
        std::fprintf(stderr, "%s: GPU %d: check failed: %s\n", program.c_str(), c.gpu, c.problem.c_str());
      } else {
        std::fprintf(stderr, "%s: GPU %d (%s): check failed: %zu of %zu elements differ from the host, first at %zu\n",
                     program.c_str(), c.gpu, gpu.name.c_str(), c.mismatches, c.elements, c.first_mismatch);
      }
    }
  }
  if (!all_passed) return cs::kernels::kExitCheckFailed;

  std::string out;
  JsonWriter w(out, indent);
  w.begin_object();
  w.field("schema_version", kSchemaVersion);
  w.key("provenance");
  cs::kernels::write_provenance(w, prov);
  w.key("checks").begin_array();
  for (const CheckResult& c : checks) {
    w.begin_object(true)
        .field("gpu", c.gpu)
        .field("kernel", "affine_xor_u32")
        .field("elements", c.elements)
        .field("mismatches", c.mismatches)
        .field("passed", c.passed())
        .end_object();
  }
  w.end_array();
  w.end_object();
  out.push_back('\n');
  if (!cs::kernels::write_stdout(program.c_str(), out)) return cs::kernels::kExitError;
  return cs::kernels::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return cs::kernels::guarded_main("cs_device_info", [&] { return run(argc, argv); });
}
