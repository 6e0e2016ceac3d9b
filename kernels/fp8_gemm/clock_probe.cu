#include "fp8_gemm/clock_probe.h"

#include "common/check.h"

namespace cs::kernels::fp8_gemm {

namespace {

__global__ void clock_probe_kernel(long long cycles, unsigned long long* slot) {
  unsigned long long t0 = 0, t1 = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  long long c = c0;
  while (c - c0 < cycles) c = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  slot[0] = static_cast<unsigned long long>(c - c0);
  slot[1] = t1 - t0;
}

}  // namespace

ClockProbes::ClockProbes(int probes) : probes_(probes) {
  CS_CUDA_CHECK(cudaMalloc(&slots_, 2 * sizeof(unsigned long long) * static_cast<size_t>(probes)));
  CS_CUDA_CHECK(cudaMemset(slots_, 0, 2 * sizeof(unsigned long long) * static_cast<size_t>(probes)));
}

ClockProbes::~ClockProbes() { cudaFree(slots_); }

void ClockProbes::enqueue(int i, cudaStream_t stream) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(kProbeCycles, slots_ + 2 * i);
  CS_CUDA_CHECK(cudaGetLastError());
}

std::vector<double> ClockProbes::read_MHz() const {
  std::vector<unsigned long long> host(2 * static_cast<size_t>(probes_));
  CS_CUDA_CHECK(cudaMemcpy(host.data(), slots_, host.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  std::vector<double> mhz(static_cast<size_t>(probes_));
  for (size_t i = 0; i < mhz.size(); ++i)
    mhz[i] = host[2 * i + 1] > 0 ? 1e3 * static_cast<double>(host[2 * i]) / static_cast<double>(host[2 * i + 1]) : 0.0;
  return mhz;
}

}  // namespace cs::kernels::fp8_gemm
