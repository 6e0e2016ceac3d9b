// Attention and memory-bound kernels: the fit recovers known parameters, the calibrated cost times
// each kind by them, and the bundled H200 measurements read and fit as the profile says.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "calibrate/kernel_fit.h"
#include "calibrate/kernel_params.h"
#include "calibrate/measurements.h"
#include "calibrate/validate.h"
#include "hw/calibrated_cost.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "models/layer_ops.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {
calibrate::AttentionCase call(int64_t heads, int64_t seq, bool backward, const hw::KernelModel& truth) {
  calibrate::AttentionCase c;
  c.backend = "default";
  c.backward = backward;
  c.batch = 1, c.heads = heads, c.seq = seq, c.d_qk = 192, c.d_v = 128, c.d_v_run = 128;
  c.time_us = calibrate::kernel_model_us(truth, c);
  return c;
}
// A FlashAttention-2 call (the flash backend) on a shape of one head dim, or MLA's with v padded.
calibrate::AttentionCase fa2_call(int64_t heads, int64_t seq, bool backward, bool mla,
                                  const hw::AttentionFa2Model& truth) {
  calibrate::AttentionCase c;
  c.backend = "flash";
  c.backward = backward;
  c.batch = 1, c.heads = heads, c.seq = seq, c.d_qk = mla ? 192 : 128, c.d_v = 128, c.d_v_run = c.d_qk;
  c.time_us = calibrate::kernel_model_us(truth, c);
  return c;
}
}  // namespace

TEST_CASE("the kernel fit recovers attention and memory rates from synthetic timings", "[calibrate][fit]") {
  const hw::KernelModel truth{40, 600, 150, 450, 3000};
  calibrate::MeasurementSet set;
  for (int64_t h : {16, 64, 128})
    for (int64_t s : {1024, 4096, 8192})
      for (bool bwd : {false, true}) set.attentions.push_back(call(h, s, bwd, truth));
  // Another backend's calls are not what a framework gets by default: they must not move the fit.
  calibrate::AttentionCase slow = call(128, 4096, false, truth);
  slow.backend = "efficient";
  slow.time_us *= 4;
  set.attentions.push_back(slow);
  for (double gbps : {2500.0, 3000.0, 3500.0}) set.memory_bound.push_back({"x", "compiled", 1e9, 1e9 / (gbps * 1e3)});
  set.memory_bound.push_back({"y", "eager", 1e9, 1e9 / (100 * 1e3)});
  const calibrate::KernelFit f = calibrate::fit_kernels(set);
  CHECK(f.model.attn_fwd_us == Approx(40).epsilon(1e-6));
  CHECK(f.model.attn_fwd_tflops == Approx(600).epsilon(1e-6));
  CHECK(f.model.attn_bwd_us == Approx(150).epsilon(1e-6));
  CHECK(f.model.attn_bwd_tflops == Approx(450).epsilon(1e-6));
  CHECK(f.model.elementwise_GBps == Approx(3000));
  CHECK(f.attn_fwd_cases == 9);
  CHECK(f.elementwise_cases == 3);
  CHECK(f.attn_fwd.worst_error < 1e-9);
  // No flash-backend calls: no FlashAttention-2 section.
  CHECK_FALSE(f.fa2.present());
}

