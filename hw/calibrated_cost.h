// The cost model of a calibrated profile: GEMMs by the fitted tile-and-wave model (hw/gemm_model.h),
// communication kernels at the fitted per-SM copy rate after their fitted launch time. A GEMM's
// HBM bytes are what it really moves (hw/gemm_traffic.h) where the profile has the L2 model. Kernels
// the profile has no measurement for (norms, casts, optimizer steps) keep the datasheet roofline,
// and describe() says so.
#pragma once

#include <limits>
#include <string>

#include "hw/gemm_traffic.h"
#include "hw/gpu_profile.h"
#include "hw/power_model.h"
#include "hw/roofline_cost.h"

namespace cs::hw {

// Which SM clock kernels run at: the one each fit measured at (a calibration bench's own
// conditions), or the profile's sustained clock (a training step: GEMMs and copies back to back
// at the power limit). Without a clocks section in the profile both are the fit's.
// kPowerCapped: each GPU's clock follows what it runs under the profile's power section
// (hw/power_model.h): GEMM times at the GEMM fit's clock, stretched by the executor; copies at the
// sustained clock.
enum class ClockLoad { kFit, kSustained, kPowerCapped };
// What a profile supports: kPowerCapped where it has a power section, else kSustained.
ClockLoad training_clock_load(const GpuProfile& p);

class CalibratedCost : public sim::CostModel {
 public:
  CalibratedCost(const GpuSpec& gpu, GpuProfile profile, ClockLoad load = ClockLoad::kSustained);
  // Kernels at an SM clock of `running_MHz` (a measured case's own): GEMM tiles and copies take
  // fit clock / running_MHz as long. 0, or a profile without a clocks section: the fits' clocks.
  CalibratedCost(const GpuSpec& gpu, GpuProfile profile, double running_MHz);
  std::string describe() const override;
  bool calibrated() const override { return true; }
  sim::ComputeCost gemm_cost(int gpu, const sim::GemmShape& g) const override;
  sim::Time gemm_time(int gpu, const sim::GemmShape& g, int sms) const override;
  double gemm_hbm_bytes(int gpu, const sim::GemmShape& g, int sms, double others_Bps) const override;
  sim::ComputeCost compute_cost(int gpu, const sim::GenericCompute& c) const override;
  sim::Time compute_time(int gpu, const sim::GenericCompute& c, int sms) const override;
  sim::Bandwidth comm_copy_rate(int gpu, int sms, int gemm_sms) const override;
  // DeepEP's internode pace (DeepEpModel), at the clock the copies run at; none without the section.
  sim::Bandwidth comm_kernel_pace(int gpu, int sms) const override;
  // No cap of its own: the route (the profile's NVLink figure) and the HBMs limit a copy-engine send.
  sim::Bandwidth copy_engine_rate(int gpu) const override;
  sim::Time comm_launch(int gpu) const override;
  sim::Time compute_launch_gap(int gpu, const sim::GenericCompute& c) const override;
  double hbm_saturation_exponent() const override { return profile_.memory.saturation_exponent; }
  bool power_capped() const override { return power_capped_; }
  sim::PowerLoad gemm_power(int gpu, const sim::GemmShape& g, int sms) const override;
  sim::PowerLoad compute_power(int gpu, const sim::GenericCompute& c, int sms) const override;
  double hbm_J_per_byte(int gpu) const override;
  sim::Time power_window(int gpu) const override;
  double power_clock_MHz(int gpu, const sim::PowerLoad& average) const override;
  double gemm_stretch(int gpu, double MHz) const override;
  // Attention and memory-bound kernels by the profile's kernel_clock section (1 without one).
  double compute_stretch(int gpu, double MHz, const sim::GenericCompute& c) const override;
  bool compute_follows_clock(int gpu, const sim::GenericCompute& c) const override;

  // Throws std::invalid_argument for kFa2 on a profile without its section.
  void set_attention_kernel(AttentionKernel k);

  const GpuProfile& profile() const { return profile_; }
  // The GEMM model a type runs on: BF16 on the profile's BF16 rates where it has them, every other
  // type on the FP8 ones, at mma_scale of them.
  const GemmModel& gemm_model(sim::DType t) const;
  // The MMA rate against gemm_model(t)'s: 1 for FP8 and measured BF16, else the datasheet's dense
  // tensor peaks against FP8's.
  double mma_scale(sim::DType t) const;
  // That of the shape: FP8 with 1x128 scales on both operands at 1 / the profile's mma_slowdown.
  double mma_scale(const sim::GemmShape& g) const;
  // Fit clock / running clock for GEMM tiles and for the copy kernel (1 at the fit's clock).
  double gemm_clock_slowdown() const { return gemm_slowdown_; }
  double comm_clock_slowdown() const { return comm_slowdown_; }

 private:
  static constexpr double kNoSkewLoss = std::numeric_limits<double>::infinity();
  // The GEMM's HBM bytes in waves of `sms` tiles with `l2_share` of its L2 and a line's residency
  // over its wave's phase spread (hw/gemm_traffic.h); cached for the process.
  double traffic_bytes(const sim::GemmShape& g, int sms, double l2_share, double residency_over_skew) const;

  // An attention op's time and the FLOPs its kernel runs, by attention_ (kAttention* kinds only).
  double attention_us(const sim::GenericCompute& c, double share) const;
  double attention_flops_run(const sim::GenericCompute& c) const;
  // The SM clock attention's times stand for (kernel_clock's, or FlashAttention-2's own).
  double attention_reference_MHz() const;

  GpuSpec gpu_;
  GpuProfile profile_;
  AttentionKernel attention_ = AttentionKernel::kSdpa;
  GemmModel bf16_gemm_;    // profile_.gemm at the BF16 rates, where the profile has them
  RooflineCost roofline_;  // generic kernels
  double running_MHz_ = 0;  // 0: the fits' own clocks
  double gemm_slowdown_ = 1, comm_slowdown_ = 1;
  bool power_capped_ = false;
  GemmTrafficParams traffic_;  // from the profile's memory section; absent: compulsory bytes
  // Names this object's GEMM times in gemm_time's cache. A copy keeps it: its times are the same.
  uint64_t gemm_time_id_;
};

}  // namespace cs::hw
