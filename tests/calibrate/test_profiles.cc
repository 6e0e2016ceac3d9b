// The bundled profiles (hw/profiles/): where every number came from, the H800's carry-over, the
// YAML round trip, and the H200 profile against the H200 measurements through the simulator.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "calibrate/load_fit.h"
#include "calibrate/profile_build.h"
#include "calibrate/sim_cases.h"
#include "calibrate/validate.h"
#include "hw/calibrated_cost.h"
#include "hw/gemm_model.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"
#include "hw/user_error.h"
#include "profile_refusal.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs;

TEST_CASE("the bundled H100, H200 and H800 profiles name a source for every parameter", "[calibrate][profile]") {
  for (const char* gpu : {"h100", "h200", "h800"}) {
    const hw::GpuProfile* p = hw::find_profile(gpu);
    REQUIRE(p != nullptr);
    CHECK(p->gemm_params.size() == hw::GemmModel::kParams);
    CHECK(p->comm_params.size() == hw::CommModel::kParams);
    CHECK(p->clock_params.size() == hw::ClockModel::kParams);
    CHECK(p->memory_params.size() == hw::MemoryModel::kParams);
    CHECK(p->gemm_bf16_params.size() == hw::GemmBf16Model::kParams);
    // The required five; a form's rate and the launch gap only where measured.
    for (int i = 0; i < hw::KernelModel::kRequiredParams; ++i) CHECK(p->kernel_params.count(hw::KernelModel::param_name(i)));
    CHECK(p->power_params.size() == hw::PowerModel::kParams);
    for (const auto* params : {&p->gemm_params, &p->gemm_bf16_params, &p->comm_params, &p->kernel_params,
                               &p->clock_params, &p->memory_params, &p->power_params})
      for (const auto& [name, q] : *params) {
        INFO(gpu << " " << name);
        CHECK(!q.source.empty());
        CHECK(q.value > 0);
        // Carried profiles: their own GPU measured nothing of them, but for the memory-bound forms
        // and launch gap (calibrate carry --measured: the H100's, calibrate/data/h100/, for the H100
        // and for the H800, its chip and HBM), and the HBM ceiling where the fastest of those forms
        // raised it.
        const std::string g = gpu;
        const bool forms = g != "h200" && params == &p->kernel_params &&
                           (name == "launch_gap_us" || name.find("_GBps") + 5 == name.size()) && name != "elementwise_GBps";
        const double top = *std::max_element(p->kernels.form_GBps.begin(), p->kernels.form_GBps.end());
        const bool raised = g != "h200" && params == &p->memory_params && name == "hbm_GBps" && q.value == top;
        if (g != "h200" && !forms && !raised) CHECK(q.origin != "measured");
        if (forms || raised) CHECK(q.origin == "measured");
        if (params == &p->memory_params && name == "hbm_GBps") CHECK(q.value >= top);
      }
  }
}

TEST_CASE("the H800 profile is the H200's with HBM and NVLink scaled by the datasheets", "[calibrate][profile]") {
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  const hw::GpuProfile& h800 = *hw::find_profile("h800");
  CHECK(h800.gemm.split_k_us == Approx(h200.gemm.split_k_us));
  CHECK(h800.gemm.chip_tflops == Approx(h200.gemm.chip_tflops));
  CHECK(h800.gemm.hbm_GBps == Approx(h200.gemm.hbm_GBps * 3350 / 4800));
  CHECK(h800.comm.sm_copy_GBps == Approx(h200.comm.sm_copy_GBps));
  CHECK(h800.comm.nvlink_GBps == Approx(h200.comm.nvlink_GBps * 200 / 450));
  CHECK(h800.clocks.sustained_MHz == h200.clocks.sustained_MHz);  // the same chip (assumed: not measured there)
  CHECK(h800.power.window_ms == h200.power.window_ms);            // the same chip and 700 W limit
  CHECK(h800.power_params.at("limit_W").origin == "carried");
  CHECK(h800.memory.hbm_GBps == Approx(h200.memory.hbm_GBps * 3350 / 4800));
  // The memory-bound forms and the launch gap are the H100's measured ones (its chip and HBM), as
  // the bundled H100 profile holds them, not the H200's scaled by the HBM ratio: that would give
  // the loss forward, which HBM does not bound (1.35 TB/s on both GPUs), 0.94.
  const hw::GpuProfile& h100 = *hw::find_profile("h100");
  for (int i = 1; i < sim::kMemoryForms; ++i) {
    INFO(sim::memory_form_name(static_cast<sim::MemoryForm>(i)));
    CHECK(h800.kernels.form_GBps[i] == h100.kernels.form_GBps[i]);
  }
  CHECK(h800.kernels.form_GBps[static_cast<size_t>(sim::MemoryForm::kLoss)] > 1300);
  CHECK(h800.kernels.launch_gap_us == h100.kernels.launch_gap_us);
  // carry_profile reproduces the bundled file.
  const hw::GpuProfile again = calibrate::carry_profile(h200, *hw::find_gpu("h200"), *hw::find_gpu("h800"));
  CHECK(again.comm.nvlink_GBps == Approx(h800.comm.nvlink_GBps).epsilon(1e-9));
}

