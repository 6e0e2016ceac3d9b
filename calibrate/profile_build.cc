#include "calibrate/profile_build.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "calibrate/copy_slowdown_fit.h"
#include "calibrate/fit_sources.h"
#include "calibrate/kernel_params.h"
#include "calibrate/load_fit.h"
#include "calibrate/memory_fit.h"
#include "calibrate/memory_form_fit.h"
#include "hw/user_error.h"

namespace cs::calibrate {

namespace {

std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", v);  // ranges must round-trip: no case falls outside its own
  return buf;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Adds a measurement file to the profile's fitted_from, once (a fit names its forms' files first).
void name_source(const Provenance& s, hw::GpuProfile& p) {
  const std::string program = s.arguments.empty() ? s.program : s.program + " " + s.arguments;
  const std::string entry = s.file + ": " + program + " on " + s.gpu + ", " + s.date_utc + ", commit " + s.git_commit;
  if (std::find(p.fitted_from.begin(), p.fitted_from.end(), entry) == p.fitted_from.end()) p.fitted_from.push_back(entry);
}

template <typename Case, typename Get>
hw::ProfileRange range_of(const std::vector<Case>& cases, Get get) {
  hw::ProfileRange r{1e300, 0};
  for (const Case& c : cases) {
    r.lo = std::min(r.lo, get(c));
    r.hi = std::max(r.hi, get(c));
  }
  return r;
}

}  // namespace

double nvlink_latency_us(const hw::GpuSpec& gpu) { return gpu.nvlink_lat_ns * 1e-3; }

void check_kernel_clock_source(const Provenance& p, const hw::GpuSpec& gpu) {
  if (!memory_system_gpu(p, gpu))
    throw hw::UserError(p.file, 0, 0, "measured on '" + p.gpu + "': the share of a kernel's time that follows the SM clock "
                                          "is that of " + gpu.model + " or of a GPU of its chip and HBM bandwidth");
}

