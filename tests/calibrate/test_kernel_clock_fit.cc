// Attention and memory-bound kernels under the power-capped SM clock (hw::KernelClockModel): the
// fit recovers known shares and reference clocks from synthetic cases, the H100's measured kernels
// give what their physics says, the bundled profiles hold that fit, the cost model stretches each
// kind by its own share, and the section reads back and refuses what it cannot hold.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "calibrate/kernel_clock_fit.h"
#include "calibrate/measurements.h"
#include "calibrate/profile_build.h"
#include "hw/calibrated_cost.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "hw/yaml_reader.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

namespace {

// A kernel taking `high_ms` at `high_MHz`, a share `s` of it following the clock.
calibrate::KernelClockCase clock_case(const std::string& name, const std::string& kind, sim::MemoryForm form, double s,
                                      double high_ms, double high_MHz = 1940, double low_MHz = 1530, double flops = 0) {
  calibrate::KernelClockCase c;
  c.name = name;
  c.kind = kind;
  c.form = form;
  c.flops = flops;
  c.high_ms = high_ms;
  c.high_MHz = high_MHz;
  c.low_MHz = low_MHz;
  c.low_ms = high_ms * ((1 - s) + s * high_MHz / low_MHz);
  return c;
}

sim::GenericCompute compute(sim::ComputeKind kind, sim::MemoryForm form = sim::MemoryForm::kAny) {
  sim::GenericCompute c;
  c.kind = kind;
  c.form = form;
  return c;
}

}  // namespace

TEST_CASE("kernel clock: the fit recovers the shares and clocks synthetic kernels were made with", "[calibrate][power]") {
  using F = sim::MemoryForm;
  // An attention model whose times stand for 1800 MHz: a case's time at 1940 MHz follows from it.
  // attention forward 50 us + FLOPs at 600 TFLOPS, backward 200 us + FLOPs at 450, copies at 2000 GB/s
  const hw::KernelModel k{50, 600, 200, 450, 2000, 0, {}};
  constexpr double kRef = 1800, kHigh = 1940;
  std::vector<calibrate::KernelClockCase> cases;
  for (const auto& [name, kind, flops, s] : {std::tuple{"fa", "attention_fwd", 2e11, 0.8}, std::tuple{"fb", "attention_fwd", 6e11, 0.8},
                                             std::tuple{"ba", "attention_bwd", 5e11, 0.9}, std::tuple{"bb", "attention_bwd", 1.5e12, 0.9}}) {
    calibrate::KernelClockCase probe = clock_case(name, kind, F::kAny, s, 1, kHigh, 1530, flops);
    const double model_us = calibrate::attention_model_us(k, probe);
    // The model's time is the kernel's at kRef: its time at kHigh is that over ((1 - s) + s kHigh / kRef).
    cases.push_back(clock_case(name, kind, F::kAny, s, model_us * 1e-3 / ((1 - s) + s * kHigh / kRef), kHigh, 1530, flops));
  }
  cases.push_back(clock_case("copy", "memory", F::kAny, 0.05, 0.2));
  cases.push_back(clock_case("swiglu_bwd", "memory", F::kActivationBackward, 0.85, 0.25, kHigh, 1500));
  cases.push_back(clock_case("add_a", "memory", F::kResidualAdd, 0.1, 0.03, 1930));
  cases.push_back(clock_case("add_b", "memory", F::kResidualAdd, 0.2, 0.05, 1950));
  cases.push_back(clock_case("gemm", "gemm_bf16", F::kAny, 0.6, 0.4));
  const calibrate::KernelClockFit f = calibrate::fit_kernel_clock(cases, k, 1980);
  // The profile holds a share at its reference clock: B / f of t = A + B / f is a larger part of t
  // at 1800 MHz than at 1940.
  const auto at_ref = [&](double s) { return s * kHigh / kRef / ((1 - s) + s * kHigh / kRef); };
  CHECK(f.model.attention_fwd == Approx(at_ref(0.8)));
  CHECK(f.model.attention_bwd == Approx(at_ref(0.9)));
  CHECK(f.model.attention_fwd > 0.8);
  CHECK(f.model.attention_fit_MHz == Approx(kRef));
  CHECK(f.model.form[static_cast<int>(F::kAny)] == Approx(0.05));
  CHECK(f.model.form[static_cast<int>(F::kActivationBackward)] == Approx(0.85));
  CHECK(f.model.form[static_cast<int>(F::kResidualAdd)] == Approx(0.15).margin(0.002));  // the median of two, at 1940 MHz
  CHECK(f.model.form[static_cast<int>(F::kNorm)] == -1);                   // not measured: "any"'s
  CHECK(f.model.memory_fit_MHz == 1940);  // the median clock after the copies, the GEMM's left out
  REQUIRE(f.gemm.size() == 1);
  CHECK(f.gemm[0].share == Approx(0.6));
  CHECK(f.median_error < 1e-9);  // every kind but the adds has its own share exactly
  CHECK(f.worst_error > 0.01);   // the adds' two shares are each predicted at their median
  // Without an attention model the attention times stand for the light load's clock.
  CHECK(calibrate::fit_kernel_clock(cases, hw::KernelModel{}, 1980).model.attention_fit_MHz == 1940);
  // A kernel faster under the low clock shares nothing with it; none shares more than all.
  std::vector<calibrate::KernelClockCase> odd = cases;
  odd.push_back(clock_case("norm", "memory", F::kNorm, -0.2, 0.03));
  odd.push_back(clock_case("rope", "memory", F::kRope, 1.3, 0.03));
  const calibrate::KernelClockFit g = calibrate::fit_kernel_clock(odd, k, 1980);
  CHECK(g.model.form[static_cast<int>(F::kNorm)] == 0);
  CHECK(g.model.form[static_cast<int>(F::kRope)] == 1);
  // What the fit cannot do without is refused.
  std::vector<calibrate::KernelClockCase> twice = cases;
  twice.push_back(cases.back());
  CHECK_THROWS_WITH(calibrate::fit_kernel_clock(twice, k, 1980), Catch::Contains("comes twice"));
  std::vector<calibrate::KernelClockCase> no_copy;
  for (const calibrate::KernelClockCase& c : cases)
    if (c.name != "copy") no_copy.push_back(c);
  CHECK_THROWS_WITH(calibrate::fit_kernel_clock(no_copy, k, 1980), Catch::Contains("plain copy"));
}

