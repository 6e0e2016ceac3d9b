// Timing of one GEMM on one partition: CUDA events around each run, L2 made cold before each run
// by writing a buffer several times its size, and the distribution of the runs.
#pragma once

#include <functional>
#include <vector>

#include "fp8_gemm/clock_probe.h"
#include "fp8_gemm/device_buffer.h"
#include "fp8_gemm/lt_matmul.h"
#include "fp8_gemm/sm_partition.h"

namespace cs::kernels::fp8_gemm {

struct Timing {
  int runs = 0;
  double median_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  double min_us = 0;
  double max_us = 0;
  // With probes: the SM clock right after each timed run (fp8_gemm/clock_probe.h); 0 probes without.
  int probes = 0;
  double probe_MHz_median = 0, probe_MHz_p10 = 0, probe_MHz_p90 = 0;
};

// The q-quantile (0..1) of `values`, interpolating linearly between order statistics; 0 if empty.
double quantile(std::vector<double> values, double q);

// Runs `gemm` `warmup` times, then `runs` times (runs <= the partition's event pairs), each time
// after writing all of `flush` on the same stream; the events bracket the GEMM alone (all groups).
// `after_warmup`, when given, is called once the warm-up runs have finished, before the timed ones
// are queued (a clock sampler starts there). `probes`, when given (at least `runs` of them), reads
// the SM clock right after each timed run, outside its events. p's context must be current. Throws
// std::runtime_error when cuBLASLt fails, CudaError on CUDA errors.
Timing time_gemm(const LtGemm& gemm, Partition& p, const DeviceBuffer& flush, int warmup, int runs,
                 const std::function<void()>& after_warmup = {}, ClockProbes* probes = nullptr);

}  // namespace cs::kernels::fp8_gemm