TEST_CASE("the kernel fit recovers FlashAttention-2 per head-dim kernel, on the FLOPs it ran, v padded",
          "[calibrate][fit]") {
  const hw::KernelModel sdpa{40, 600, 150, 450, 3000};
  hw::AttentionFa2Model truth;
  const int d128 = hw::AttentionFa2Model::kernel_of(128), d192 = hw::AttentionFa2Model::kernel_of(192);
  truth.kernels[d128] = {90, 330, 300, 290};
  truth.kernels[d192] = {250, 320, 850, 260};
  calibrate::MeasurementSet set;
  for (bool bwd : {false, true}) {
    set.attentions.push_back(call(128, 4096, bwd, sdpa));
    set.attentions.push_back(call(64, 2048, bwd, sdpa));
    for (int64_t s : {2048, 8192}) set.attentions.push_back(fa2_call(64, s, bwd, false, truth));
    for (int64_t s : {2048, 4096, 16384}) set.attentions.push_back(fa2_call(128, s, bwd, true, truth));
  }
  // One call of a head dim timed alone: too few to fit its kernel, so it is left out.
  calibrate::AttentionCase lone = fa2_call(64, 4096, false, false, truth);
  lone.d_qk = lone.d_v = lone.d_v_run = 64;
  set.attentions.push_back(lone);
  set.memory_bound.push_back({"x", "compiled", 1e9, 400});
  const calibrate::KernelFit f = calibrate::fit_kernels(set);
  REQUIRE(f.fa2.present());
  REQUIRE(f.fa2_kernels.size() == 2);
  for (int k : {d128, d192}) {
    CHECK(f.fa2.kernels[k].fwd_us == Approx(truth.kernels[k].fwd_us).epsilon(1e-6));
    CHECK(f.fa2.kernels[k].fwd_tflops == Approx(truth.kernels[k].fwd_tflops).epsilon(1e-6));
    CHECK(f.fa2.kernels[k].bwd_us == Approx(truth.kernels[k].bwd_us).epsilon(1e-6));
    CHECK(f.fa2.kernels[k].bwd_tflops == Approx(truth.kernels[k].bwd_tflops).epsilon(1e-6));
  }
  CHECK_FALSE(f.fa2.kernels[hw::AttentionFa2Model::kernel_of(64)].present());
  CHECK(f.fa2_kernels[0].head_dim == 128);
  CHECK(f.fa2_kernels[1].fwd_cases == 3);
  CHECK(f.fa2_kernels[1].bwd.worst_error < 1e-9);
  // The SDPA fit saw none of them.
  CHECK(f.model.attn_fwd_tflops == Approx(600).epsilon(1e-6));
  CHECK(f.attn_fwd_cases == 2);
  // The padded call ran 192 / 160 of MLA's FLOPs forward: (192 + 192) / (192 + 128).
  const calibrate::AttentionCase mla = fa2_call(128, 4096, false, true, truth);
  CHECK(calibrate::attention_case_flops_as_run(mla) == Approx(calibrate::attention_case_flops(mla) * 384 / 320));
  // A head dim with no kernel of its own is timed by the measured kernel nearest it, the larger on a tie.
  CHECK(&truth.rates_for(64) == &truth.kernels[d128]);
  CHECK(&truth.rates_for(160) == &truth.kernels[d192]);
  CHECK(&truth.rates_for(256) == &truth.kernels[d192]);
  CHECK(hw::AttentionFa2Model::kernel_of(72) == hw::AttentionFa2Model::kernel_of(96));
}

TEST_CASE("the kernel sections refuse a FlashAttention-2 clock log without its calls, and set nothing without data",
          "[calibrate][fit]") {
  const hw::KernelModel sdpa{40, 600, 150, 450, 3000};
  calibrate::MeasurementSet set;
  hw::GpuProfile p;
  CHECK_FALSE(calibrate::fit_kernel_sections(set, *hw::find_gpu("h200"), "", p).has_value());
  CHECK_FALSE(p.kernels.present());
  for (bool bwd : {false, true})
    for (int64_t s : {2048, 4096}) set.attentions.push_back(call(128, s, bwd, sdpa));
  set.memory_bound.push_back({"x", "compiled", 1e9, 400});
  try {
    calibrate::fit_kernel_sections(set, *hw::find_gpu("h200"), "fa2_clocks.log", p);
    FAIL("no error");
  } catch (const hw::UserError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("fa2_clocks.log") && Catch::Contains("no FlashAttention-2 call"));
  }
  REQUIRE(calibrate::fit_kernel_sections(set, *hw::find_gpu("h200"), "", p).has_value());
  CHECK(p.kernels.attn_fwd_tflops == Approx(600).epsilon(1e-6));
  CHECK(p.kernel_params.at("attn_fwd_tflops").origin == "measured");
  CHECK_FALSE(p.attention_fa2.present());
}