TEST_CASE("the bundled H100 profile is the H200's carried by the datasheets with its own memory-bound forms and clock shares, as calibrate carry writes it", "[calibrate][profile]") {
  const hw::GpuProfile* h100 = hw::find_profile("h100");
  REQUIRE(h100 != nullptr);
  CHECK(hw::bundled_profile_names() == "h100, h200, h800, h800-deepgemm");
  hw::GpuProfile again =
      calibrate::carry_profile(*hw::find_profile("h200"), *hw::find_gpu("h200"), *hw::find_gpu("h100"));
  calibrate::MeasurementSet forms;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/memory_bound_forms.json", forms);
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/kernel_clock.json", forms);
  calibrate::apply_measured_memory_forms(forms, *hw::find_gpu("h100"), again);
  calibrate::apply_kernel_clock(forms, again);
  // `calibrate carry hw/profiles/h200.yaml --to h100 --measured calibrate/data/h100/memory_bound_forms.json
  // calibrate/data/h100/kernel_clock.json`
  std::string yaml = calibrate::profile_yaml(again);
  for (size_t at; (at = yaml.find(test::source_dir() + "/")) != std::string::npos;)
    yaml.erase(at, test::source_dir().size() + 1);  // the README's command names the file from the source tree
  CHECK(yaml == test::read_file(test::source_dir() + "/hw/profiles/h100.yaml"));
  CHECK(h100->memory.hbm_GBps == Approx(again.memory.hbm_GBps).epsilon(1e-9));
  CHECK(h100->gemm.hbm_GBps == Approx(again.gemm.hbm_GBps).epsilon(1e-9));
  CHECK(h100->gemm.chip_tflops == Approx(again.gemm.chip_tflops).epsilon(1e-9));
  CHECK(h100->comm.nvlink_GBps == Approx(again.comm.nvlink_GBps).epsilon(1e-9));
  CHECK(h100->memory.hbm_GBps < hw::find_profile("h200")->memory.hbm_GBps);  // HBM3 3.35 against HBM3e 4.8 TB/s
}

TEST_CASE("a profile written as YAML reads back the same", "[calibrate][profile]") {
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  const hw::GpuProfile back = hw::parse_profile(hw::parse_yaml(calibrate::profile_yaml(h200), "round-trip.yaml"));
  CHECK(back.gemm.to_array() == h200.gemm.to_array());
  CHECK(back.comm.sm_copy_GBps == h200.comm.sm_copy_GBps);
  for (const auto& [name, q] : h200.gemm_params) {
    CHECK(back.gemm_params.at(name).source == q.source);
    CHECK(back.gemm_params.at(name).origin == q.origin);
  }
  CHECK(back.comm_range.at("size_bytes").lo == h200.comm_range.at("size_bytes").lo);
  CHECK(back.power.window_ms == h200.power.window_ms);
  CHECK(back.power.voltage_exponent == h200.power.voltage_exponent);
  CHECK(back.power_params.at("clock_stretch").source == h200.power_params.at("clock_stretch").source);
}

using cs::test::refused_on_line_of;

