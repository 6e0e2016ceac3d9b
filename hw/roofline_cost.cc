#include "hw/roofline_cost.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "hw/ceil_div.h"
#include "hw/gemm_model.h"

namespace cs::hw {

std::string RooflineCost::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "uncalibrated roofline (%s datasheet, %.2f GB/s per comm SM)",
                gpu_.name.c_str(), params_.comm_bw_per_sm_GBps);
  return buf;
}

double RooflineCost::peak_flops(sim::DType t) const {
  switch (t) {
    case sim::DType::kFp8: return gpu_.fp8_dense_tflops * 1e12;
    case sim::DType::kBf16: return gpu_.bf16_dense_tflops * 1e12;
    case sim::DType::kFp16: return gpu_.fp16_dense_tflops * 1e12;
    case sim::DType::kFp32: return gpu_.tf32_dense_tflops * 1e12;  // GEMMs in FP32 run as TF32
  }
  return gpu_.bf16_dense_tflops * 1e12;
}

sim::ComputeCost RooflineCost::gemm_cost(int, const sim::GemmShape& g) const {
  const int64_t tile = params_.gemm_tile;
  const int64_t tiles = g.groups * ceil_div(g.m, tile) * ceil_div(g.n, tile);
  return sim::ComputeCost{static_cast<int>(std::min<int64_t>(tiles, gpu_.sms)), gemm_compulsory_bytes(g)};
}

sim::Time RooflineCost::gemm_time(int, const sim::GemmShape& g, int sms) const {
  const int64_t tile = params_.gemm_tile;
  const int64_t tiles = g.groups * ceil_div(g.m, tile) * ceil_div(g.n, tile);
  const int64_t waves = ceil_div(tiles, std::max(1, sms));
  const double per_sm = peak_flops(g.dtype) / gpu_.sms;
  const double tile_flops = 2.0 * tile * tile * static_cast<double>(g.k);
  return sim::Time::from_seconds_ceil(static_cast<double>(waves) * tile_flops / per_sm);
}

sim::ComputeCost RooflineCost::compute_cost(int, const sim::GenericCompute& c) const {
  return sim::ComputeCost{gpu_.sms, c.bytes};
}

sim::Time RooflineCost::compute_time(int, const sim::GenericCompute& c, int sms) const {
  // Generic kernels (norms, optimizers, activations) run on the CUDA cores in FP32, not as TF32
  // tensor-core GEMMs; lower precisions are taken at their tensor peak.
  const double peak = c.dtype == sim::DType::kFp32 ? gpu_.fp32_tflops * 1e12 : peak_flops(c.dtype);
  const double rate = peak * std::max(1, sms) / gpu_.sms;
  return sim::Time::from_seconds_ceil(c.flops / rate);
}

sim::Bandwidth RooflineCost::comm_copy_rate(int, int sms, int) const {
  return sim::Bandwidth::gbytes_per_s(params_.comm_bw_per_sm_GBps * sms);
}

// No datasheet in hw/gpus states a copy-engine rate; NVLink and HBM, which the route holds, bound it.
sim::Bandwidth RooflineCost::copy_engine_rate(int) const {
  return sim::Bandwidth::bytes_per_s(std::numeric_limits<double>::infinity());
}

}  // namespace cs::hw