TEST_CASE("a calibrated cost runs attention on FlashAttention-2 where told, on the padded FLOPs", "[calibrate][cost]") {
  const hw::GpuProfile& p = *hw::find_profile("h800");
  REQUIRE(p.attention_fa2.present());
  hw::CalibratedCost cost(*hw::find_gpu("h800"), p, hw::ClockLoad::kFit);
  const double f = models::attention_flops(1, 128, 4096, 192, 128, true, false);
  const double padded = models::attention_flops(1, 128, 4096, 192, 192, true, false);
  const sim::GenericCompute fwd{f,   1e6, sim::DType::kBf16, sim::ComputeKind::kAttentionForward, sim::MemoryForm::kAny,
                                192, 128};
  const double sdpa_us = cost.compute_time(0, fwd, 132).to_seconds() * 1e6;
  CHECK(sdpa_us == Approx(p.kernels.attn_fwd_us + f / (p.kernels.attn_fwd_tflops * 1e6)).epsilon(1e-6));
  cost.set_attention_kernel(hw::AttentionKernel::kFa2);
  const double fa2_us = cost.compute_time(0, fwd, 132).to_seconds() * 1e6;
  const hw::AttentionFa2Model::Rates& r = p.attention_fa2.rates_for(192);
  REQUIRE(&r == &p.attention_fa2.kernels[hw::AttentionFa2Model::kernel_of(192)]);  // measured on the H200
  CHECK(fa2_us == Approx(r.fwd_us + padded / (r.fwd_tflops * 1e6)).epsilon(1e-6));
  CHECK(fa2_us > 2 * sdpa_us);  // MLA's forward: about 1.17 ms on cuDNN's kernel, 2.8 on FlashAttention-2
  // Backward pads 3 d_qk + 2 d_v to 5 x 192.
  const double b = models::attention_flops(1, 128, 4096, 192, 128, true, true);
  const sim::GenericCompute bwd{
      b, 1e6, sim::DType::kBf16, sim::ComputeKind::kAttentionBackward, sim::MemoryForm::kAny, 192, 128};
  CHECK(cost.compute_time(0, bwd, 132).to_seconds() * 1e6 ==
        Approx(r.bwd_us + models::attention_flops(1, 128, 4096, 192, 192, true, true) / (r.bwd_tflops * 1e6))
            .epsilon(1e-6));
  // A head dim of its own kernel (128, multi-head) runs unpadded on that kernel's rates.
  const hw::AttentionFa2Model::Rates& r128 = p.attention_fa2.rates_for(128);
  const double f128 = models::attention_flops(1, 32, 4096, 128, 128, true, false);
  const sim::GenericCompute mha{
      f128, 1e6, sim::DType::kBf16, sim::ComputeKind::kAttentionForward, sim::MemoryForm::kAny, 128, 128};
  CHECK(cost.compute_time(0, mha, 132).to_seconds() * 1e6 ==
        Approx(r128.fwd_us + f128 / (r128.fwd_tflops * 1e6)).epsilon(1e-6));
  // Its draw counts the FLOPs it runs.
  CHECK(cost.compute_power(0, fwd, 132).mma_W ==
        Approx(padded * p.power.bf16_pJ_per_flop * 1e-12 / (fa2_us * 1e-6)).epsilon(1e-5));
  // A profile without the section refuses it.
  hw::GpuProfile none = p;
  none.attention_fa2 = {};
  hw::CalibratedCost plain(*hw::find_gpu("h800"), none, hw::ClockLoad::kFit);
  CHECK_THROWS_AS(plain.set_attention_kernel(hw::AttentionKernel::kFa2), std::invalid_argument);
}