TEST_CASE("kernel clock: the H100's kernels follow the clock as their bottleneck says, and the profiles hold it",
          "[calibrate][power][data]") {
  using F = sim::MemoryForm;
  calibrate::MeasurementSet set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/kernel_clock.json", set);
  REQUIRE(set.kernel_clock.size() == 14);
  for (const calibrate::KernelClockCase& c : set.kernel_clock) {
    INFO(c.name);
    CHECK(c.low_MHz < 1600);   // the GEMMs' power-capped clock (1518-1547 probed)
    CHECK(c.high_MHz > 1900);  // the copies' (1930-1944)
  }
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  const calibrate::KernelClockFit f = calibrate::fit_kernel_clock(set.kernel_clock, h200.kernels, h200.power.max_MHz);
  const hw::KernelClockModel& m = f.model;
  // Tensor-core work follows the clock almost wholly; a copy or an add waits on HBM; the chunked
  // SwiGLU backward (sigmoid and its derivative in FP32) computes enough per byte to follow it.
  CHECK(m.attention_fwd > 0.75);
  CHECK(m.attention_bwd > 0.75);
  CHECK(m.form[static_cast<int>(F::kActivationBackward)] > 0.75);
  CHECK(m.form[static_cast<int>(F::kAny)] < 0.1);
  CHECK(m.form[static_cast<int>(F::kActivation)] < 0.1);
  CHECK(m.form[static_cast<int>(F::kResidualAdd)] < 0.3);
  // The attention bench's calls, back to back, ran below the light load's clock: the GQA cases
  // stand for about the clock this file's own back-to-back runs ended at (1766, 1698 MHz); MLA's
  // backward would need a clock above the maximum, a miss of the attention model, left out.
  CHECK(m.attention_fit_MHz < m.memory_fit_MHz);
  CHECK(m.attention_fit_MHz > 1600);
  int above = 0;
  for (const auto* v : {&f.attention_fwd, &f.attention_bwd})
    for (const calibrate::KernelClockShare& s : *v) {
      INFO(s.name << " " << s.reference_MHz);
      CHECK(s.reference_MHz > 1600);
      above += s.above_max;
      if (s.above_max) CHECK(s.name == "attn_bwd_mla_v3");
    }
  CHECK(above == 1);
  // A GEMM timed alike follows the clock in part.
  REQUIRE(f.gemm.size() == 1);
  CHECK(f.gemm[0].share > 0.4);  // 0.70 here, 0.51 the power section's (another shape and fit)
  CHECK(f.gemm[0].share < 0.9);
  CHECK(f.worst_error < 0.02);  // one case per form; attention's two shapes a little apart
  // The H800 and the H100 (one chip, one HBM) hold this fit (calibrate carry --measured), with
  // the carried profile's attention model.
  for (const char* gpu : {"h800", "h100"}) {
    INFO(gpu);
    const hw::GpuProfile& p = *hw::find_profile(gpu);
    REQUIRE(p.kernel_clock.present());
    CHECK(p.kernel_clock.attention_fwd == Approx(m.attention_fwd).epsilon(1e-9));
    CHECK(p.kernel_clock.attention_fit_MHz == Approx(m.attention_fit_MHz).epsilon(1e-9));
    for (int i = 0; i < sim::kMemoryForms; ++i) CHECK(p.kernel_clock.form[i] == Approx(m.form[i]).epsilon(1e-9));
    CHECK(p.kernel_clock_params.at("activation_bwd").origin == "measured");
    CHECK(p.kernel_clock_params.at("activation_bwd").source.find("calibrate/data/h100/kernel_clock.json") != std::string::npos);
  }
}

