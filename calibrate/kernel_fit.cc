#include "calibrate/kernel_fit.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "hw/user_error.h"
#include "models/layer_ops.h"

namespace cs::calibrate {

bool fitted_case(const AttentionCase& c) { return c.backend == "default" && c.d_v_run == c.d_v; }
bool fa2_case(const AttentionCase& c) { return c.backend == "flash"; }
bool fitted_case(const MemoryBoundCase& c) { return c.variant == "compiled"; }

double attention_case_flops(const AttentionCase& c) {
  return models::attention_flops(static_cast<double>(c.batch), c.heads, c.seq, c.d_qk, c.d_v, true, c.backward);
}

double attention_case_flops_as_run(const AttentionCase& c) {
  return models::attention_flops(static_cast<double>(c.batch), c.heads, c.seq, c.d_qk, c.d_v_run, true, c.backward);
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

// One pass's a + FLOPs / rate over the calls `use` takes, FLOPs by `flops_of`: {us, TFLOPS, calls}.
// UserError (naming `what`) for too few calls, a time not above 0, or no positive rate.
struct PassFit {
  double us = 0, tflops = 0;
  int cases = 0;
};
template <class Use, class Flops>
PassFit fit_pass(const std::vector<AttentionCase>& cases, bool backward, Use use, Flops flops_of,
                 const std::string& what) {
  std::vector<double> x, y;
  for (const AttentionCase& c : cases)
    if (use(c) && c.backward == backward) x.push_back(flops_of(c)), y.push_back(c.time_us);
  if (x.size() < 2)
    throw hw::UserError("calibrate fit", 0, 0,
                        "too few " + what + " calls to fit (kernels/torch/attention_bench.py's JSON)");
  for (double t : y)
    if (!(t > 0))
      throw hw::UserError("calibrate fit", 0, 0, "an attention call with no positive time: not a measurement");
  const auto [a, b] = line_fit(x, y);
  if (!(b > 0) || !std::isfinite(a) || !std::isfinite(b))
    throw hw::UserError("calibrate fit", 0, 0,
                        "the " + what + (backward ? " backward" : " forward") +
                            " calls do not grow with their FLOPs: no rate can be fitted");
  return {std::max(0.0, a), 1e-6 / b, static_cast<int>(x.size())};
}

}  // namespace

double kernel_model_us(const hw::KernelModel& k, const AttentionCase& c) {
  return c.backward ? k.attn_bwd_us + flops(c) / (k.attn_bwd_tflops * 1e6)
                    : k.attn_fwd_us + flops(c) / (k.attn_fwd_tflops * 1e6);
}

int fa2_head_dim(const AttentionCase& c) {
  return hw::AttentionFa2Model::run_head_dim(static_cast<int>(c.d_qk), static_cast<int>(c.d_v_run));
}

double kernel_model_us(const hw::AttentionFa2Model& k, const AttentionCase& c) {
  const hw::AttentionFa2Model::Rates& r = k.rates_for(fa2_head_dim(c));
  const double f = attention_case_flops_as_run(c);
  return c.backward ? r.bwd_us + f / (r.bwd_tflops * 1e6) : r.fwd_us + f / (r.fwd_tflops * 1e6);
}

double kernel_model_us(const hw::KernelModel& k, const MemoryBoundCase& c) { return c.bytes / (k.elementwise_GBps * 1e3); }

KernelFit fit_kernels(const MeasurementSet& set) {
  KernelFit f;
  const auto sdpa = [](const AttentionCase& c) { return fitted_case(c); };
  for (bool backward : {false, true}) {
    const PassFit p = fit_pass(set.attentions, backward, sdpa, flops, "attention");
    (backward ? f.model.attn_bwd_us : f.model.attn_fwd_us) = p.us;
    (backward ? f.model.attn_bwd_tflops : f.model.attn_fwd_tflops) = p.tflops;
    (backward ? f.attn_bwd_cases : f.attn_fwd_cases) = p.cases;
  }
  // FlashAttention-2 where its calls were timed, a fit per kernel (head dim): its kernels differ in
  // tiles, so one rate across them errs by the head dim. Optional: a kernel with too few calls is
  // left out.
  using Fa2 = hw::AttentionFa2Model;
  for (int k = 0; k < static_cast<int>(Fa2::kHeadDims.size()); ++k) {
    const auto of_kernel = [k](const AttentionCase& c) { return fa2_case(c) && Fa2::kernel_of(fa2_head_dim(c)) == k; };
    const auto calls = [&](bool backward) {
      return std::count_if(set.attentions.begin(), set.attentions.end(),
                           [&](const AttentionCase& c) { return of_kernel(c) && c.backward == backward; });
    };
    if (calls(false) < 2 || calls(true) < 2) continue;
    const std::string what = "FlashAttention-2 d" + std::to_string(Fa2::kHeadDims[k]);
    const PassFit fw = fit_pass(set.attentions, false, of_kernel, attention_case_flops_as_run, what);
    const PassFit bw = fit_pass(set.attentions, true, of_kernel, attention_case_flops_as_run, what);
    f.fa2.kernels[k] = {fw.us, fw.tflops, bw.us, bw.tflops};
    f.fa2_kernels.push_back({Fa2::kHeadDims[k], fw.cases, bw.cases, {}, {}});
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
  if (f.fa2.present()) {
    // Every flash call, and each fitted kernel's own, by the kernel that times it.
    const auto stats_of = [&](bool backward, int head_dim) {
      std::vector<double> pred, meas;
      for (const AttentionCase& c : set.attentions) {
        if (!fa2_case(c) || c.backward != backward) continue;
        if (head_dim > 0 &&
            hw::AttentionFa2Model::kernel_of(fa2_head_dim(c)) != hw::AttentionFa2Model::kernel_of(head_dim))
          continue;
        pred.push_back(kernel_model_us(f.fa2, c)), meas.push_back(c.time_us);
      }
      return fit_stats(pred, meas);
    };
    f.fa2_fwd = stats_of(false, 0);
    f.fa2_bwd = stats_of(true, 0);
    for (KernelFit::Fa2Kernel& k : f.fa2_kernels)
      k.fwd = stats_of(false, k.head_dim), k.bwd = stats_of(true, k.head_dim);
  }
  f.elementwise = fit_stats(pe, me);
  return f;
}

}  // namespace cs::calibrate