TEST_CASE("a calibrated profile times attention and memory-bound kernels by kind", "[calibrate][cost]") {
  const hw::GpuProfile& p = *hw::find_profile("h800");
  REQUIRE(p.kernels.present());
  const hw::CalibratedCost cost(*hw::find_gpu("h800"), p);
  const double f = models::attention_flops(1, 128, 4096, 192, 128, true, false);
  const sim::GenericCompute fwd{f, 1e6, sim::DType::kBf16, sim::ComputeKind::kAttentionForward};
  CHECK(cost.compute_time(0, fwd, 112).to_seconds() * 1e6 ==
        Approx(p.kernels.attn_fwd_us + f / (p.kernels.attn_fwd_tflops * 1e6 * 112 / 132)).epsilon(1e-6));
  const double b = models::attention_flops(1, 128, 4096, 192, 128, true, true);
  const sim::GenericCompute bwd{b, 1e6, sim::DType::kBf16, sim::ComputeKind::kAttentionBackward};
  CHECK(cost.compute_time(0, bwd, 132).to_seconds() * 1e6 ==
        Approx(p.kernels.attn_bwd_us + b / (p.kernels.attn_bwd_tflops * 1e6)).epsilon(1e-6));
  // Memory-bound: the fitted HBM rate on many SMs, the per-SM copy rate on few.
  const sim::GenericCompute norm{1e6, 1e9, sim::DType::kBf16, sim::ComputeKind::kMemoryBound};
  CHECK(cost.compute_time(0, norm, 112).to_seconds() == Approx(1e9 / (p.kernels.elementwise_GBps * 1e9)).epsilon(1e-6));
  // (the per-SM rate at the sustained clock, as the copy kernel's)
  const double sustained = p.clocks.present() ? p.clocks.sustained_MHz / p.clocks.comm_fit_MHz : 1.0;
  CHECK(cost.compute_time(0, norm, 8).to_seconds() ==
        Approx(1e9 / (8 * p.comm.sm_copy_GBps * sustained * 1e9)).epsilon(1e-6));
  // A generic kernel stays on the datasheet roofline.
  const sim::GenericCompute adam{1e9, 1e9, sim::DType::kFp32, sim::ComputeKind::kGeneric};
  CHECK(cost.compute_time(0, adam, 112).to_seconds() == Approx(1e9 / (hw::find_gpu("h800")->fp32_tflops * 1e12 * 112 / 132)).epsilon(1e-6));
}

TEST_CASE("layer ops say which kernel kind they are", "[calibrate][cost]") {
  models::LayerOp op;
  op.kind = models::LayerOpKind::kAttention;
  op.pass = models::Pass::kForward;
  CHECK(models::compute_kind(op) == sim::ComputeKind::kAttentionForward);
  op.pass = models::Pass::kBackwardInput;
  CHECK(models::compute_kind(op) == sim::ComputeKind::kAttentionBackward);
  op.kind = models::LayerOpKind::kElementwise;
  CHECK(models::compute_kind(op) == sim::ComputeKind::kMemoryBound);
}

TEST_CASE("the H200 attention and memory-bound data read and fit as the bundled profile records", "[calibrate][data]") {
  calibrate::MeasurementSet set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/attention.json", set);
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/memory_bound_device_time.json", set);
  REQUIRE(set.sources.size() == 2);
  CHECK(set.sources[0].gpu == "NVIDIA H200");
  CHECK(calibrate::measured_on(set.sources[0], "h200"));
  for (const auto& c : set.attentions) CHECK(c.time_us > 0);
  const calibrate::KernelFit f = calibrate::fit_kernels(set);
  const hw::GpuProfile& p = *hw::find_profile("h200");
  CHECK(f.model.attn_fwd_tflops == Approx(p.kernels.attn_fwd_tflops).epsilon(1e-9));
  CHECK(f.model.attn_bwd_tflops == Approx(p.kernels.attn_bwd_tflops).epsilon(1e-9));
  CHECK(f.model.elementwise_GBps == Approx(p.kernels.elementwise_GBps).epsilon(1e-9));
  // Below the BF16 datasheet peak (989 TFLOPS) and HBM (4800 GB/s): what the roofline missed.
  CHECK(f.model.attn_fwd_tflops < 0.7 * 989);
  CHECK(f.model.attn_bwd_tflops < f.model.attn_fwd_tflops);
  CHECK(f.model.elementwise_GBps < 4800);
  // By their kernels' device time the fused kernels run faster than the CUDA events around one
  // call said (memory_bound.json, the same cases: the events also count the CPU's launch).
  calibrate::MeasurementSet events;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/attention.json", events);
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/memory_bound.json", events);
  CHECK(calibrate::fit_kernels(events).model.elementwise_GBps < 0.7 * f.model.elementwise_GBps);
  CHECK(f.attn_fwd.median_error < 0.05);
  CHECK(f.attn_bwd.median_error < 0.10);
  // FlashAttention-2 from the flash backend's calls, a kernel per head dim: 128 (9 multi-head
  // shapes up to 8K, 2 more to 32K) and 192 (MLA with v padded, 2K to 32K).
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/attention_long.json", set);
  const calibrate::KernelFit g = calibrate::fit_kernels(set);
  REQUIRE(g.fa2_kernels.size() == 2);
  CHECK(g.fa2_kernels[0].head_dim == 128);
  CHECK(g.fa2_kernels[0].fwd_cases == 11);
  CHECK(g.fa2_kernels[1].head_dim == 192);
  CHECK(g.fa2_kernels[1].fwd_cases == 6);
  for (int d : {128, 192}) {
    const int k = hw::AttentionFa2Model::kernel_of(d);
    CHECK(g.fa2.kernels[k].fwd_tflops == Approx(p.attention_fa2.kernels[k].fwd_tflops).epsilon(1e-9));
    CHECK(g.fa2.kernels[k].bwd_us == Approx(p.attention_fa2.kernels[k].bwd_us).epsilon(1e-9));
    CHECK(g.fa2.kernels[k].fwd_tflops < 0.6 * g.model.attn_fwd_tflops);  // an Ampere-style kernel on Hopper
  }
  CHECK(g.fa2_kernels[1].fwd.worst_error < 0.05);  // MLA's kernel over 2K to 32K
  CHECK(g.fa2_kernels[1].bwd.worst_error < 0.05);
  CHECK(g.fa2_fwd.median_error < 0.05);
  CHECK(g.fa2_bwd.median_error < 0.10);
  // The SDPA fit is the same with the long file: it holds no call of SDPA's own pick.
  CHECK(g.model.attn_fwd_tflops == f.model.attn_fwd_tflops);
}