ProfileBuild build_profile(const MeasurementSet& set, const hw::GpuSpec& gpu, int holdout_every,
                           const ClockLogs& clocks) {
  if (set.gemms.empty()) throw hw::UserError("calibrate fit", 0, 0, "no FP8 GEMM cases among the inputs (cs_fp8_gemm's JSON)");
  std::vector<AllToAllCase> a2a;
  for (const AllToAllCase& c : set.all_to_alls)
    if (comm_fits_case(c)) a2a.push_back(c);
  if (a2a.empty()) throw hw::UserError("calibrate fit", 0, 0, "no all-to-all cases of our kernel among the inputs (cs_all_to_all's JSON)");
  const hw::GpuSpec* traffic_on = nullptr;  // where the GEMM traffic was measured
  for (const Provenance& p : set.sources) {
    if (chip_level_measurement(p)) {
      const hw::GpuSpec* on = traffic_gpu(p, gpu);
      if (!on)
        throw hw::UserError(p.file, 0, 0, "measured on '" + p.gpu + "', neither " + gpu.model +
                                              " nor a catalog GPU of its SM count and L2");
      if (p.program == "ncu_dram_bytes") traffic_on = on;
      continue;
    }
    if (p.program == "kernels/torch/kernel_clock.py") {
      check_kernel_clock_source(p, gpu);
      continue;
    }
    if (!measured_on(p, gpu.name)) throw hw::UserError(p.file, 0, 0, "measured on '" + p.gpu + "', not on " + gpu.model);
  }

  ProfileBuild b;
  const auto flip = [](std::vector<bool> held) {
    for (size_t i = 0; i < held.size(); ++i) held[i] = !held[i];
    return held;
  };
  const std::vector<bool> gemm_held = gemm_holdout(set.gemms, holdout_every);
  const std::vector<bool> comm_held = comm_holdout(a2a, holdout_every);
  b.gemm_held_out = static_cast<int>(std::count(gemm_held.begin(), gemm_held.end(), true));
  b.comm_held_out = static_cast<int>(std::count(comm_held.begin(), comm_held.end(), true));
  hw::GpuProfile& p = b.profile;
  // The clocks first: GEMM cases that carry their own sampled clock are fitted at it, relative to
  // the sweep's clock the profile's GEMM times are at.
  if (!clocks.sustained.empty() || !clocks.gemm_sweep.empty()) {
    if (clocks.sustained.empty() || clocks.gemm_sweep.empty())
      throw hw::UserError("calibrate fit", 0, 0, "the clocks section needs both clock logs (sustained load and the GEMM sweep)");
    double comm_max = 0;
    std::string comm_file;
    for (const Provenance& s : set.sources)
      if (s.program == "cs_all_to_all" && s.sm_clock_max_MHz > 0) {
        comm_max = s.sm_clock_max_MHz;
        comm_file = s.file + " (" + s.gpu + ", " + s.date_utc + ")";
      }
    if (comm_max <= 0) throw hw::UserError("calibrate fit", 0, 0, "no all-to-all measurement records its GPU's maximum SM clock");
    const auto loaded = [&](const std::string& file, double* MHz) { return loaded_clock_source(file, gpu, MHz); };
    double sus = 0, sweep = 0;
    const std::string sus_src = loaded(clocks.sustained, &sus), sweep_src = loaded(clocks.gemm_sweep, &sweep);
    p.clocks = hw::ClockModel{sweep, comm_max, sus};
    p.clock_params["gemm_fit_MHz"] = {sweep, "measured", sweep_src + " (the GEMM sweep run again, its pauses and L2 flushes included)"};
    p.clock_params["comm_fit_MHz"] = {comm_max, "measured",
                                      "the GPU's maximum SM clock in the provenance of " + comm_file +
                                          ": a copy kernel alone draws too little power to be clocked down"};
    p.clock_params["sustained_MHz"] = {sus, "measured", sus_src + " (GEMMs beside copies back to back, at the power limit)"};
  }
  b.gemm = fit_gemm(set.gemms, flip(gemm_held), gemm_start(gpu.fp8_dense_tflops, gpu.sms, gpu.hbm_bw_GBps),
                    p.clocks.present() ? p.clocks.gemm_fit_MHz : 0);
  b.comm = fit_comm(a2a, flip(comm_held), hw::CommModel{5, 20, 0.8 * gpu.nvlink_bw_GBps_per_direction},
                    nvlink_latency_us(gpu));

  p.gpu = gpu.name;
  p.gemm = b.gemm.model;
  p.comm = b.comm.model;
  char fitnote[256];
  std::snprintf(fitnote, sizeof fitnote, "fit of %d cases (%d held out), median error %.1f%%, worst %.1f%%",
                b.gemm.fit.cases, b.gemm_held_out, b.gemm.fit.median_error * 100, b.gemm.fit.worst_error * 100);
  const std::string gemm_src = std::string(fitnote) + ": " + sources_of(set, "cs_fp8_gemm");
  const auto g = p.gemm.to_array();
  const auto g0 = gemm_start(gpu.fp8_dense_tflops, gpu.sms, gpu.hbm_bw_GBps).to_array();
  for (int i = 0; i < hw::GemmModel::kParams; ++i) {
    // A parameter no measurement constrains is said to be so: its value changes no prediction
    // within the measured range, and may matter beyond it.
    if (b.gemm.constrained[i]) p.gemm_params[hw::GemmModel::param_name(i)] = {g[i], "measured", gemm_src};
    else
      p.gemm_params[hw::GemmModel::param_name(i)] = {
          g[i], "unconstrained",
          "no measured case depends on it (its regime binds in none): the value the fit left, from a start of " +
              fmt_double(g0[i]) +
              (i == hw::GemmModel::kOverlapExponent  ? " (a guess: no datasheet gives it); "
               : i == hw::GemmModel::kSplitKReduce ? " (a guess: the datasheet's HBM x 0.7 over the SMs); "
                                                   : " (datasheet); ") +
              gemm_src};
  }
  if (!set.bf16_gemms.empty()) {
    const std::vector<bool> held = gemm_holdout(set.bf16_gemms, holdout_every);
    b.gemm_bf16_held_out = static_cast<int>(std::count(held.begin(), held.end(), true));
    // Fitted against the FP8 model as it is on the GPU that ran the BF16 cases: another GPU of the
    // same chip has its own HBM (the one term that differs), scaled by the datasheets as a carry does.
    hw::GemmModel fp8_there = p.gemm;
    for (const Provenance& s : set.sources)
      if (s.program == "kernels/torch/bf16_gemm.py")
        if (const hw::GpuSpec* on = traffic_gpu(s, gpu)) fp8_there.hbm_GBps = p.gemm.hbm_GBps * on->hbm_bw_GBps / gpu.hbm_bw_GBps;
    b.gemm_bf16 = fit_gemm_bf16(set.bf16_gemms, flip(held), fp8_there, p.clocks.present() ? p.clocks.gemm_fit_MHz : 0);
    p.gemm_bf16 = b.gemm_bf16->model;
    std::snprintf(fitnote, sizeof fitnote,
                  "fit of %d BF16 cases (%d held out; the FP8 fit's launch, tile, HBM, split-K and overlap exponent kept), median "
                  "error %.1f%%, worst %.1f%%",
                  b.gemm_bf16->fit.cases, b.gemm_bf16_held_out, b.gemm_bf16->fit.median_error * 100,
                  b.gemm_bf16->fit.worst_error * 100);
    const std::string src = std::string(fitnote) + ": " + sources_of(set, "kernels/torch/bf16_gemm.py");
    p.gemm_bf16_params["sm_tflops"] = {p.gemm_bf16.sm_tflops, "measured", src};
    p.gemm_bf16_params["chip_tflops"] = {p.gemm_bf16.chip_tflops, "measured", src};
  }
  if (!set.fp8_scaling_gemms.empty()) {
    // A ratio of two kernels at one clock on the same chip: the fitted FP8 model as it stands.
    b.fp8_tiles = fit_tile_scaling(set.fp8_scaling_gemms, p.gemm);
    p.gemm_fp8_tiles = {b.fp8_tiles->mma_slowdown};
    const TileScalingFit& t = *b.fp8_tiles;
    const std::string tile_note = fmt::format(
        "median over {} shapes x SM counts measured under both scalings back to back ({} left out where the "
        "1x128 x 128x128 kernel was the slower, {} beyond a slowdown of {}, {} unpaired), each the MMA slowdown "
        "that gives its time ratio; the ratios predicted back: median error {:.1f}%, worst {:.1f}%",
        t.pairs, t.tiles_faster, t.beyond_max, kMaxTileSlowdown, t.unpaired, t.median_error * 100, t.worst_error * 100);
    p.gemm_fp8_tiles_params["mma_slowdown"] = {p.gemm_fp8_tiles.mma_slowdown, "measured",
                                               tile_note + ": " + sources_of(set, "kernels/torch/fp8_tile_scaling.py")};
  }
  std::snprintf(fitnote, sizeof fitnote, "fit of %d cases of our kernel (%d held out), median error %.1f%%, worst %.1f%%",
                b.comm.fit.cases, b.comm_held_out, b.comm.fit.median_error * 100, b.comm.fit.worst_error * 100);
  const std::string comm_src = std::string(fitnote) + ": " + sources_of(set, "cs_all_to_all");
  const double c[] = {p.comm.launch_us, p.comm.sm_copy_GBps, p.comm.nvlink_GBps};
  for (int i = 0; i < hw::CommModel::kParams; ++i) p.comm_params[hw::CommModel::param_name(i)] = {c[i], "measured", comm_src};
  p.gemm_range["sms"] = range_of(set.gemms, [](const GemmCase& x) { return double(x.sms); });
  p.gemm_range["m"] = range_of(set.gemms, [](const GemmCase& x) { return double(x.shape.m); });
  p.gemm_range["n"] = range_of(set.gemms, [](const GemmCase& x) { return double(x.shape.n); });
  p.gemm_range["k"] = range_of(set.gemms, [](const GemmCase& x) { return double(x.shape.k); });
  p.comm_range["ctas"] = range_of(a2a, [](const AllToAllCase& x) { return double(x.ctas); });
  p.comm_range["size_bytes"] = range_of(a2a, [](const AllToAllCase& x) { return x.size_bytes; });
  b.kernels = fit_kernel_sections(set, gpu, clocks.attention_fa2, p);
  if (const HbmCeiling h = fit_hbm_ceiling(set.overlaps, set.memory_bound); h.cases > 0) {
    const bool torch = h.what.rfind("PyTorch", 0) == 0;
    p.memory = hw::MemoryModel{h.GBps};
    p.memory_params["hbm_GBps"] = {
        h.GBps, "measured",
        "the most HBM traffic (read + written) of the " + std::to_string(h.cases) + " copies measured: " + h.what +
            " (a lower bound of what HBM carries): " +
            sources_of(set, torch ? "kernels/torch/memory_bound.py" : "cs_overlap")};
  }
  // After the HBM ceiling, which a form faster than it raises; a kernels section must hold them
  // (refused without one, not dropped).
  apply_measured_memory_forms(set, gpu, p);
  if (p.memory.present() && !set.overlaps.empty()) {
    // The bench's copies run at its sustained clock where the profile has one.
    const double copy = p.comm.sm_copy_GBps * (p.clocks.present() ? p.clocks.sustained_MHz / p.clocks.comm_fit_MHz : 1.0);
    if (const HbmSaturationFit h = fit_hbm_saturation(set.overlaps, p.memory.hbm_GBps, copy); h.cases > 0) {
      p.memory.saturation_exponent = h.exponent;
      p.memory_params["saturation_exponent"] = {
          h.exponent, "measured",
          fmt::format("fit of the times of {} local copies alone on {} to {} SMs (offering 2 x {:.1f} GB/s per SM to a "
                      "queue of hbm_GBps), median error {:.1f}%, worst {:.1f}%: ",
                      h.cases, h.min_ctas, h.max_ctas, copy, 100 * h.median_error, 100 * h.worst_error) +
              sources_of(set, "cs_overlap")};
    }
  }
  bool skew_fitted = false;
  if (p.memory.present() && traffic_on) {
    if (const GemmTrafficFit t = fit_gemm_traffic(set.gemm_traffic, *traffic_on); t.cases > 0) {
      p.memory.gemm_swizzle_n_blocks = t.swizzle_n_blocks;
      p.memory.l2_reuse_share = t.l2_reuse_share;
      const std::string where =
          traffic_on == &gpu ? traffic_on->model
                             : traffic_on->model + " (the catalog gives it " + gpu.name + "'s SM count and L2, " +
                                   fmt_double(gpu.l2_mb) + " MB)";
      const std::string reuse = t.reuse_cases > 0 ? fmt::format("median error {:.1f}% over the {} of more than one "
                                                                "row of tiles ({:.1f}% over all)",
                                                                100 * t.reuse_median_error, t.reuse_cases, 100 * t.median_error)
                                                  : fmt::format("median error {:.1f}%", 100 * t.median_error);
      const std::string src = fmt::format("least squares over raster bands of 1 to 64 n-tiles and L2 shares of 1/4 to 1 "
                                          "for the DRAM bytes read by {} FP8 GEMMs under Nsight Compute on {}: {}, "
                                          "worst {:.1f}% ({}): ",
                                          t.cases, where, reuse, 100 * t.worst_error, t.worst_case) +
                              sources_of(set, "ncu_dram_bytes");
      p.memory_params["gemm_swizzle_n_blocks"] = {static_cast<double>(t.swizzle_n_blocks), "measured", src};
      p.memory_params["l2_reuse_share"] = {t.l2_reuse_share, "measured", src};
      const L2WaveSkewFit w = fit_l2_wave_skew(set.overlap_traffic, gpu, t.swizzle_n_blocks, t.l2_reuse_share);
      skew_fitted = w.cases > 0;
      // No spread at all is the profile without the two parameters.
      if (w.cases > 0 && w.skew > 0) {
        p.memory.l2_wave_skew = w.skew;
        p.memory.l2_skew_max_tile_us = w.max_tile_us;
        p.memory_params["l2_wave_skew"] = {
            w.skew, "measured",
            fmt::format("least squares over 0 to 8 tile times for the DRAM bytes of {} GEMMs beside a copy over alone "
                        "under Nsight Compute, at the rates and tile times of that run, the raster and L2 share above: "
                        "median error {:.1f}%, worst {:.1f}% (L2 shares alone, no spread: median {:.1f}%): ",
                        w.cases, 100 * w.median_error, 100 * w.worst_error, 100 * w.error_without) +
                sources_of(set, "ncu_overlap_ranges")};
        p.memory_params["l2_skew_max_tile_us"] = {
            w.max_tile_us, "measured",
            "the longest tile among those cases (the GEMM's time alone over its waves, under the profiler): " +
                sources_of(set, "ncu_overlap_ranges")};
      }
    }
  }
  if (skew_fitted) {
    // On the memory model as fitted so far: the slowdown is what its HBM queue and GEMM traffic
    // leave unexplained.
    // None at all (the queue explains the copies) is the profile without the parameter.
    if (const CopySlowdownFit cf = fit_copy_slowdown_beside_gemms(set.overlap_traffic, p, gpu); cf.cases > 0 && cf.slowdown > 0) {
      p.memory.copy_slowdown_beside_gemms = cf.slowdown;
      p.memory_params["copy_slowdown_beside_gemms"] = {
          cf.slowdown, "measured",
          fmt::format("median over {} copies beside GEMMs under Nsight Compute (clocks locked to base: contention "
                      "alone) of the slowdown whose simulated time together over alone, the HBM queue and GEMM "
                      "traffic above included, matches the measured: their ratios then within {:.1f}% median, "
                      "{:.1f}% worst ({:.1f}% median without it): ",
                      cf.cases, 100 * cf.median_error, 100 * cf.worst_error, 100 * cf.error_without) +
              sources_of(set, "ncu_overlap_ranges")};
    }
  }
  // Overlap DRAM bytes refine the GEMM traffic model: without it they would fit nothing, silently.
  if (!set.overlap_traffic.empty() && !skew_fitted)
    throw hw::UserError(set.sources[set.overlap_traffic.front().source].file, 0, 0,
                        "the overlap bench's DRAM bytes fit a wave's phase spread only beside the GEMM traffic model's "
                        "bytes (ncu_dram_bytes JSON) and the HBM section (cs_overlap JSON)");
  if (!set.power.empty()) {
    if (set.power.size() > 1) throw hw::UserError(set.power[1].file, 0, 0, "a second power response: give one");
    if (!p.clocks.present())
      throw hw::UserError(set.power[0].file, 0, 0, "the power section needs the clocks section (--sustained-clock-log, --gemm-clock-log)");
    PowerResponse r = set.power[0];
    use_gemm_traffic(r, p, gpu);
    b.power = fit_power(r);
    p.power = b.power->model;
    const std::string src = r.file + " (" + r.gpu + ", " + r.date_utc + ")";
    const PowerFit& f = *b.power;
    const auto param = [&](const char* name, double v, const std::string& how) {
      p.power_params[name] = {v, "measured", how + ": " + src};
    };
    param("limit_W", p.power.limit_W, "the enforced power limit nvidia-smi reported");
    param("static_W", p.power.static_W, "the median power over the idle phase");
    param("max_MHz", p.power.max_MHz, "the maximum SM clock nvidia-smi reported");
    param("clock_step_MHz", p.power.clock_step_MHz, "the greatest common divisor of the SM clocks NVML reported");
    const std::string ls = "least squares of ln((P - static_W - the GEMM's HBM bytes (the traffic model's) x hbm_pJ_per_byte) / FLOP rate) on "
                           "ln(clock) over the BF16 phases on 32 to 132 SMs "
                           "(second halves), worst power error of any phase " + fmt::format("{:.1f}%", 100 * f.worst_power_error);
    param("voltage_exponent", p.power.voltage_exponent, ls);
    param("bf16_pJ_per_flop", p.power.bf16_pJ_per_flop, ls);
    param("fp8_pJ_per_flop", p.power.fp8_pJ_per_flop,
          "the FP8 phase's (P - static_W - its HBM bytes (the traffic model's) x hbm_pJ_per_byte) / FLOP rate at its clock, at the voltage exponent");
    param("hbm_pJ_per_byte", p.power.hbm_pJ_per_byte, "the copy phase's (P - static_W) / bytes read and written per second");
    param("clock_stretch", p.power.clock_stretch,
          "the median over the clocked-down GEMM phases of (steady call time / first calls' - 1) / (max_MHz / clock - 1)");
    param("window_ms", p.power.window_ms,
          "grid search (1 ms steps, 4 to 200 ms) of the least squares of every GEMM call's relative time error over the first "
          "second of each GEMM phase, the 10/50/200 ms duty cycles included, clock simulated as the executor does: rms " +
              fmt::format("{:.1f}%", 100 * f.rms_onset_error));
  }
  if (!set.kernel_clock.empty()) b.kernel_clock = apply_kernel_clock(set, p);
  for (const Provenance& s : set.sources) name_source(s, p);
  p.note = "Fitted by `clustersim calibrate fit` on " + gpu.model + " measurements; GEMM and all-to-all "
           "parameters by Levenberg-Marquardt on log time (hw/gemm_model.h, calibrate/comm_fit.h).";
  return b;
}