TEST_CASE("a profile's GEMM tiles are cuBLASLt's unless it names DeepGEMM's, and nothing else",
          "[calibrate][profile]") {
  const hw::GpuProfile& deepgemm = *hw::find_profile("h800-deepgemm");
  CHECK(deepgemm.gemm.tiling == hw::GemmTiling::kDeepGemm);
  CHECK_THAT(deepgemm.gemm_tiles_source, Catch::Contains("get_best_configs"));
  CHECK(hw::find_profile("h800")->gemm.tiling == hw::GemmTiling::kCublasLt);
  // A run says which tiles its FP8 GEMMs take.
  const hw::GpuSpec& h800_gpu = *hw::find_gpu("h800");
  CHECK_THAT(hw::CalibratedCost(h800_gpu, deepgemm, 0.0).describe(), Catch::Contains("FP8 GEMMs in DeepGEMM's tiles"));
  CHECK_THAT(hw::CalibratedCost(h800_gpu, *hw::find_profile("h800"), 0.0).describe(), !Catch::Contains("DeepGEMM"));
  const std::string text = calibrate::profile_yaml(deepgemm);
  CHECK(hw::parse_profile(hw::parse_yaml(text, "round-trip.yaml")).gemm.tiling == hw::GemmTiling::kDeepGemm);
  std::string bad = text;
  const auto at = bad.find("kernel: deepgemm") + 8;
  bad.replace(at, 8, "cutlass");
  refused_on_line_of(bad, at, "'gemm_tiles.kernel' must be cublaslt or deepgemm, found 'cutlass'");
}

TEST_CASE("a profile's DeepEP pace: read, written, carried, priced per channel, and refused at 0",
          "[calibrate][profile]") {
  const hw::GpuProfile& h800 = *hw::find_profile("h800");
  REQUIRE(h800.deepep.present());
  const std::string text = calibrate::profile_yaml(h800);
  const hw::GpuProfile back = hw::parse_profile(hw::parse_yaml(text, "round-trip.yaml"));
  CHECK(back.deepep.internode_channel_GBps == Approx(h800.deepep.internode_channel_GBps).epsilon(1e-10));
  // DeepEP runs a channel per two SMs: 20 SMs are 10 channels, 21 still 10, 1 at least one.
  CHECK(h800.deepep.internode_GBps(20) == Approx(10 * h800.deepep.internode_channel_GBps));
  CHECK(h800.deepep.internode_GBps(21) == h800.deepep.internode_GBps(20));
  CHECK(h800.deepep.internode_GBps(1) == h800.deepep.internode_channel_GBps);
  // Priced at the copies' clock: the fits' alone, the sustained one in a training step.
  const hw::GpuSpec& gpu = *hw::find_gpu("h800");
  CHECK(hw::CalibratedCost(gpu, h800, 0.0).comm_kernel_pace(0, 20).gbytes_per_s() ==
        Approx(h800.deepep.internode_GBps(20)));
  CHECK(hw::CalibratedCost(gpu, h800).comm_kernel_pace(0, 20).gbytes_per_s() ==
        Approx(h800.deepep.internode_GBps(20) * h800.clocks.sustained_MHz / h800.clocks.comm_fit_MHz));
  CHECK_THAT(hw::CalibratedCost(gpu, h800, 0.0).describe(), Catch::Contains("internode all-to-alls at DeepEP's pace"));
  // The pace is the SMs' work: carried unchanged to another GPU of the chip.
  const hw::GpuProfile h100 = calibrate::carry_profile(h800, gpu, *hw::find_gpu("h100"));
  CHECK(h100.deepep.internode_channel_GBps == h800.deepep.internode_channel_GBps);
  CHECK(h100.deepep_params.at("internode_channel_GBps").origin == "carried");
  // A profile without it sets no pace: the links alone bound the internode all-to-all.
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  CHECK_FALSE(h200.deepep.present());
  CHECK(std::isinf(hw::CalibratedCost(*hw::find_gpu("h200"), h200, 0.0).comm_kernel_pace(0, 20).bytes_per_s()));
  std::string bad = text;
  const auto at = bad.find("internode_channel_GBps: {value: ") + 32;
  bad.replace(at, bad.find(',', at) - at, "0");
  refused_on_line_of(bad, at, "internode_channel_GBps");
}

