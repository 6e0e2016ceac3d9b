#include "fp8_gemm/timing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/check.h"

namespace cs::kernels::fp8_gemm {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

namespace {

void enqueue_or_throw(const LtGemm& gemm, cudaStream_t stream) {
  const cublasStatus_t st = gemm.enqueue(stream);
  if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasLtMatmul failed: " + cublas_status_name(st));
}

}  // namespace

Timing time_gemm(const LtGemm& gemm, Partition& p, const DeviceBuffer& flush, int warmup, int runs,
                 const std::function<void()>& after_warmup, ClockProbes* probes) {
  if (runs < 1 || static_cast<std::size_t>(runs) > p.start_events.size()) {
    throw std::runtime_error("time_gemm: " + std::to_string(runs) + " runs asked for, " +
                             std::to_string(p.start_events.size()) + " event pairs made");
  }
  if (probes && probes->size() < runs)
    throw std::runtime_error("time_gemm: " + std::to_string(runs) + " runs, room for " + std::to_string(probes->size()) +
                             " clock probes");
  for (int i = 0; i < warmup; ++i) enqueue_or_throw(gemm, p.stream);
  if (after_warmup) {
    CS_CUDA_CHECK(cudaStreamSynchronize(p.stream));
    after_warmup();
  }
  for (int i = 0; i < runs; ++i) {
    const auto u = static_cast<std::size_t>(i);
    // A different byte each time, so that no run finds the flush buffer already holding it.
    CS_CUDA_CHECK(cudaMemsetAsync(flush.get(), (i * 37 + 1) & 0xff, flush.bytes(), p.stream));
    CS_CUDA_CHECK(cudaEventRecord(p.start_events[u], p.stream));
    enqueue_or_throw(gemm, p.stream);
    CS_CUDA_CHECK(cudaEventRecord(p.stop_events[u], p.stream));
    if (probes) probes->enqueue(i, p.stream);
  }
  CS_CUDA_CHECK(cudaStreamSynchronize(p.stream));
  std::vector<double> us(static_cast<std::size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    const auto u = static_cast<std::size_t>(i);
    float ms = 0;
    CS_CUDA_CHECK(cudaEventElapsedTime(&ms, p.start_events[u], p.stop_events[u]));
    us[u] = 1000.0 * static_cast<double>(ms);
  }
  Timing t;
  t.runs = runs;
  t.median_us = quantile(us, 0.5);
  t.p10_us = quantile(us, 0.1);
  t.p90_us = quantile(us, 0.9);
  t.min_us = *std::min_element(us.begin(), us.end());
  t.max_us = *std::max_element(us.begin(), us.end());
  if (probes) {
    std::vector<double> mhz = probes->read_MHz();
    mhz.resize(static_cast<std::size_t>(runs));
    mhz.erase(std::remove(mhz.begin(), mhz.end(), 0.0), mhz.end());
    t.probes = static_cast<int>(mhz.size());
    t.probe_MHz_median = quantile(mhz, 0.5);
    t.probe_MHz_p10 = quantile(mhz, 0.1);
    t.probe_MHz_p90 = quantile(mhz, 0.9);
  }
  return t;
}

}  // namespace cs::kernels::fp8_gemm