KernelClockFit apply_kernel_clock(const MeasurementSet& set, hw::GpuProfile& p) {
  if (!p.power.present())
    throw hw::UserError(set.sources[set.kernel_clock.front().source].file, 0, 0,
                        "the kernel clock section needs the power section (a power response JSON)");
  // Shares of a kernel's own time at two clocks of the same run: the chip's and its HBM's.
  KernelClockFit f = fit_kernel_clock(set.kernel_clock, p.kernels, p.power.max_MHz);
  p.kernel_clock = f.model;
  // The files it came from replace those of the section it replaces (a carried profile's).
  std::erase_if(p.fitted_from, [](const std::string& e) { return e.find(": kernels/torch/kernel_clock.py on ") != std::string::npos; });
  for (const Provenance& s : set.sources)
    if (s.program == "kernels/torch/kernel_clock.py") name_source(s, p);
  const std::string src = sources_of(set, "kernels/torch/kernel_clock.py");
  const std::string back = fmt::format("; every case's time ratio back from its kind's share: median error {:.1f}%, worst {:.1f}%",
                                       100 * f.median_error, 100 * f.worst_error);
  p.kernel_clock_params["memory_fit_MHz"] = {
      p.kernel_clock.memory_fit_MHz, "measured",
      "the median SM clock (the kernels' own clock64 probes) of the kernels timed right after HBM copies, under light load "
      "as the memory-bound benches ran: " + src};
  std::string refs;
  for (auto* v : {&f.attention_fwd, &f.attention_bwd})
    for (const KernelClockShare& c : *v)
      if (c.reference_MHz > 0)
        refs += fmt::format("{}{} {:.0f}{}", refs.empty() ? "" : ", ", c.name, c.reference_MHz,
                            c.above_max ? " (above the maximum clock: left out)" : "");
  p.kernel_clock_params["attention_fit_MHz"] = {
      p.kernel_clock.attention_fit_MHz, "measured",
      p.kernels.present() ? "the median over the attention cases timed right after copies of the clock at which the kernels section's "
                            "attention model gives their time at their share (" + refs + " MHz): " + src
                          : "no attention model to compare: memory_fit_MHz: " + src};
  const auto share = [&](const std::string& name, double v, const std::vector<KernelClockShare>& cases, double ref_MHz) {
    std::string of;
    for (const KernelClockShare& c : cases) of += fmt::format("{}{} x{:.3f}", of.empty() ? "" : ", ", c.name, c.ratio);
    p.kernel_clock_params[name] = {
        v, "measured",
        fmt::format("timed right after BF16 GEMMs (t_low at f_low) and right after copies (t_high at f_high): {}; the median over "
                    "them of (t_low / t_high - 1) / (f_high / f_low - 1), as a share of the time at {:.0f} MHz (t = A + B / f){}: {}",
                    of, ref_MHz, back, src)};
  };
  share("attention_fwd", p.kernel_clock.attention_fwd, f.attention_fwd, p.kernel_clock.attention_fit_MHz);
  share("attention_bwd", p.kernel_clock.attention_bwd, f.attention_bwd, p.kernel_clock.attention_fit_MHz);
  for (int i = 0; i < sim::kMemoryForms; ++i)
    if (!f.forms[i].empty())
      share(sim::memory_form_name(static_cast<sim::MemoryForm>(i)), p.kernel_clock.form[i], f.forms[i], p.kernel_clock.memory_fit_MHz);
  return f;
}