TEST_CASE("a profile's FlashAttention-2 rates: read, written, carried, and refused without kernels",
          "[calibrate][profile]") {
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  REQUIRE(h200.attention_fa2.present());
  const std::string text = calibrate::profile_yaml(h200);
  const hw::GpuProfile back = hw::parse_profile(hw::parse_yaml(text, "round-trip.yaml"));
  const int d192 = hw::AttentionFa2Model::kernel_of(192);
  CHECK(back.attention_fa2.kernels[d192].fwd_tflops ==
        Approx(h200.attention_fa2.kernels[d192].fwd_tflops).epsilon(1e-10));
  CHECK(back.attention_fa2.kernels[d192].bwd_us == Approx(h200.attention_fa2.kernels[d192].bwd_us).epsilon(1e-10));
  CHECK(back.attention_fa2_params.at("d192_fwd_tflops").origin == "measured");
  CHECK(back.attention_fa2.kernels[hw::AttentionFa2Model::kernel_of(128)].present());
  CHECK_FALSE(back.attention_fa2.kernels[hw::AttentionFa2Model::kernel_of(64)].present());
  // The tensor cores' work of the same chip: carried unchanged.
  const hw::GpuProfile h800 = calibrate::carry_profile(h200, *hw::find_gpu("h200"), *hw::find_gpu("h800"));
  CHECK(h800.attention_fa2.kernels[d192].bwd_tflops == h200.attention_fa2.kernels[d192].bwd_tflops);
  CHECK(h800.attention_fa2_params.at("d192_bwd_tflops").origin == "carried");
  // A kernel given in part is refused at the section.
  std::string part = text;
  const auto line = part.find("  d192_bwd_us:");
  part.erase(line, part.find('\n', line) + 1 - line);
  refused_on_line_of(part, part.find("  d128_fwd_us", part.find("attention_fa2:")), "gives part of the d192 kernel");
  // Its clock alone gives no kernel.
  std::string clock_only = text;
  const auto sec = clock_only.find("attention_fa2:\n") + 15;
  clock_only.erase(sec, clock_only.find("  fit_MHz:", sec) - sec);
  refused_on_line_of(clock_only, clock_only.find("  fit_MHz", sec), "'attention_fa2' gives no kernel");
  // Its times stand for the clock its calls ran at: a power-capped run stretches them from there,
  // not from cuDNN's attention reference, when it runs FlashAttention-2.
  REQUIRE(h200.attention_fa2.fit_MHz > 1900);  // it draws below the power limit
  CHECK(h200.attention_fa2.fit_MHz ==
        Approx(calibrate::loaded_mean_MHz(
                   calibrate::read_clock_log(test::source_dir() + "/calibrate/data/h200/attention_long_clocks.log")))
            .epsilon(1e-9));
  REQUIRE(h200.attention_fa2.fit_MHz != h200.kernel_clock.attention_fit_MHz);
  hw::CalibratedCost capped(*hw::find_gpu("h200"), h200, hw::ClockLoad::kPowerCapped);
  const sim::GenericCompute mla{
      1e12, 1e6, sim::DType::kBf16, sim::ComputeKind::kAttentionForward, sim::MemoryForm::kAny, 192, 128};
  const double s = h200.kernel_clock.attention_fwd;
  CHECK(capped.compute_stretch(0, 1800, mla) ==
        Approx(hw::share_stretch(s, h200.kernel_clock.attention_fit_MHz, 1800)));
  capped.set_attention_kernel(hw::AttentionKernel::kFa2);
  CHECK(capped.compute_stretch(0, 1800, mla) == Approx(hw::share_stretch(s, h200.attention_fa2.fit_MHz, 1800)));
  // Without the kernels section (the memory-bound kernels around it) the section is refused at its line.
  std::string bad = text;
  const auto from = bad.find("\nkernels:\n") + 1, to = bad.find("\nattention_fa2:\n") + 1;
  REQUIRE(to > from);
  bad.erase(from, to - from);
  refused_on_line_of(bad, bad.find("  d128_fwd_us", bad.find("attention_fa2:")),
                     "'attention_fa2' needs the 'kernels' section");
}

