#include "calibrate/kernel_fit.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "hw/user_error.h"
#include "models/layer_ops.h"

namespace cs::calibrate {

bool fitted_case(const AttentionCase& c) { return c.backend == "default"; }
bool fitted_case(const MemoryBoundCase& c) { return c.variant == "compiled"; }

double attention_case_flops(const AttentionCase& c) {
  return models::attention_flops(static_cast<double>(c.batch), c.heads, c.seq, c.d_qk, c.d_v, true, c.backward);
}

namespace {

double flops(const AttentionCase& c) { return attention_case_flops(c); }

bool fitted_attention(const AttentionCase& c, bool backward) { return fitted_case(c) && c.backward == backward; }

bool fitted_memory(const MemoryBoundCase& c) { return fitted_case(c); }

// time = a + b x by least squares on relative errors (weights 1 / y^2), so that short calls count
// as much as long ones; returns {a, b}.
std::pair<double, double> line_fit(const std::vector<double>& x, const std::vector<double>& y) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double w = 1 / (y[i] * y[i]);
    sw += w, sx += w * x[i], sy += w * y[i], sxx += w * x[i] * x[i], sxy += w * x[i] * y[i];
  }
  const double b = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  return {(sy - b * sx) / sw, b};
}

}  // namespace

double kernel_model_us(const hw::KernelModel& k, const AttentionCase& c) {
  return c.backward ? k.attn_bwd_us + flops(c) / (k.attn_bwd_tflops * 1e6)
                    : k.attn_fwd_us + flops(c) / (k.attn_fwd_tflops * 1e6);
}

double kernel_model_us(const hw::KernelModel& k, const MemoryBoundCase& c) { return c.bytes / (k.elementwise_GBps * 1e3); }

KernelFit fit_kernels(const MeasurementSet& set) {
  KernelFit f;
  for (bool backward : {false, true}) {
    std::vector<double> x, y;
    for (const AttentionCase& c : set.attentions)
      if (fitted_attention(c, backward)) x.push_back(flops(c)), y.push_back(c.time_us);
    if (x.size() < 2)
      throw hw::UserError("calibrate fit", 0, 0, "too few attention calls to fit (kernels/torch/attention_bench.py's JSON)");
    for (double t : y)
      if (!(t > 0)) throw hw::UserError("calibrate fit", 0, 0, "an attention call with no positive time: not a measurement");
    const auto [a, b] = line_fit(x, y);
    if (!(b > 0) || !std::isfinite(a) || !std::isfinite(b))
      throw hw::UserError("calibrate fit", 0, 0, std::string("the attention ") + (backward ? "backward" : "forward") +
                                                 " calls do not grow with their FLOPs: no rate can be fitted");
    (backward ? f.model.attn_bwd_us : f.model.attn_fwd_us) = std::max(0.0, a);
    (backward ? f.model.attn_bwd_tflops : f.model.attn_fwd_tflops) = 1e-6 / b;
    (backward ? f.attn_bwd_cases : f.attn_fwd_cases) = static_cast<int>(x.size());
  }
  std::vector<double> rates;
  for (const MemoryBoundCase& c : set.memory_bound)
    if (fitted_memory(c) && c.time_us > 0 && c.bytes > 0) rates.push_back(c.bytes / c.time_us * 1e-3);
  if (rates.empty())
    throw hw::UserError("calibrate fit", 0, 0, "no fused memory-bound kernels to fit (kernels/torch/memory_bound.py's JSON)");
  f.model.elementwise_GBps = median(rates);
  f.elementwise_cases = static_cast<int>(rates.size());

  std::vector<double> pf, mf, pb, mb, pe, me;
  for (const AttentionCase& c : set.attentions) {
    if (fitted_attention(c, false)) pf.push_back(kernel_model_us(f.model, c)), mf.push_back(c.time_us);
    if (fitted_attention(c, true)) pb.push_back(kernel_model_us(f.model, c)), mb.push_back(c.time_us);
  }
  for (const MemoryBoundCase& c : set.memory_bound)
    if (fitted_memory(c)) pe.push_back(kernel_model_us(f.model, c)), me.push_back(c.time_us);
  f.attn_fwd = fit_stats(pf, mf);
  f.attn_bwd = fit_stats(pb, mb);
  f.elementwise = fit_stats(pe, me);
  return f;
}

}  // namespace cs::calibrate
