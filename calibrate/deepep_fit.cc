#include "calibrate/deepep_fit.h"

#include <fmt/format.h>

#include <cmath>

#include "hw/gpu_catalog.h"
#include "models/moe_routing.h"

namespace cs::calibrate {

namespace {

// DeepEP's high-throughput kernels run on 20 SMs by default, two per channel.
constexpr int kDeepEpChannels = models::kDeepEpDefaultSms / 2;

hw::GpuProfile with_pace(hw::GpuProfile p, double channel_GBps) {
  p.deepep.internode_channel_GBps = channel_GBps;
  return p;
}

// The pace per channel at which the profile predicts row `r` as published: the predicted figure
// rises with the pace, so a bisection on its logarithm finds it.
double pace_for(const hw::GpuProfile& p, const DeepEpInternodeRow& r) {
  double lo = 1e-3, hi = 1e3;  // GB/s per channel; 1e3 x 10 channels leaves the links alone binding
  const double unpaced = deepep_internode_check(with_pace(p, hi), r).predicted;
  if (unpaced < r.GBps)
    throw hw::UserError(p.file, 0, 0,
                        fmt::format("DeepEP's EP{} {} row ({} GB/s) is faster than the profile's links carry "
                                    "unpaced ({:.1f} GB/s): no kernel pace reproduces it",
                                    r.ep, r.dispatch ? "dispatch" : "combine", r.GBps, unpaced));
  for (int i = 0; i < 48; ++i) {
    const double mid = std::sqrt(lo * hi);
    (deepep_internode_check(with_pace(p, mid), r).predicted < r.GBps ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

}  // namespace

DeepEpFit fit_deepep(const hw::GpuProfile& p, int ep_fitted, std::span<const DeepEpInternodeRow> rows) {
  const hw::GpuSpec* gpu = hw::find_gpu(p.gpu);
  if (!gpu || gpu->name != "h800")
    throw hw::UserError(p.file, 0, 0,
                        "DeepEP's table is of the H800; this profile is for '" + p.gpu +
                            "' (clustersim calibrate carry PROFILE --to h800 -o h800.yaml)");
  hw::GpuProfile unpaced = p;
  unpaced.deepep = {};
  double log_sum = 0;
  int n = 0;
  for (const DeepEpInternodeRow& r : rows)
    if (r.ep == ep_fitted) log_sum += std::log(pace_for(unpaced, r)), ++n;
  if (n == 0)
    throw hw::UserError(p.file, 0, 0, fmt::format("DeepEP's internode table has no EP{} row to fit on", ep_fitted));
  DeepEpFit fit;
  fit.profile = with_pace(unpaced, std::exp(log_sum / n));
  for (const DeepEpInternodeRow& r : rows)
    (r.ep == ep_fitted ? fit.fitted : fit.held_out).push_back(deepep_internode_check(fit.profile, r));
  const FitStats f = published_stats(fit.fitted);
  std::string held = "none held out";
  if (!fit.held_out.empty()) {
    const FitStats h = published_stats(fit.held_out);
    held = fmt::format("its {} other rows held out, median error {:.1f}%, worst {:.1f}%", fit.held_out.size(),
                       h.median_error * 100, h.worst_error * 100);
  }
  const std::string source = fmt::format(
      "fit of DeepEP's published H800 internode table (repo deepseek-ai/DeepEP, README of 2025-02-24: "
      "4096 tokens of hidden 7168, top-8 of 256 experts, {} SMs in {} channels, its kernels alone): "
      "its {} EP{} rows ({} nodes; dispatch FP8, combine BF16), median error {:.1f}%, worst {:.1f}%; {}",
      2 * kDeepEpChannels, kDeepEpChannels, fit.fitted.size(), ep_fitted, ep_fitted / 8, f.median_error * 100,
      f.worst_error * 100, held);
  fit.profile.deepep_params["internode_channel_GBps"] = {fit.profile.deepep.internode_channel_GBps, "published",
                                                         source};
  const std::string note =
      " DeepEP's internode kernels paced by their published H800 table (`clustersim calibrate deepep`).";
  if (fit.profile.note.find(note) == std::string::npos) fit.profile.note += note;
  // fitted_from lists measurement files, which a report re-checks the profile on; the table is named
  // in the parameter's source.
  return fit;
}

}  // namespace cs::calibrate