TEST_CASE("a profile's power section is refused where it cannot hold", "[calibrate][profile][power]") {
  const std::string good = calibrate::profile_yaml(*hw::find_profile("h200"));
  const auto refused = [&](std::string text, const char* why) {
    INFO(why);
    try {
      hw::parse_profile(hw::parse_yaml(text, "bad.yaml"));
      FAIL("accepted");
    } catch (const hw::UserError& e) {
      CHECK(e.line() > 1);
      CHECK_THAT(e.message(), Catch::Contains(why));
    }
  };
  // Without the clocks section, a GEMM's reference clock is unknown.
  std::string no_clocks = good;
  const auto c0 = no_clocks.find("\nclocks:\n") + 1;
  no_clocks.erase(c0, no_clocks.find("\nmemory:\n") + 1 - c0);
  refused(no_clocks, "'power' needs the 'clocks' section");
  // The board's idle draw above its limit.
  std::string hot = good;
  const auto at = hot.find("{value: ", hot.find("  static_W:")) + 8;
  hot.replace(at, hot.find(',', at) - at, "800");
  refused(hot, "'power.static_W' must be below 'power.limit_W'");
  // A window shorter than a millisecond: ticks that would outnumber every other event.
  std::string fast = good;
  const auto w = fast.find("{value: ", fast.find("  window_ms:")) + 8;
  fast.replace(w, fast.find(',', w) - w, "0.5");
  refused(fast, "'power.window_ms' must be at least 1");
}

TEST_CASE("a GEMM overlap exponent below 1 is refused at its value, and without one the plain max", "[calibrate][profile]") {
  const std::string good = calibrate::profile_yaml(*hw::find_profile("h200"));
  std::string low = good;
  const auto at = low.find("{value: ", low.find("  hbm_overlap_exponent:")) + 8;
  low.replace(at, low.find(',', at) - at, "0.5");
  refused_on_line_of(low, at, "'gemm.hbm_overlap_exponent' must be at least 1");
  // A profile written before the exponent: the tiled and HBM times' max, as then.
  std::string old = good;
  const auto line = old.find("  hbm_overlap_exponent:");
  old.erase(line, old.find('\n', line) + 1 - line);
  const hw::GpuProfile p = hw::parse_profile(hw::parse_yaml(old, "old.yaml"));
  CHECK(p.gemm.hbm_overlap_exponent == 0);
  // 128 x 4096 x 7168 on 64 SMs: 32 tiles split in k over 64 SMs, one wave whose time is about
  // its weights' streaming time (the knee).
  const sim::GemmShape g{128, 4096, 7168, sim::DType::kFp8};
  const hw::GemmModel& bundled = hw::find_profile("h200")->gemm;
  const auto parts = [&](const hw::GemmModel& m) {
    return std::pair{hw::gemm_model_tile_us(m, g, 64), hw::gemm_compulsory_bytes(g) / (m.hbm_GBps * 1e3)};
  };
  const auto [t_old, h_old] = parts(p.gemm);
  CHECK(h_old / t_old == Approx(0.9).margin(0.15));
  CHECK(hw::gemm_model_us(p.gemm, g, 64) == Approx(p.gemm.launch_us + std::max(t_old, h_old) + hw::gemm_model_split_reduce_us(p.gemm, g, 64)));
  const auto [t, h] = parts(bundled);
  const double reduce_us = hw::gemm_model_split_reduce_us(bundled, g, 64);
  CHECK(hw::gemm_model_us(bundled, g, 64) == Approx(bundled.launch_us + hw::gemm_bound_us(bundled, t, h) + reduce_us));
  CHECK(hw::gemm_model_us(bundled, g, 64) > bundled.launch_us + std::max(t, h) + reduce_us + 1.0);
  // The combination itself: the max without an exponent; with the H200's (2.92) 4 (1 + 0.75^2.92)^(1/2.92).
  CHECK(hw::gemm_bound_us(p.gemm, 3.0, 4.0) == 4.0);
  CHECK(bundled.hbm_overlap_exponent == Approx(2.92).margin(0.01));
  CHECK(hw::gemm_bound_us(bundled, 3.0, 4.0) == Approx(4.522).margin(0.01));
  CHECK(hw::gemm_bound_us(bundled, 0.0, 4.0) == 4.0);
}

