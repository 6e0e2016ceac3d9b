// clustersim calibrate fit | validate | carry | published: measurements -> profile -> predictions beside them.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "calibrate/deepep_fit.h"
#include "calibrate/deepgemm_fit.h"
#include "calibrate/fit_stats.h"
#include "calibrate/profile_build.h"
#include "calibrate/published_check.h"
#include "calibrate/validate.h"
#include "cli/commands.h"
#include "hw/gpu_catalog.h"
#include "hw/user_error.h"
#include "models/moe_routing.h"
#include "reports/atomic_file.h"

namespace cs::cli {

namespace {

calibrate::MeasurementSet read_all(const std::vector<std::string>& files) {
  calibrate::MeasurementSet set;
  for (const std::string& f : files) calibrate::read_measurements(f, set);
  for (const std::string& n : set.notes) std::cerr << "clustersim: " << n << "\n";
  return set;
}

// The catalog GPU named, or the one the measurements were taken on.
const hw::GpuSpec& gpu_of(const std::string& name, const calibrate::MeasurementSet& set) {
  if (!name.empty()) {
    if (const hw::GpuSpec* g = hw::find_gpu(name)) return *g;
    throw hw::UserError("--gpu", 0, 0, "unknown GPU '" + name + "' (clustersim hw list)");
  }
  for (const hw::GpuSpec& g : hw::gpu_catalog())
    if (!set.sources.empty() && calibrate::measured_on(set.sources.front(), g.name)) return g;
  throw hw::UserError("--gpu", 0, 0, "the measurements name no catalog GPU: give --gpu");
}

void print_stats(const char* what, const calibrate::FitStats& s) {
  std::printf("  %-28s %4d cases  median %5.1f%%  worst %5.1f%%  R^2(log) %.4f\n", what, s.cases,
              s.median_error * 100, s.worst_error * 100, s.r2_log);
}

void print_validation(const calibrate::Validation& v, bool every_case) {
  if (every_case) {
    std::printf("%-15s %-62s %12s %12s %8s\n", "kind", "case", "measured_us", "predicted_us", "error");
    for (const auto& c : v.cases)
      std::printf("%-15s %-62s %12.2f %12.2f %+7.1f%%%s%s\n", c.kind.c_str(), c.label.c_str(), c.measured_us,
                  c.predicted_us, c.error() * 100, c.held_out ? "  held out" : "", c.beyond_range ? "  BEYOND RANGE" : "");
  }
  std::printf("simulated against measured:\n");
  print_stats("FP8 GEMM, held out", v.gemm_held);
  print_stats("FP8 GEMM, all", v.gemm_all);
  if (v.gemm_bf16_all.cases > 0) {
    print_stats("BF16 GEMM, held out", v.gemm_bf16_held);
    print_stats("BF16 GEMM, all", v.gemm_bf16_all);
  }
  if (v.gemm_scalings.cases > 0) {
    print_stats("FP8 GEMM, both scalings", v.gemm_scalings);
    print_stats("FP8 GEMM, 1x128 x 1x128", v.gemm_tiles);
  }
  print_stats("all-to-all, held out", v.comm_held);
  print_stats("all-to-all, all", v.comm_all);
  if (v.attention.cases > 0) print_stats("attention (fitted)", v.attention);
  if (v.attention_fa2.cases > 0) print_stats("FlashAttention-2 (fitted)", v.attention_fa2);
  if (v.memory_bound.cases > 0) print_stats("memory-bound (fitted)", v.memory_bound);
  if (v.memory_forms.cases > 0) print_stats("memory-bound forms (fitted)", v.memory_forms);
  if (v.overlap.cases > 0) print_stats("overlap makespan (unfitted)", v.overlap);
  if (v.pipeline.cases > 0) print_stats("pipeline step (unfitted)", v.pipeline);
  if (v.power.cases > 0) print_stats("GEMM call, power limit", v.power);
  for (const auto& o : v.optima) {
    std::printf("  best all-to-all SMs for %d GEMMs + %d all-to-alls of %s: measured %d, predicted %d (%d sweep steps apart)\n",
                o.gemms, o.a2as, o.shape.c_str(), o.measured_best, o.predicted_best, o.steps_apart);
    if (every_case)
      for (size_t i = 0; i < o.ctas.size(); ++i)
        std::printf("    %2d SMs  measured %9.0f us  predicted %9.0f us  %+6.1f%%\n", o.ctas[i], o.measured_us[i],
                    o.predicted_us[i], (o.predicted_us[i] / o.measured_us[i] - 1) * 100);
  }
  const auto beyond = std::count_if(v.cases.begin(), v.cases.end(), [](const auto& c) { return c.beyond_range; });
  if (beyond > 0)
    std::cerr << "clustersim: warning: " << beyond << " cases lie beyond the range the profile was fitted on\n";
}

void write_text(const std::string& path, const std::string& text) {
  reports::AtomicFile out(path);
  out.stream() << text;
  out.finish_writing();
  out.commit();
}

}  // namespace

int cmd_calibrate_fit(const CalibrateArgs& a) {
  const calibrate::MeasurementSet set = read_all(a.data);
  const hw::GpuSpec& gpu = gpu_of(a.gpu, set);
  reports::AtomicFile out(a.out);  // an unwritable target fails before the fit
  calibrate::ProfileBuild b = calibrate::build_profile(set, gpu, a.holdout_every, a.clocks);
  b.profile.file = a.out;
  std::printf("profile %s for %s\n", a.out.c_str(), gpu.model.c_str());
  std::printf("gemm (%d iterations%s):\n", b.gemm.iterations, b.gemm.converged ? "" : ", NOT CONVERGED");
  for (const auto& [name, p] : b.profile.gemm_params) std::printf("  %-20s %12.5g\n", name.c_str(), p.value);
  std::printf("comm (%d iterations%s):\n", b.comm.iterations, b.comm.converged ? "" : ", NOT CONVERGED");
  for (const auto& [name, p] : b.profile.comm_params) std::printf("  %-20s %12.5g\n", name.c_str(), p.value);
  for (const auto& [name, p] : b.profile.clock_params) std::printf("  %-20s %12.5g\n", name.c_str(), p.value);
  for (const auto& [name, p] : b.profile.memory_params) std::printf("  %-20s %12.5g\n", name.c_str(), p.value);
  std::printf("fit residuals (closed forms, on the cases fitted):\n");
  print_stats("FP8 GEMM", b.gemm.fit);
  print_stats("all-to-all", b.comm.fit);
  if (b.gemm_bf16) {
    for (const auto& [name, p] : b.profile.gemm_bf16_params) std::printf("  bf16 %-9s %12.5g\n", name.c_str(), p.value);
    print_stats("BF16 GEMM", b.gemm_bf16->fit);
  }
  if (b.fp8_tiles)
    std::printf("FP8 GEMMs, 1x128 x 1x128 scaling: MMA slowdown %.4g, median of %d pairs (left out: %d with the "
                "tiles faster, %d beyond the search, %d unpaired); their time ratios back: median error %.1f%%, "
                "worst %.1f%%\n",
                b.fp8_tiles->mma_slowdown, b.fp8_tiles->pairs, b.fp8_tiles->tiles_faster, b.fp8_tiles->beyond_max,
                b.fp8_tiles->unpaired, b.fp8_tiles->median_error * 100, b.fp8_tiles->worst_error * 100);
  if (b.kernel_clock) {
    const calibrate::KernelClockFit& k = *b.kernel_clock;
    std::printf("kernels' time following the SM clock (share): attention forward %.2f, backward %.2f (at %.0f MHz in the profile)",
                k.model.attention_fwd, k.model.attention_bwd, k.model.attention_fit_MHz);
    for (int i = 0; i < sim::kMemoryForms; ++i)
      if (k.model.form[i] >= 0) std::printf(", %s %.2f", sim::memory_form_name(static_cast<sim::MemoryForm>(i)), k.model.form[i]);
    std::printf(" (at %.0f MHz); each case's time ratio back: median error %.1f%%, worst %.1f%%\n", k.model.memory_fit_MHz,
                k.median_error * 100, k.worst_error * 100);
    for (const calibrate::KernelClockShare& g : k.gemm)
      std::printf("  check: %s timed alike follows the clock at %.2f (power.clock_stretch %.2f)\n", g.name.c_str(), g.share,
                  b.profile.power.clock_stretch);
  }
  if (b.kernels) {
    for (const auto& [name, p] : b.profile.kernel_params) std::printf("  %-16s %12.5g\n", name.c_str(), p.value);
    print_stats("attention forward", b.kernels->attn_fwd);
    print_stats("attention backward", b.kernels->attn_bwd);
    print_stats("memory-bound (fused)", b.kernels->elementwise);
    if (b.kernels->fa2.present()) {
      for (const auto& [name, p] : b.profile.attention_fa2_params)
        std::printf("  fa2 %-12s %12.5g\n", name.c_str(), p.value);
      for (const auto& k : b.kernels->fa2_kernels) {
        print_stats(fmt::format("FlashAttention-2 d{} fwd", k.head_dim).c_str(), k.fwd);
        print_stats(fmt::format("FlashAttention-2 d{} bwd", k.head_dim).c_str(), k.bwd);
      }
    }
  }
  if (b.power) {
    std::printf("power (the SM clock under the %.0f W limit):\n", b.power->model.limit_W);
    for (const auto& [name, p] : b.profile.power_params) std::printf("  %-16s %12.5g\n", name.c_str(), p.value);
    std::printf("  %-16s %9s %9s %8s %8s %9s %9s\n", "phase (2nd half)", "W meas", "W pred", "MHz meas", "MHz pred", "ms meas",
                "ms pred");
    for (const calibrate::PowerFitRow& r : b.power->rows)
      std::printf("  %-16s %9.1f %9.1f %8.0f %8.0f %9.3f %9.3f\n", r.phase.c_str(), r.measured_W, r.predicted_W, r.measured_MHz,
                  r.predicted_MHz, r.measured_call_s * 1e3, r.predicted_call_s * 1e3);
    std::printf("  %-16s %6s %13s %13s %9s\n", "first second", "calls", "mean ms meas", "mean ms pred", "rms err");
    for (const calibrate::PowerOnsetRow& r : b.power->onsets)
      std::printf("  %-16s %6d %13.3f %13.3f %8.1f%%\n", r.phase.c_str(), r.calls, r.measured_mean_call_s * 1e3,
                  r.predicted_mean_call_s * 1e3, 100 * r.rms_call_error);
  }
  print_validation(calibrate::validate_profile(b.profile, gpu, set, a.holdout_every), false);
  out.stream() << calibrate::profile_yaml(b.profile);
  out.finish_writing();
  check_stdout();
  out.commit();
  return 0;
}

int cmd_calibrate_validate(const CalibrateArgs& a) {
  const hw::GpuProfile profile = hw::load_profile(a.profile);
  const calibrate::MeasurementSet set = read_all(a.data);
  const hw::GpuSpec& gpu = gpu_of(profile.gpu, set);
  for (const calibrate::Provenance& src : set.sources)
    if (!calibrate::measured_on(src, gpu.name))
      throw hw::UserError(src.file, 0, 0, "measured on '" + src.gpu + "', but the profile is for " + gpu.model +
                                              ": validate a profile against its own GPU's measurements");
  print_validation(calibrate::validate_profile(profile, gpu, set, a.holdout_every), true);
  check_stdout();
  return 0;
}

int cmd_calibrate_carry(const CalibrateArgs& a) {
  const hw::GpuProfile from = hw::load_profile(a.profile);
  const hw::GpuSpec* from_gpu = hw::find_gpu(from.gpu);
  const hw::GpuSpec* to_gpu = hw::find_gpu(a.gpu);
  if (!to_gpu) throw hw::UserError("--to", 0, 0, "unknown GPU '" + a.gpu + "' (clustersim hw list)");
  if (from_gpu->sms != to_gpu->sms || from_gpu->fp8_dense_tflops != to_gpu->fp8_dense_tflops)
    throw hw::UserError("--to", 0, 0, to_gpu->model + " is not the same compute chip as " + from_gpu->model +
                                          ": a profile carries over only between GPUs of one chip");
  hw::GpuProfile p = calibrate::carry_profile(from, *from_gpu, *to_gpu);
  // The target's own measurements, where given, replace what was carried.
  if (!a.data.empty()) {
    const calibrate::MeasurementSet set = read_all(a.data);
    if (set.memory_forms.empty() && set.launch_gaps_us.empty() && set.kernel_clock.empty())
      throw hw::UserError("--measured", 0, 0, "no memory-bound kernel forms or kernels timed at two clocks in the files "
                                              "given: --measured takes kernels/torch/memory_bound_forms.py's and "
                                              "kernel_clock.py's JSON");
    for (const calibrate::Provenance& src : set.sources)
      if (src.program == "kernels/torch/kernel_clock.py") calibrate::check_kernel_clock_source(src, *to_gpu);
    calibrate::apply_measured_memory_forms(set, *to_gpu, p);
    // After the forms: the shares are of the kernels as the profile now prices them.
    if (!set.kernel_clock.empty()) calibrate::apply_kernel_clock(set, p);
  }
  p.file = a.out;
  write_text(a.out, calibrate::profile_yaml(p));
  std::printf("profile %s for %s, carried from %s\n", a.out.c_str(), to_gpu->model.c_str(), from.file.c_str());
  std::printf("  gemm.hbm_GBps   %6.5g -> %.5g\n", from.gemm.hbm_GBps, p.gemm.hbm_GBps);
  std::printf("  nvlink_GBps     %6.5g -> %.5g\n", from.comm.nvlink_GBps, p.comm.nvlink_GBps);
  if (from.memory.present()) std::printf("  memory.hbm_GBps %6.5g -> %.5g\n", from.memory.hbm_GBps, p.memory.hbm_GBps);
  check_stdout();
  return 0;
}

int cmd_calibrate_published(const CalibrateArgs& a) {
  const hw::GpuProfile profile = hw::load_profile(a.profile);
  const hw::GpuSpec* gpu = hw::find_gpu(profile.gpu);
  if (!gpu || gpu->name != "h800")
    throw hw::UserError(a.profile, 0, 0, "the published tables (DeepGEMM, DeepEP) are of the H800; this profile is for '" +
                                             profile.gpu + "' (clustersim calibrate carry PROFILE --to h800 -o h800.yaml)");
  std::vector<calibrate::PublishedCheck> checks = calibrate::check_deepgemm(profile, *gpu);
  for (auto& c : calibrate::check_deepep_intranode(profile, *gpu)) checks.push_back(std::move(c));
  for (auto& c : calibrate::check_deepep_internode(profile)) checks.push_back(std::move(c));
  std::printf("%-18s %-28s %10s %10s %8s\n", "table", "case", "published", "predicted", "error");
  for (const auto& c : checks)
    std::printf("%-18s %-28s %10.1f %10.1f %+7.1f%%  %s\n", c.table.c_str(), c.name.c_str(), c.published, c.predicted,
                c.error() * 100, c.unit.c_str());
  std::printf("predicted against published:\n");
  std::vector<std::string> tables;
  for (const auto& c : checks)
    if (std::find(tables.begin(), tables.end(), c.table) == tables.end()) tables.push_back(c.table);
  for (const std::string& t : tables) {
    std::vector<double> predicted, published;
    for (const auto& c : checks)
      if (c.table == t) predicted.push_back(c.predicted), published.push_back(c.published);
    print_stats(t.c_str(), calibrate::fit_stats(predicted, published));
  }
  check_stdout();
  return 0;
}

int cmd_calibrate_deepgemm(const CalibrateArgs& a) {
  const hw::GpuProfile from = hw::load_profile(a.profile);
  const hw::GpuSpec* gpu = hw::find_gpu(from.gpu);
  if (!gpu || gpu->name != "h800")
    throw hw::UserError(a.profile, 0, 0,
                        "DeepGEMM's table is of the H800; this profile is for '" + from.gpu +
                            "' (clustersim calibrate carry PROFILE --to h800 -o h800.yaml)");
  calibrate::DeepGemmFit fit = calibrate::fit_deepgemm(from, *gpu);
  fit.profile.file = a.out;
  write_text(a.out, calibrate::profile_yaml(fit.profile));
  std::printf("profile %s: the FP8 GEMMs of %s refitted to DeepGEMM's published H800 table\n", a.out.c_str(),
              from.file.c_str());
  std::printf("  tile_us      %8.4g -> %.4g (%+.3f us per tile)\n", from.gemm.tile_us, fit.profile.gemm.tile_us,
              fit.tile_us_added);
  std::printf("  sm_tflops    %8.4g -> %.4g (x %.4f)\n", from.gemm.sm_tflops, fit.profile.gemm.sm_tflops,
              fit.mma_scale);
  std::printf("  chip_tflops  %8.4g -> %.4g (x %.4f)\n", from.gemm.chip_tflops, fit.profile.gemm.chip_tflops,
              fit.mma_scale);
  std::printf("%-12s %-28s %10s %10s %8s\n", "rows", "case", "published", "predicted", "error");
  for (const auto& [what, rows] : {std::pair{"fitted", &fit.fitted}, std::pair{"held out", &fit.held_out},
                                   std::pair{"own tiles", &fit.other_tiles}})
    for (const calibrate::PublishedCheck& c : *rows)
      std::printf("%-12s %-28s %10.1f %10.1f %+7.1f%%  %s\n", what, c.name.c_str(), c.published, c.predicted,
                  c.error() * 100, c.unit.c_str());
  for (const auto& [what, rows] :
       {std::pair{"fitted (dense, 128x128 tiles)", &fit.fitted}, std::pair{"held out (grouped)", &fit.held_out},
        std::pair{"held out (dense, own tiles)", &fit.other_tiles}}) {
    print_stats(what, calibrate::published_stats(*rows));
  }
  check_stdout();
  return 0;
}

int cmd_calibrate_deepep(const CalibrateArgs& a) {
  calibrate::DeepEpFit fit = calibrate::fit_deepep(hw::load_profile(a.profile));
  fit.profile.file = a.out;
  write_text(a.out, calibrate::profile_yaml(fit.profile));
  std::printf("profile %s: the internode all-to-all of %s paced as DeepEP's published H800 table\n", a.out.c_str(),
              a.profile.c_str());
  std::printf("  deepep.internode_channel_GBps %.4g (%.4g GB/s on DeepEP's %d SMs)\n",
              fit.profile.deepep.internode_channel_GBps, fit.profile.deepep.internode_GBps(models::kDeepEpDefaultSms),
              models::kDeepEpDefaultSms);
  std::printf("%-12s %-28s %10s %10s %8s\n", "rows", "case", "published", "predicted", "error");
  for (const auto& [what, rows] : {std::pair{"fitted", &fit.fitted}, std::pair{"held out", &fit.held_out}})
    for (const calibrate::PublishedCheck& c : *rows)
      std::printf("%-12s %-28s %10.1f %10.1f %+7.1f%%  %s\n", what, c.name.c_str(), c.published, c.predicted,
                  c.error() * 100, c.unit.c_str());
  print_stats("fitted (EP16)", calibrate::published_stats(fit.fitted));
  print_stats("held out (EP32, EP64)", calibrate::published_stats(fit.held_out));
  check_stdout();
  return 0;
}

}  // namespace cs::cli