void apply_measured_memory_forms(const MeasurementSet& set, const hw::GpuSpec& gpu, hw::GpuProfile& p) {
  if (set.memory_forms.empty() && set.launch_gaps_us.empty()) return;
  // A form's rate is set by the SMs and the HBM together: its own GPU's, or that of one of the
  // same chip and HBM bandwidth (the H100's for the H800).
  std::string other;  // the other GPU measured on, if any
  for (const Provenance& src : set.sources) {
    if (src.program != "kernels/torch/memory_bound_forms.py") continue;
    const hw::GpuSpec* on = memory_system_gpu(src, gpu);
    if (!on)
      throw hw::UserError(src.file, 0, 0, "measured on '" + src.gpu + "', but the profile is for " + gpu.model +
                                              ": a kernel form's rate is that of its own GPU or of a GPU of its chip "
                                              "and HBM bandwidth");
    if (on != &gpu) other = on->model;
  }
  if (!p.kernels.present())
    throw hw::UserError("calibrate", 0, 0, "memory-bound forms need a profile with a kernels section (attention and "
                                           "kernels/torch/memory_bound.py measurements) to add them to");
  const MemoryFormFit f = fit_memory_forms(set);
  const std::string sources = sources_of(set, "kernels/torch/memory_bound_forms.py") +
                              (other.empty() ? "" : "; " + other + " has the chip and HBM bandwidth of " + gpu.model);
  apply_memory_forms(f, sources, p);
  for (const Provenance& s : set.sources)
    if (s.program == "kernels/torch/memory_bound_forms.py") name_source(s, p);
  // HBM carries at least what a kernel was measured moving through it: a carried or older
  // ceiling below that would hold the kernel under its own measured rate.
  if (!p.memory.present()) return;
  int top = 0;
  for (int i = 1; i < sim::kMemoryForms; ++i)
    if (f.GBps[i] > f.GBps[top]) top = i;
  if (top == 0 || f.GBps[top] <= p.memory.hbm_GBps) return;
  p.memory.hbm_GBps = f.GBps[top];
  p.memory_params["hbm_GBps"] = {
      f.GBps[top], "measured",
      std::string("the most HBM traffic (read + written) measured on this GPU's memory system, the pipeline bench's ") +
          sim::memory_form_name(static_cast<sim::MemoryForm>(top)) + " kernels by their device time: " + sources};
}