TEST_CASE("a profile with a parameter missing its source is refused at its line", "[calibrate][profile]") {
  std::string text = calibrate::profile_yaml(*hw::find_profile("h200"));
  const auto at = text.find("source:", text.find("  tile_us:"));
  text.replace(at, text.find('}', at) - at, "source: \"\"");
  try {
    hw::parse_profile(hw::parse_yaml(text, "bad.yaml"));
    FAIL("accepted");
  } catch (const hw::UserError& e) {
    CHECK(e.line() > 1);
    CHECK_THAT(e.message(), Catch::Contains("must say where the value came from"));
  }
}

TEST_CASE("the H200 profile predicts held-out H200 measurements through the simulator", "[calibrate][data]") {
  calibrate::MeasurementSet set;
  const std::string dir = test::source_dir() + "/calibrate/data/h200/";
  // The sweeps the bundled profile is fitted on, each case at the SM clock read on the SMs.
  calibrate::read_measurements(dir + "fp8_gemm_probed_falling.json", set);
  calibrate::read_measurements(dir + "fp8_gemm_probed_rising.json", set);
  calibrate::read_measurements(dir + "all_to_all.json", set);
  for (const auto& g : set.gemms) CHECK(g.clock_MHz > 0);
  const calibrate::Validation v = calibrate::validate_profile(*hw::find_profile("h200"), *hw::find_gpu("h200"), set, 4);
  CHECK(v.comm_held.cases == 48);
  CHECK(v.comm_held.median_error < 0.10);  // the bound for all-to-alls
  CHECK(v.gemm_held.cases == 224);
  CHECK(v.gemm_held.median_error < 0.025);  // 1.6% (the issue asks 5%)
  // Today's worst held-out GEMM is 11.4% (the issue asks 10%): 128 x 4096 x 7168 split in k on
  // 64-112 SMs, which runs faster the more SMs its partition has though its 64 units fill only 64
  // (17.8% before the GEMM's overlap exponent, 13.1% on the sweep without clocks). A guard.
  CHECK(v.gemm_held.worst_error < 0.12);
  for (const auto& c : v.cases) CHECK(!c.beyond_range);
}

TEST_CASE("the H200 profile carried to the H100 predicts our H100 measurements: the carry method checked", "[calibrate][data]") {
  // The H100 has the H800's HBM3 (3.35 TB/s, 80 GB) and power limit on the same chip as the H200,
  // so the H200 profile carried to it through the datasheet ratios, as the H800 profile is, meets
  // measurements the fit never saw (calibrate/data/h100/, one H100 SXM, 2026-11-24).
  const hw::GpuProfile h100 =
      calibrate::carry_profile(*hw::find_profile("h200"), *hw::find_gpu("h200"), *hw::find_gpu("h100"));
  calibrate::MeasurementSet set;
  const std::string dir = test::source_dir() + "/calibrate/data/h100/";
  calibrate::read_measurements(dir + "fp8_gemm.json", set);
  calibrate::read_measurements(dir + "memory_bound_device_time.json", set);
  const calibrate::Validation v = calibrate::validate_profile(h100, *hw::find_gpu("h100"), set, 4);
  CHECK(v.gemm_held.cases == 56);
  CHECK(v.gemm_all.cases == 224);
  CHECK(v.gemm_all.median_error < 0.07);  // 3.9% (the H200's own fit: 3.2% held out)
  // 22.1%: 4096 x 32768 x 512 on 132 SMs, 160 us measured, 195 predicted, as the HBM bound scaled
  // by 3.35 / 4.8 meets the tiles near the knee; the H100 runs it faster than the H200 (165 us),
  // so HBM does not bound it on either, and the fitted bound is an effective one (16.2% with the
  // plain max before the overlap exponent).
  CHECK(v.gemm_all.worst_error < 0.25);
  CHECK(v.memory_bound.cases == 8);
  // 1.8% by the kernels' device time, HBM scaled by 3.35 / 4.8 (12.2% when both GPUs' rates were
  // CUDA events around one call, which count the CPU's launch).
  CHECK(v.memory_bound.median_error < 0.05);
  // The sustained clock the H800 profile assumes is the H200's: the H100 under the overlap
  // bench's load holds within 3% of it, and its GEMM sweep within 3% of the sweep's.
  const double sustained = calibrate::loaded_mean_MHz(calibrate::read_clock_log(dir + "overlap_clocks.log"));
  const double sweep = calibrate::loaded_mean_MHz(calibrate::read_clock_log(dir + "fp8_gemm_clocks.log"));
  CHECK(sustained == Approx(h100.clocks.sustained_MHz).epsilon(0.03));
  CHECK(sweep == Approx(h100.clocks.gemm_fit_MHz).epsilon(0.03));
}