TEST_CASE("kernel clock: on an H200 attention follows the clock as on the H100, memory-bound kernels more, and its profile holds its own",
          "[calibrate][power][data]") {
  using F = sim::MemoryForm;
  calibrate::MeasurementSet h100_set, h200_set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/kernel_clock.json", h100_set);
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h200/kernel_clock.json", h200_set);
  REQUIRE(h200_set.kernel_clock.size() == h100_set.kernel_clock.size());
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  const calibrate::KernelClockFit on_h100 = calibrate::fit_kernel_clock(h100_set.kernel_clock, h200.kernels, 1980);
  const calibrate::KernelClockFit on_h200 = calibrate::fit_kernel_clock(h200_set.kernel_clock, h200.kernels, 1980);
  const hw::KernelClockModel &a = on_h100.model, &b = on_h200.model;
  // Tensor-core work is the chip's: the same share and reference clock on both (0.84 / 0.87
  // forward, 0.88 / 0.92 backward, 1751 / 1755 MHz when written).
  CHECK(std::abs(a.attention_fwd - b.attention_fwd) < 0.06);
  CHECK(std::abs(a.attention_bwd - b.attention_bwd) < 0.06);
  CHECK(std::abs(a.attention_fit_MHz - b.attention_fit_MHz) < 50);
  // A memory-bound kernel waits less on the H200's 4.8 TB/s HBM against the same SMs than on the
  // H100's 3.35: none follows the clock less, and RMSNorm's forward (0.30 -> 0.50), SwiGLU's
  // forward (0.04 -> 0.35) and RoPE's backward (0.28 -> 0.54) clearly more.
  for (int i = 0; i < sim::kMemoryForms; ++i) {
    INFO(sim::memory_form_name(static_cast<F>(i)));
    if (on_h100.forms[i].empty()) continue;
    CHECK(b.form[i] > a.form[i] - 0.03);
  }
  CHECK(b.form[static_cast<int>(F::kNorm)] > a.form[static_cast<int>(F::kNorm)] + 0.1);
  CHECK(b.form[static_cast<int>(F::kActivation)] > a.form[static_cast<int>(F::kActivation)] + 0.2);
  CHECK(b.form[static_cast<int>(F::kRopeBackward)] > a.form[static_cast<int>(F::kRopeBackward)] + 0.1);
  // The H200 profile holds its own GPU's fit.
  for (int i = 0; i < sim::kMemoryForms; ++i) CHECK(h200.kernel_clock.form[i] == Approx(b.form[i]).epsilon(1e-9));
  CHECK(h200.kernel_clock.attention_bwd == Approx(b.attention_bwd).epsilon(1e-9));
  CHECK(h200.kernel_clock_params.at("norm_fwd").source.find("calibrate/data/h200/kernel_clock.json") != std::string::npos);
}