std::string profile_yaml(const hw::GpuProfile& p) {
  std::ostringstream o;
  o << "# Calibrated profile of " << p.gpu << ". Written by clustersim calibrate; every parameter says\n"
    << "# where it came from (measured, carried, published or datasheet).\n";
  o << "schema_version: 1\n";
  o << "gpu: " << p.gpu << "\n";
  o << "note: " << quote(p.note) << "\n";
  o << "fitted_from:\n";
  for (const std::string& f : p.fitted_from) o << "  - " << quote(f) << "\n";
  const auto section = [&](const char* name, const std::map<std::string, hw::ProfileParam>& params,
                           const char* (*param_name)(int), int count) {
    o << name << ":\n";
    for (int i = 0; i < count; ++i) {
      const auto it = params.find(param_name(i));
      if (it == params.end()) continue;  // an optional parameter the profile lacks
      const hw::ProfileParam& q = it->second;
      o << "  " << param_name(i) << ": {value: " << fmt_double(q.value) << ", origin: " << q.origin
        << ", source: " << quote(q.source) << "}\n";
    }
  };
  const auto ranges = [&](const char* name, const std::map<std::string, hw::ProfileRange>& r) {
    o << name << ":\n";
    for (const auto& [k, v] : r) o << "  " << k << ": [" << fmt_double(v.lo) << ", " << fmt_double(v.hi) << "]\n";
  };
  section("gemm", p.gemm_params, &hw::GemmModel::param_name, hw::GemmModel::kParams);
  if (p.gemm.tiling == hw::GemmTiling::kDeepGemm)
    o << "gemm_tiles: {kernel: deepgemm, source: " << quote(p.gemm_tiles_source) << "}\n";
  if (p.gemm_bf16.present())
    section("gemm_bf16", p.gemm_bf16_params, &hw::GemmBf16Model::param_name, hw::GemmBf16Model::kParams);
  if (p.gemm_fp8_tiles.present())
    section("gemm_fp8_tiles", p.gemm_fp8_tiles_params, &hw::GemmFp8TilesModel::param_name, hw::GemmFp8TilesModel::kParams);
  ranges("gemm_range", p.gemm_range);
  section("comm", p.comm_params, &hw::CommModel::param_name, hw::CommModel::kParams);
  ranges("comm_range", p.comm_range);
  if (p.deepep.present()) section("deepep", p.deepep_params, &hw::DeepEpModel::param_name, hw::DeepEpModel::kParams);
  if (p.kernels.present()) section("kernels", p.kernel_params, &hw::KernelModel::param_name, hw::KernelModel::kParams);
  if (p.attention_fa2.present())
    section("attention_fa2", p.attention_fa2_params, &hw::AttentionFa2Model::param_name,
            hw::AttentionFa2Model::kParams);
  if (p.clocks.present()) section("clocks", p.clock_params, &hw::ClockModel::param_name, hw::ClockModel::kParams);
  if (p.memory.present()) section("memory", p.memory_params, &hw::MemoryModel::param_name, hw::MemoryModel::kParams);
  if (p.power.present()) section("power", p.power_params, &hw::PowerModel::param_name, hw::PowerModel::kParams);
  if (p.kernel_clock.present())
    section("kernel_clock", p.kernel_clock_params, &hw::KernelClockModel::param_name, hw::KernelClockModel::kParams);
  return o.str();
}

}  // namespace cs::calibrate