TEST_CASE("the carried H100 profile predicts the H100's GEMM / copy overlap: HBM contention carried", "[calibrate][data]") {
  // The contention mechanisms (HBM saturation, GEMM traffic, L2 shares) come from H200 and H100
  // measurements the overlap bench never saw on the H100; its HBM is 3.35 / 4.8 of the H200's, so
  // the copies there slow the GEMMs by up to 69%.
  const hw::GpuProfile h100 =
      calibrate::carry_profile(*hw::find_profile("h200"), *hw::find_gpu("h200"), *hw::find_gpu("h100"));
  calibrate::MeasurementSet set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/overlap.json", set);
  const calibrate::Validation v = calibrate::validate_profile(h100, *hw::find_gpu("h100"), set, 4);
  CHECK(v.overlap.cases == 16);
  // 6.0% median, 15.6% worst (48 SMs of copies: the model's GEMMs too fast), with the copy's
  // slowdown beside GEMMs fitted on the H200 and the H200's HBM ceiling the SwiGLU forward's 4.38
  // TB/s by device time (5.8% and 14.1% under the 4.23 TB/s copy's; 7.2% and 13.6% without the
  // slowdown; 6.8% and 14.2% while a GEMM counted its own stream's predecessor as other HBM
  // traffic, before a wave's tiles ran out of phase; 15.8% and 36% with max-min sharing of
  // compulsory bytes).
  CHECK(v.overlap.median_error < 0.065);
  CHECK(v.overlap.worst_error < 0.165);
  for (const auto& o : v.optima) CHECK(o.steps_apart <= 1);
}

