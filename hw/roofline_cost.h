// An uncalibrated cost model from datasheet figures alone (a roofline with wave quantisation).
// It stands in until calibrated profiles exist, and every result made with it says so.
//
//   GEMM: output tiles of 128x128 (groups x ceil(m/128) x ceil(n/128)); each SM computes one tile
//         at a time at 1/SMs of the dtype's dense peak, so time = waves x tile time, with
//         waves = ceil(tiles / sms). HBM traffic: A and B read once, C written once (BF16 output).
//   Generic compute: FLOPs at the dtype's peak scaled by sms / SMs (FP32 at the CUDA-core FP32
//         peak, other types at their tensor peak); its bytes over HBM. FP32 GEMMs run as TF32.
//   Communication: a kernel copies at comm_bw_per_sm_GBps per SM it holds. A copy-engine send
//         has no cap of its own: the datasheets give no DMA rate, so its route and HBMs limit it.
#pragma once

#include <string>

#include "hw/gpu_catalog.h"
#include "sim/cost_model.h"

namespace cs::hw {

struct RooflineParams {
  // DeepEP reaches 153 GB/s intranode (NVLink-bound) with 20 SMs on H800: at least 7.65 GB/s per
  // SM. REFERENCE.md, DeepEP table. A lower bound until the all-to-all kernels are measured.
  double comm_bw_per_sm_GBps = 153.0 / 20.0;
  int gemm_tile = 128;  // DeepGEMM's block size for M and N (REFERENCE.md, DeepGEMM)
};

class RooflineCost : public sim::CostModel {
 public:
  RooflineCost(const GpuSpec& gpu, RooflineParams params) : gpu_(gpu), params_(params) {}
  std::string describe() const override;
  bool calibrated() const override { return false; }
  sim::ComputeCost gemm_cost(int gpu, const sim::GemmShape& g) const override;
  sim::Time gemm_time(int gpu, const sim::GemmShape& g, int sms) const override;
  sim::ComputeCost compute_cost(int gpu, const sim::GenericCompute& c) const override;
  sim::Time compute_time(int gpu, const sim::GenericCompute& c, int sms) const override;
  sim::Bandwidth comm_copy_rate(int gpu, int sms, int gemm_sms) const override;
  sim::Bandwidth copy_engine_rate(int gpu) const override;

  // Dense tensor peak for a dtype, FLOP/s.
  double peak_flops(sim::DType t) const;

 private:
  GpuSpec gpu_;
  RooflineParams params_;
};

}  // namespace cs::hw
