// One measured case of cs_fp8_gemm, and how it is written: a DeepGEMM-style console line and a
// JSON record (kernels/README.md, "cs_fp8_gemm", describes the fields).
#pragma once

#include <optional>
#include <string>

#include "common/clock_sampler.h"
#include "common/json_writer.h"
#include "fp8_gemm/lt_matmul.h"
#include "fp8_gemm/operands.h"
#include "fp8_gemm/shapes.h"
#include "fp8_gemm/timing.h"

namespace cs::kernels::fp8_gemm {

// How the SM limit is imposed.
enum class Method {
  kGreen,          // a green context of the limit's SMs; cuBLASLt's heuristic left at its default
  kSmTarget,       // the whole device; CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = the limit
  kGreenSmTarget,  // both: a green context, and the SM count target set to the SMs it has
};
const char* method_name(Method m);  // "green", "sm_target", "green_sm_target"

struct CaseRecord {
  GemmShape shape;
  Method method = Method::kGreen;
  int sm_limit = 0;         // SMs asked for
  int sm_obtained = 0;      // SMs the GEMM could use: the green context's, or the whole device's
  int sm_count_target = 0;  // CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET passed (0: not set)
  Scaling scaling = Scaling::kBlock;
  Orientation orientation = Orientation::kWeightsAsA;
  AlgoInfo algo;
  Timing timing;
  CheckResult check;
  std::optional<ClockSummary> clocks;  // with --sample-clocks: over the warm-up and timed runs

  double tflops() const { return shape.flops() / (timing.median_us * 1e-6) / 1e12; }
  double gbps() const { return shape.bytes() / (timing.median_us * 1e-6) / 1e9; }
};

// "m=4096 n=7168 k=2048 sms=112 (green) scale=blk128 : 123.4 us | 1025 TFLOPS | 520 GB/s"
// (grouped shapes start with "groups=4 "; p10/p90 follow in brackets).
std::string deepgemm_line(const CaseRecord& c);

// Writes `c` as one JSON object (the next value of `w`).
void write_case(JsonWriter& w, const CaseRecord& c);

}  // namespace cs::kernels::fp8_gemm
