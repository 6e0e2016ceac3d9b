#include "calibrate/memory_fit.h"

#include <algorithm>
#include <cmath>

#include "calibrate/fit_stats.h"
#include "hw/gemm_model.h"
#include "hw/gemm_traffic.h"

namespace cs::calibrate {

double saturated_copy_us(double bytes, int ctas, double copy_GBps_per_sm, double hbm_GBps, double exponent) {
  const double offered = 2 * ctas * copy_GBps_per_sm;  // reads and writes
  const double carried = offered * std::pow(1 + std::pow(offered / hbm_GBps, exponent), -1 / exponent);
  return 2 * bytes / (carried * 1e3);
}

HbmSaturationFit fit_hbm_saturation(const std::vector<OverlapCase>& overlaps, double hbm_GBps, double copy_GBps_per_sm) {
  std::vector<const OverlapCase*> copies;
  for (const OverlapCase& c : overlaps)
    if (c.local_copy_only && c.ctas > 0 && c.a2a_alone_us > 0) copies.push_back(&c);
  HbmSaturationFit f;
  f.cases = static_cast<int>(copies.size());
  if (copies.empty() || hbm_GBps <= 0 || copy_GBps_per_sm <= 0) return f;
  f.min_ctas = f.max_ctas = copies.front()->ctas;
  for (const OverlapCase* c : copies) f.min_ctas = std::min(f.min_ctas, c->ctas), f.max_ctas = std::max(f.max_ctas, c->ctas);
  const auto sse = [&](double p) {
    double s = 0;
    for (const OverlapCase* c : copies) {
      const double e = std::log(saturated_copy_us(c->a2a_bytes, c->ctas, copy_GBps_per_sm, hbm_GBps, p) / c->a2a_alone_us);
      s += e * e;
    }
    return s;
  };
  // Golden section on log p: the error is smooth and single-valleyed in p over this range.
  double lo = std::log(0.5), hi = std::log(64.0);
  const double r = (std::sqrt(5.0) - 1) / 2;
  double a = hi - r * (hi - lo), b = lo + r * (hi - lo);
  double fa = sse(std::exp(a)), fb = sse(std::exp(b));
  for (int i = 0; i < 80; ++i) {
    if (fa < fb) hi = b, b = a, fb = fa, a = hi - r * (hi - lo), fa = sse(std::exp(a));
    else lo = a, a = b, fa = fb, b = lo + r * (hi - lo), fb = sse(std::exp(b));
  }
  f.exponent = std::exp((lo + hi) / 2);
  std::vector<double> predicted, measured;
  for (const OverlapCase* c : copies) {
    predicted.push_back(saturated_copy_us(c->a2a_bytes, c->ctas, copy_GBps_per_sm, hbm_GBps, f.exponent));
    measured.push_back(c->a2a_alone_us);
  }
  const FitStats st = fit_stats(predicted, measured);
  f.median_error = st.median_error;
  f.worst_error = st.worst_error;
  return f;
}

const hw::GpuSpec* traffic_gpu(const Provenance& p, const hw::GpuSpec& gpu) {
  if (measured_on(p, gpu.name)) return &gpu;
  const hw::GpuSpec* other = nullptr;  // the longest catalog name it matches ("h100" before "h10")
  for (const hw::GpuSpec& g : hw::gpu_catalog())
    if (measured_on(p, g.name) && (!other || g.name.size() > other->name.size())) other = &g;
  return other && other->sms == gpu.sms && other->l2_mb == gpu.l2_mb ? other : nullptr;
}

bool chip_level_measurement(const Provenance& p) {
  return p.program == "ncu_dram_bytes" || p.program == "kernels/torch/bf16_gemm.py" ||
         p.program == "kernels/torch/power_response.py" || p.program == "kernels/torch/fp8_tile_scaling.py";
}

const hw::GpuSpec* memory_system_gpu(const Provenance& p, const hw::GpuSpec& gpu) {
  const hw::GpuSpec* on = traffic_gpu(p, gpu);
  return on && on->fp8_dense_tflops == gpu.fp8_dense_tflops && on->hbm_bw_GBps == gpu.hbm_bw_GBps ? on : nullptr;
}

double predicted_read_bytes(const GemmTrafficCase& c, const hw::GpuSpec& gpu, int swizzle_n_blocks, double l2_reuse_share) {
  sim::GemmShape one = c.shape;
  one.groups = 1;
  const hw::GemmTrafficParams p{swizzle_n_blocks, l2_reuse_share * gpu.l2_mb * 1024 * 1024};
  const double out = one.dtype == sim::DType::kFp32 ? 4.0 : 2.0;
  const double written = static_cast<double>(one.m) * one.n * out;
  // The grouped kernel runs the groups back to back: one group's traffic, with a cold L2.
  return hw::gemm_dram_bytes(one, c.sms, p) - written;
}

GemmTrafficFit fit_gemm_traffic(const std::vector<GemmTrafficCase>& cases, const hw::GpuSpec& gpu) {
  GemmTrafficFit best;
  double best_sse = 0;
  if (cases.empty()) return best;
  for (int band = 1; band <= 64; band *= 2)
    for (double share : {0.25, 0.5, 0.75, 1.0}) {
      std::vector<double> predicted, measured, reuse_predicted, reuse_measured;
      double worst = -1, sse = 0;
      std::string worst_case;
      for (const GemmTrafficCase& c : cases) {
        const double bytes = predicted_read_bytes(c, gpu, band, share);
        predicted.push_back(bytes);
        measured.push_back(c.read_bytes);
        // One row of tiles reads A once whatever the raster: the other cases tell rasters apart.
        if (c.shape.m > hw::kGemmTileM) reuse_predicted.push_back(bytes), reuse_measured.push_back(c.read_bytes);
        const double log_error = std::log(bytes / c.read_bytes), e = std::abs(bytes / c.read_bytes - 1);
        sse += log_error * log_error;
        if (e > worst) {
          worst = e;
          worst_case = c.name + " " + std::to_string(c.shape.m) + " x " + std::to_string(c.shape.n) + " x " +
                       std::to_string(c.shape.k) + (c.shape.groups > 1 ? " (" + std::to_string(c.shape.groups) + " groups)" : "");
        }
      }
      // Least squares on log bytes, as the other fits; ties keep the smaller band and share.
      if (best.cases == 0 || sse < best_sse - 1e-12) {
        best_sse = sse;
        const FitStats all = fit_stats(predicted, measured), reuse = fit_stats(reuse_predicted, reuse_measured);
        best = {band, share, all.cases, all.median_error, all.worst_error, worst_case, reuse.cases, reuse.median_error};
      }
    }
  return best;
}

namespace {
// A tile's time: the GEMM's alone over its waves (of cuBLASLt's tiles, the bench's) on the SMs it had.
double tile_us(const OverlapTrafficCase& c) {
  return c.gemm_alone_us /
         std::ceil(static_cast<double>(hw::gemm_model_tiles(hw::GemmModel{}, c.gemm, c.compute_sms)) / c.compute_sms);
}
}  // namespace

double predicted_together_ratio(const OverlapTrafficCase& c, const hw::GpuSpec& gpu, int swizzle_n_blocks,
                                double l2_reuse_share, double skew) {
  const hw::GemmTrafficParams cache{swizzle_n_blocks, l2_reuse_share * gpu.l2_mb * 1024 * 1024};
  const double own = c.gemm_alone_bytes / c.gemm_alone_us, total = own + c.copy_bytes / c.copy_together_us;
  hw::GemmTrafficParams alone = cache, beside = cache;
  beside.l2_bytes *= own / total;
  if (skew > 0) {
    alone.residency_over_skew = cache.l2_bytes / own / (skew * tile_us(c));
    beside.residency_over_skew = cache.l2_bytes / total / (skew * tile_us(c));
  }
  return hw::gemm_dram_bytes(c.gemm, c.compute_sms, beside) / hw::gemm_dram_bytes(c.gemm, c.compute_sms, alone);
}

L2WaveSkewFit fit_l2_wave_skew(const std::vector<OverlapTrafficCase>& cases, const hw::GpuSpec& gpu,
                               int swizzle_n_blocks, double l2_reuse_share) {
  L2WaveSkewFit best;
  if (cases.empty()) return best;
  double max_tile_us = 0;
  for (const OverlapTrafficCase& c : cases) max_tile_us = std::max(max_tile_us, tile_us(c));
  const auto errors = [&](double skew, double* sse) {
    std::vector<double> predicted, measured;
    *sse = 0;
    for (const OverlapTrafficCase& c : cases) {
      predicted.push_back(predicted_together_ratio(c, gpu, swizzle_n_blocks, l2_reuse_share, skew));
      measured.push_back(c.gemm_together_bytes / c.gemm_alone_bytes);
      const double e = std::log(predicted.back() / measured.back());
      *sse += e * e;
    }
    return fit_stats(predicted, measured);
  };
  double best_sse = 0;
  for (int step = 0; step <= 800; ++step) {
    double sse = 0;
    const FitStats f = errors(step / 100.0, &sse);
    if (step == 0) best.error_without = f.median_error;
    // Ties keep the smaller spread.
    if (step == 0 || sse < best_sse - 1e-12) {
      best_sse = sse;
      best = {step / 100.0, f.cases, f.median_error, f.worst_error, best.error_without, max_tile_us};
    }
  }
  return best;
}

}  // namespace cs::calibrate
