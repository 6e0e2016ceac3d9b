// The cost model of a calibrated profile: GEMMs by the fitted tile-and-wave model (hw/gemm_model.h),
// communication kernels at the fitted per-SM copy rate after their fitted launch time. Kernels
// the profile has no measurement for (norms, casts, optimizer steps) keep the datasheet roofline,
// and describe() says so.
#pragma once

#include <string>

#include "hw/gpu_profile.h"
#include "hw/roofline_cost.h"

namespace cs::hw {

class CalibratedCost : public sim::CostModel {
 public:
  CalibratedCost(const GpuSpec& gpu, GpuProfile profile);
  std::string describe() const override;
  bool calibrated() const override { return true; }
  sim::ComputeCost gemm_cost(int gpu, const sim::GemmShape& g) const override;
  sim::Time gemm_time(int gpu, const sim::GemmShape& g, int sms) const override;
  sim::ComputeCost compute_cost(int gpu, const sim::GenericCompute& c) const override;
  sim::Time compute_time(int gpu, const sim::GenericCompute& c, int sms) const override;
  sim::Bandwidth comm_copy_rate(int gpu, int sms) const override;
  sim::Time comm_launch(int gpu) const override;

  const GpuProfile& profile() const { return profile_; }
  // The GEMM's MMA rate against FP8's: the datasheet's dense tensor peaks (1 for FP8).
  double mma_scale(sim::DType t) const;

 private:
  GpuSpec gpu_;
  GpuProfile profile_;
  RooflineCost roofline_;  // generic kernels
};

}  // namespace cs::hw
