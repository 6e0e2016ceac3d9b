// An attention fit's fixed time per call may be 0 in a profile (calibrate clamps a negative
// least-squares intercept there), and must read back; its rate may not.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "calibrate/profile_build.h"
#include "hw/calibrated_cost.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "profile_refusal.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

using cs::test::refused_on_line_of;

TEST_CASE("an attention fit's fixed time of 0 reads back, its rate of 0 is refused", "[calibrate][profile]") {
  // The fits clamp a negative intercept to 0 (calibrate/kernel_fit.cc): a profile that says so
  // must read back; a rate of 0 stays refused.
  hw::GpuProfile p = *hw::find_profile("h200");
  const int d192 = hw::AttentionFa2Model::kernel_of(192);
  p.kernels.attn_fwd_us = 0;
  p.attention_fa2.kernels[d192].bwd_us = 0;
  p.kernel_params.at("attn_fwd_us").value = 0;
  p.attention_fa2_params.at("d192_bwd_us").value = 0;
  const std::string text = calibrate::profile_yaml(p);
  const hw::GpuProfile back = hw::parse_profile(hw::parse_yaml(text, "zero.yaml"));
  CHECK(back.kernels.attn_fwd_us == 0);
  CHECK(back.kernels.attn_bwd_us == p.kernels.attn_bwd_us);
  REQUIRE(back.attention_fa2.kernels[d192].present());
  CHECK(back.attention_fa2.kernels[d192].bwd_us == 0);
  CHECK(back.attention_fa2.kernels[d192].fwd_us == p.attention_fa2.kernels[d192].fwd_us);
  // The FlashAttention-2 kernel at 0 fixed time costs its FLOPs at its rate alone.
  hw::CalibratedCost cost(*hw::find_gpu("h200"), back);
  cost.set_attention_kernel(hw::AttentionKernel::kFa2);
  const sim::GenericCompute bwd{
      1e12, 1e6, sim::DType::kBf16, sim::ComputeKind::kAttentionBackward, sim::MemoryForm::kAny, 192, 192};
  CHECK(cost.compute_time(0, bwd, 132).to_us() ==
        Approx(1e12 / (back.attention_fa2.kernels[d192].bwd_tflops * 1e12) * 1e6).epsilon(1e-6));
  std::string zero_rate = text;
  const auto at = zero_rate.find("  d192_bwd_tflops: {value: ") + 27;
  zero_rate.replace(at, zero_rate.find(',', at) - at, "0");
  refused_on_line_of(zero_rate, zero_rate.find("  d192_bwd_tflops"), "d192_bwd_tflops");
}

}  // namespace CS_TEST_FILE