TEST_CASE("large GEMMs on big partitions run at the power-capped clock NVML sampled, not slower per cycle", "[calibrate][data]") {
  // cs_fp8_gemm --sample-clocks on one H100 (calibrate/data/h100/fp8_gemm_clocks_falling.json):
  // the large shapes' median SM clock is the maximum up to 48 SMs and falls under the power cap
  // beyond; predicted at each case's own clock, the large shapes on 104-128 SMs lose most of the
  // 9% bias they have at the fit's (-0.4% at the median).
  // (The whole GPU is measured first in this file, after the previous shape's 16-SM case: still at
  // the maximum clock, it is left out.)
  const hw::GpuProfile h100 =
      calibrate::carry_profile(*hw::find_profile("h200"), *hw::find_gpu("h200"), *hw::find_gpu("h100"));
  calibrate::MeasurementSet set;
  calibrate::read_measurements(test::source_dir() + "/calibrate/data/h100/fp8_gemm_clocks_falling.json", set);
  REQUIRE(set.gemms.size() == 448);
  std::vector<double> clock_small, clock_112, at_case, at_fit;
  for (const calibrate::GemmCase& g : set.gemms) {
    REQUIRE(g.clock_MHz > 0);
    if (g.shape.m < 4096) continue;
    if (g.sms <= 48) clock_small.push_back(g.clock_MHz);
    if (g.sms == 112) clock_112.push_back(g.clock_MHz);
    if (g.sms < 104 || g.sms > 128) continue;
    calibrate::GemmCase fit_clock = g;
    fit_clock.clock_MHz = 0;
    at_case.push_back(calibrate::simulate_gemm(h100, *hw::find_gpu("h100"), g).to_seconds() * 1e6 / g.time_us - 1);
    at_fit.push_back(calibrate::simulate_gemm(h100, *hw::find_gpu("h100"), fit_clock).to_seconds() * 1e6 / g.time_us - 1);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  CHECK(median(clock_small) > 1950);  // 1980: the maximum
  CHECK(median(clock_112) < 1850);    // 1815
  CHECK(median(at_fit) < -0.07);      // -8.7%: the shortfall the sweep validation showed
  CHECK(std::abs(median(at_case)) < 0.03);
}

TEST_CASE("BF16 GEMMs run on their measured rates: faster than the FP8 fit's datasheet half", "[calibrate][profile][data]") {
  const hw::GpuProfile& h200 = *hw::find_profile("h200");
  REQUIRE(h200.gemm_bf16.present());
  CHECK(h200.gemm_bf16_params.at("sm_tflops").origin == "measured");
  CHECK(h200.gemm_bf16_params.at("sm_tflops").source.find("calibrate/data/h200/bf16_gemm.json") != std::string::npos);
  // The mechanism: FP8 with block scaling pays for scaling partial sums, BF16 does not, so BF16
  // runs at more than half the FP8 rate, per SM and chip-wide.
  CHECK(h200.gemm_bf16.sm_tflops > 0.55 * h200.gemm.sm_tflops);
  CHECK(h200.gemm_bf16.chip_tflops > 0.55 * h200.gemm.chip_tflops);
  const hw::GpuSpec& gpu = *hw::find_gpu("h200");
  const hw::CalibratedCost cost(gpu, h200, 0.0);
  const sim::GemmShape bf16{4096, 14336 * 2, 4096, sim::DType::kBf16, 1};
  CHECK(cost.mma_scale(sim::DType::kBf16) == 1.0);
  CHECK(cost.gemm_model(sim::DType::kBf16).sm_tflops == h200.gemm_bf16.sm_tflops);
  hw::GpuProfile no_bf16 = h200;
  no_bf16.gemm_bf16 = {};
  const hw::CalibratedCost carried(gpu, no_bf16, 0.0);
  CHECK(carried.mma_scale(sim::DType::kBf16) == Approx(0.5).epsilon(0.01));
  CHECK(cost.gemm_time(0, bf16, 132) < carried.gemm_time(0, bf16, 132));
  // FP8 keeps its own.
  const sim::GemmShape fp8{4096, 7168, 7168, sim::DType::kFp8, 1};
  CHECK(cost.gemm_time(0, fp8, 132) == carried.gemm_time(0, fp8, 132));
}

TEST_CASE("the BF16 fit on the committed H100 sweep: within 6% at the median, held out too", "[calibrate][data]") {
  calibrate::MeasurementSet set;
  calibrate::read_measurements(cs::test::source_dir() + "/calibrate/data/h100/bf16_gemm.json", set);
  REQUIRE(set.bf16_gemms.size() == 240);  // 48 shapes on 132, 96, 64, 32 and 16 SMs
  const hw::GpuProfile& h100 = *hw::find_profile("h100");
  const calibrate::Validation v = calibrate::validate_profile(h100, *hw::find_gpu("h100"), set, 4);
  CHECK(v.gemm_bf16_held.cases == 60);
  CHECK(v.gemm_bf16_held.median_error < 0.06);
  CHECK(v.gemm_bf16_all.median_error < 0.06);
  CHECK(v.gemm_bf16_all.worst_error < 0.25);
}

TEST_CASE("a profile's BF16 rate of zero is refused at its line", "[calibrate][profile]") {
  cs::test::TempDir tmp;
  std::string text = cs::test::read_file(cs::test::source_dir() + "/hw/profiles/h200.yaml");
  const std::string key = "  chip_tflops: {value: ";
  const size_t bf16 = text.find("gemm_bf16:");
  REQUIRE(bf16 != std::string::npos);
  const size_t at = text.find(key, bf16);
  REQUIRE(at != std::string::npos);
  text.replace(at + key.size(), text.find(',', at) - (at + key.size()), "0");
  cs::test::write_file(tmp.file("p.yaml"), text);
  try {
    hw::load_profile(tmp.file("p.yaml"));
    FAIL("a zero BF16 rate was accepted");
  } catch (const hw::UserError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("gemm_bf16.chip_tflops") != std::string::npos);
    CHECK(std::string(e.what()).find("p.yaml:") != std::string::npos);
  }
}

}  // namespace CS_TEST_FILE
