// cs_overlap's per-GPU state, measured cases and their console line (host code).
#pragma once

#include <cublasLt.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock_sampler.h"
#include "fp8_gemm/device_buffer.h"
#include "fp8_gemm/lt_matmul.h"
#include "fp8_gemm/operands.h"
#include "fp8_gemm/shapes.h"
#include "fp8_gemm/sm_partition.h"
#include "fp8_gemm/timing.h"
#include "overlap/stats.h"

namespace cs::kernels::overlap {

namespace fg = cs::kernels::fp8_gemm;
namespace ov = cs::kernels::overlap;

inline constexpr int kMaxOps = 150;  // per stream and window: well inside the launch queue (the gate waits)

// One GPU: its primary context, cuBLASLt, the operands of every shape, the stamp buffer.
struct Gpu {
  int dev = 0;
  std::unique_ptr<fg::SmPartitions> parts;
  cublasLtHandle_t lt = nullptr;
  std::unique_ptr<fg::DeviceBuffer> workspace;
  std::vector<std::unique_ptr<fg::Operands>> ops;
  std::unique_ptr<fg::DeviceBuffer> stamps;  // [0, kMaxOps] GEMM stream, then the all-to-all stream's
  unsigned long long* gemm_slots() const { return stamps->as<unsigned long long>(); }
  unsigned long long* a2a_slots() const { return stamps->as<unsigned long long>() + kMaxOps + 1; }
};

struct WindowStamps {
  std::vector<ov::Stamps> gemm, a2a;  // per GPU
  ClockSummary clocks;                // GPU 0's, with --sample-clocks (else no samples)
};

struct PerGpu {
  double gemm_alone_us = 0, gemm_together_us = 0, a2a_alone_us = 0, a2a_together_us = 0;
  double makespan_us = 0, gemm_span_us = 0, a2a_span_us = 0;
  int gemm_ops_inside = 0, a2a_ops_inside = 0;
  fg::CheckResult check, check_after;
};

struct Case {
  std::string shape;
  const fg::GemmShape* gs = nullptr;
  int k = 0, comm_sms = 0, compute_sms = 0, sm_count_target = 0;
  int n_gemm = 0, m_a2a = 0, reps = 0;
  fg::AlgoInfo algo;
  std::vector<PerGpu> gpu;
  // Slowest GPU's values.
  double gemm_alone_us = 0, gemm_together_us = 0, a2a_alone_us = 0, a2a_together_us = 0, makespan_us = 0;
  double serial_us = 0, ideal_us = 0;
  bool a2a_checked = false, a2a_checked_after = false;
  // With --sample-clocks: GPU 0's clocks over the windows of each kind.
  std::optional<ClockSummary> clocks_gemm_alone, clocks_a2a_alone, clocks_together;
};

inline double median(const std::vector<double>& v) { return fg::quantile(v, 0.5); }

inline double sum_gemm_flops(const fg::GemmShape& s) { return s.flops(); }

inline std::string table_line(const Case& c, double a2a_bytes, int n) {
  char b[320];
  const double tflops = sum_gemm_flops(*c.gs) / (c.gemm_alone_us * 1e6);
  if (c.k == 0) {
    std::snprintf(b, sizeof b, "%-26s %3d %3d/%3d %9.1f %9s %6s %5.0f %9s %9s %6s %6s %3d %3s %9s %9s %9s", c.shape.c_str(),
                  c.k, c.comm_sms, c.compute_sms, c.gemm_alone_us, "-", "-", tflops, "-", "-", "-", "-", c.n_gemm, "-",
                  "-", "-", "-");
  } else {
    // One GPU: the copy's own bandwidth (bytes read = bytes written) in place of busbw.
    const double busbw = a2a_bytes / (c.a2a_alone_us * 1e3) * (n > 1 ? (n - 1.0) / n : 1.0);
    std::snprintf(b, sizeof b,
                  "%-26s %3d %3d/%3d %9.1f %9.1f %6.3f %5.0f %9.1f %9.1f %6.3f %6.1f %3d %3d %9.0f %9.0f %9.0f",
                  c.shape.c_str(), c.k, c.comm_sms, c.compute_sms, c.gemm_alone_us, c.gemm_together_us,
                  c.gemm_together_us / c.gemm_alone_us, tflops, c.a2a_alone_us, c.a2a_together_us,
                  c.a2a_together_us / c.a2a_alone_us, busbw, c.n_gemm, c.m_a2a, c.makespan_us, c.serial_us, c.ideal_us);
  }
  return b;
}

}  // namespace cs::kernels::overlap