TEST_CASE("validate runs the attention and memory-bound calls through the engine", "[calibrate][data]") {
  calibrate::MeasurementSet set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/attention.json", set);
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/memory_bound_device_time.json", set);
  const hw::GpuProfile& p = *hw::find_profile("h200");
  const calibrate::Validation v = calibrate::validate_profile(p, *hw::find_gpu("h200"), set, 4);
  CHECK(v.attention.cases == 20);  // 10 shapes, forward and backward, SDPA's own backend
  CHECK(v.attention_fa2.cases == 20);  // the flash backend's 10, MLA's with v padded among them
  CHECK(v.attention_fa2.median_error < 0.06);
  CHECK(v.memory_bound.cases == 8);
  // On the whole GPU the engine's time is the fit's closed form (kernel_model_us).
  std::vector<double> closed;
  for (const auto& a : set.attentions)
    if (calibrate::fitted_case(a)) closed.push_back(calibrate::kernel_model_us(p.kernels, a));
  size_t i = 0;
  for (const auto& c : v.cases)
    if (c.kind == "attention") CHECK(c.predicted_us == Approx(closed.at(i++)).epsilon(1e-6));
  CHECK(i == closed.size());
  for (const auto& c : v.cases) {
    INFO(c.kind << " " << c.label);
    if (c.kind == "memory_bound") CHECK(std::abs(c.error()) < 0.40);
    if (c.kind == "attention" || c.kind == "attention_fa2") CHECK(std::abs(c.error()) < 0.25);
  }
}

TEST_CASE("the kernel fit refuses calls whose time does not grow with their FLOPs", "[calibrate][fit]") {
  const hw::KernelModel truth{40, 600, 150, 450, 3000};
  calibrate::MeasurementSet set;
  for (int64_t s : {1024, 4096})
    for (bool bwd : {false, true}) set.attentions.push_back(call(128, s, bwd, truth));
  std::swap(set.attentions[0].time_us, set.attentions[2].time_us);  // the longer forward now took less time
  set.memory_bound.push_back({"x", "compiled", 1e9, 400});
  try {
    calibrate::fit_kernels(set);
    FAIL("no error");
  } catch (const hw::UserError& e) {
    CHECK(std::string(e.what()) == "calibrate fit: the attention forward calls do not grow with their FLOPs: no rate can be fitted");
  }
}

}  // namespace CS_TEST_FILE
