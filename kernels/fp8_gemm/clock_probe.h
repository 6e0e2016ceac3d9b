// The SM clock a GEMM left, read on the SMs: NVML's clock and power lag a short case by up to
// hundreds of milliseconds (its board power is an average over about a second: in
// calibrate/data/h200/fp8_gemm_clocks_falling.json the first case, 1.7 ms FP8 GEMMs on every SM,
// reads 280 W), so cs_fp8_gemm --probe-clocks runs, right after each timed GEMM, one thread that
// spins for a fixed count of SM cycles (clock64) and reads the global timer (ns) around them: the
// cycles over the nanoseconds are the SM clock the GEMMs before it set, since the power controller
// averages over tens of milliseconds and the probe, about 50 us on one SM, hardly moves it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace cs::kernels::fp8_gemm {

// SM cycles one probe spins for: about 50 us at 1980 MHz, 25 times the timer's 1-2 us steps.
inline constexpr long long kProbeCycles = 100000;

// Device room for `probes` probes; each writes (cycles, nanoseconds) into its own slot.
class ClockProbes {
 public:
  explicit ClockProbes(int probes);
  ~ClockProbes();
  ClockProbes(const ClockProbes&) = delete;
  ClockProbes& operator=(const ClockProbes&) = delete;

  int size() const { return probes_; }
  // Queues probe `i` (0 <= i < size()) on `stream`.
  void enqueue(int i, cudaStream_t stream);
  // After the stream has finished: each probe's SM clock, MHz (0 where the timer did not move).
  std::vector<double> read_MHz() const;

 private:
  int probes_ = 0;
  unsigned long long* slots_ = nullptr;  // 2 per probe: cycles, nanoseconds
};

}  // namespace cs::kernels::fp8_gemm