TEST_CASE("kernel clock: another HBM's shares are refused by calibrate fit and carry, the same chip and HBM's taken",
          "[calibrate][cli]") {
  const std::string d = test::source_dir() + "/calibrate/data/";
  calibrate::MeasurementSet set;
  calibrate::read_measurements(d + "h100/kernel_clock.json", set);
  calibrate::read_measurements(d + "h200/kernel_clock.json", set);
  const calibrate::Provenance& h100 = set.sources[0];
  const calibrate::Provenance& h200 = set.sources[1];
  CHECK_NOTHROW(calibrate::check_kernel_clock_source(h100, *hw::find_gpu("h800")));  // HBM3 3.35 TB/s both
  CHECK_NOTHROW(calibrate::check_kernel_clock_source(h100, *hw::find_gpu("h100")));
  CHECK_NOTHROW(calibrate::check_kernel_clock_source(h200, *hw::find_gpu("h200")));
  CHECK_THROWS_WITH(calibrate::check_kernel_clock_source(h200, *hw::find_gpu("h800")), Catch::Contains("HBM bandwidth"));
  CHECK_THROWS_WITH(calibrate::check_kernel_clock_source(h100, *hw::find_gpu("h200")), Catch::Contains("HBM bandwidth"));
}

TEST_CASE("kernel clock: a second run on another H100 gives every kernel the same share", "[calibrate][power][data]") {
  calibrate::MeasurementSet first, again;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/kernel_clock.json", first);
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/kernel_clock_repeat.json", again);
  REQUIRE(first.kernel_clock.size() == again.kernel_clock.size());
  for (size_t i = 0; i < first.kernel_clock.size(); ++i) {
    const calibrate::KernelClockCase& a = first.kernel_clock[i];
    const calibrate::KernelClockCase& b = again.kernel_clock[i];
    INFO(a.name);
    REQUIRE(a.name == b.name);
    CHECK(std::abs(calibrate::kernel_clock_share(a) - calibrate::kernel_clock_share(b)) < 0.08);  // 0.06 at most when written
  }
}

TEST_CASE("kernel clock: the cost model stretches each kind by its own share, only under the power limit", "[calibrate][power]") {
  using F = sim::MemoryForm;
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  const hw::GpuSpec& gpu = *hw::find_gpu("h200");
  const hw::KernelClockModel& k = h200.kernel_clock;
  REQUIRE(k.present());
  const hw::CalibratedCost capped(gpu, h200, hw::ClockLoad::kPowerCapped);
  constexpr double kMHz = 1500;
  const auto expect = [&](double share, double ref) { return (1 - share) + share * ref / kMHz; };
  CHECK(capped.compute_stretch(0, kMHz, compute(sim::ComputeKind::kAttentionForward)) ==
        Approx(expect(k.attention_fwd, k.attention_fit_MHz)));
  CHECK(capped.compute_stretch(0, kMHz, compute(sim::ComputeKind::kAttentionBackward)) ==
        Approx(expect(k.attention_bwd, k.attention_fit_MHz)));
  const double swiglu_bwd = capped.compute_stretch(0, kMHz, compute(sim::ComputeKind::kMemoryBound, F::kActivationBackward));
  const double add = capped.compute_stretch(0, kMHz, compute(sim::ComputeKind::kMemoryBound, F::kResidualAdd));
  CHECK(swiglu_bwd > 1.15);
  CHECK(add < 1.08);
  // A form not measured takes the plain copy's share; a generic kernel none.
  CHECK(capped.compute_stretch(0, kMHz, compute(sim::ComputeKind::kMemoryBound, F::kLoss)) ==
        Approx(expect(k.form[static_cast<int>(F::kAny)], k.memory_fit_MHz)));
  CHECK(capped.compute_stretch(0, kMHz, compute(sim::ComputeKind::kGeneric)) == 1);
  // Above the reference clock a kernel runs faster than its fit.
  CHECK(capped.compute_stretch(0, 1980, compute(sim::ComputeKind::kAttentionForward)) < 1);
  // A calibration case runs at its fit's clock: nothing stretches.
  const hw::CalibratedCost fit(gpu, h200, hw::ClockLoad::kFit);
  CHECK(fit.compute_stretch(0, kMHz, compute(sim::ComputeKind::kAttentionForward)) == 1);
}

