#include "hw/calibrated_cost.h"

#include <algorithm>

namespace cs::hw {

CalibratedCost::CalibratedCost(const GpuSpec& gpu, GpuProfile profile)
    : gpu_(gpu), profile_(std::move(profile)), roofline_(gpu, RooflineParams{}) {}

std::string CalibratedCost::describe() const {
  return "calibrated profile " + profile_.gpu + " (" + profile_.file +
         (profile_.kernels.present()
              ? "): GEMMs, attention, memory-bound and communication kernels fitted, other kernels by the datasheet roofline"
              : "): GEMMs and communication kernels fitted, other kernels by the datasheet roofline");
}

double CalibratedCost::mma_scale(sim::DType t) const {
  return roofline_.peak_flops(t) / roofline_.peak_flops(sim::DType::kFp8);
}

sim::ComputeCost CalibratedCost::gemm_cost(int, const sim::GemmShape& g) const {
  return sim::ComputeCost{gemm_model_max_sms(g, gpu_.sms), gemm_compulsory_bytes(g)};
}

sim::Time CalibratedCost::gemm_time(int, const sim::GemmShape& g, int sms) const {
  return sim::Time::from_seconds_ceil(gemm_model_us(profile_.gemm, g, sms, mma_scale(g.dtype)) * 1e-6);
}

sim::ComputeCost CalibratedCost::compute_cost(int gpu, const sim::GenericCompute& c) const {
  return roofline_.compute_cost(gpu, c);
}

sim::Time CalibratedCost::compute_time(int gpu, const sim::GenericCompute& c, int sms) const {
  const hw::KernelModel& k = profile_.kernels;
  if (!k.present() || c.kind == sim::ComputeKind::kGeneric) return roofline_.compute_time(gpu, c, sms);
  const double share = static_cast<double>(std::max(1, sms)) / gpu_.sms;
  double us = 0;
  switch (c.kind) {
    case sim::ComputeKind::kAttentionForward: us = k.attn_fwd_us + c.flops / (k.attn_fwd_tflops * 1e6 * share); break;
    case sim::ComputeKind::kAttentionBackward: us = k.attn_bwd_us + c.flops / (k.attn_bwd_tflops * 1e6 * share); break;
    case sim::ComputeKind::kMemoryBound: {
      const double GBps = std::min(k.elementwise_GBps, profile_.comm.sm_copy_GBps * std::max(1, sms));
      us = std::max(roofline_.compute_time(gpu, c, sms).to_seconds() * 1e6, c.bytes / (GBps * 1e3));
      break;
    }
    case sim::ComputeKind::kGeneric: break;
  }
  return sim::Time::from_seconds_ceil(us * 1e-6);
}

sim::Bandwidth CalibratedCost::comm_copy_rate(int, int sms) const {
  return sim::Bandwidth::gbytes_per_s(profile_.comm.sm_copy_GBps * sms);
}

sim::Time CalibratedCost::comm_launch(int) const {
  return sim::Time::from_seconds_ceil(profile_.comm.launch_us * 1e-6);
}

}  // namespace cs::hw