TEST_CASE("kernel clock: the profile section reads back, and what it cannot hold is refused at its line", "[calibrate][profile]") {
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  const std::string yaml = calibrate::profile_yaml(h200);
  const hw::GpuProfile back = hw::parse_profile(hw::parse_yaml(yaml, "round-trip.yaml"));
  CHECK(back.kernel_clock.form == h200.kernel_clock.form);
  CHECK(back.kernel_clock.memory_fit_MHz == h200.kernel_clock.memory_fit_MHz);
  CHECK(back.kernel_clock_params.at("attention_bwd").source == h200.kernel_clock_params.at("attention_bwd").source);
  const auto with_value = [&](const std::string& key, const std::string& value) {
    std::string t = yaml;
    const size_t section = t.find("\nkernel_clock:");
    REQUIRE(section != std::string::npos);
    const std::string lead = "  " + key + ": {value: ";
    const size_t at = t.find(lead, section);
    REQUIRE(at != std::string::npos);
    const size_t from = at + lead.size();
    t.replace(from, t.find(',', from) - from, value);
    return t;
  };
  // A share of 0 is a kernel on HBM alone.
  CHECK(hw::parse_profile(hw::parse_yaml(with_value("residual_add", "0"), "zero.yaml"))
            .kernel_clock.form[static_cast<int>(sim::MemoryForm::kResidualAdd)] == 0);
  for (const auto& [key, value] : {std::pair{"activation_bwd", "1.2"}, std::pair{"attention_fwd", "-0.1"}, std::pair{"memory_fit_MHz", "0"}}) {
    INFO(key << " " << value);
    const std::string bad = with_value(key, value);
    // The error is at the value's own line.
    const size_t at = bad.find("  " + std::string(key) + ": {value: ", bad.find("\nkernel_clock:"));
    const int line = 1 + static_cast<int>(std::count(bad.begin(), bad.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    try {
      hw::parse_profile(hw::parse_yaml(bad, "bad.yaml"));
      FAIL("accepted");
    } catch (const hw::UserError& e) {
      CHECK(e.line() == line);
    }
  }
  // "any" is required (the forms not measured take it); a key it does not know is refused.
  std::string no_any = yaml;
  const size_t any = no_any.find("\n  any: {value: ", no_any.find("\nkernel_clock:"));
  REQUIRE(any != std::string::npos);
  no_any.erase(any, no_any.find('\n', any + 1) - any);
  CHECK_THROWS_WITH(hw::parse_profile(hw::parse_yaml(no_any, "no_any.yaml")), Catch::Contains("any"));
  std::string unknown = yaml;
  unknown.insert(unknown.find("\n  any: {value: ", unknown.find("\nkernel_clock:")), "\n  swiglu: {value: 0.5, origin: measured, source: x}");
  CHECK_THROWS_WITH(hw::parse_profile(hw::parse_yaml(unknown, "unknown.yaml")), Catch::Contains("swiglu"));
  // The clock it follows is the power section's.
  std::string no_power = yaml;
  const size_t power = no_power.find("\npower:");
  const size_t kernel_clock = no_power.find("\nkernel_clock:");
  REQUIRE(power < kernel_clock);
  no_power.erase(power, kernel_clock - power);
  CHECK_THROWS_WITH(hw::parse_profile(hw::parse_yaml(no_power, "no_power.yaml")), Catch::Contains("needs the 'power' section"));
}

}  // namespace CS_TEST_FILE
