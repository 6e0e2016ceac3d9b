#include "calibrate/kernel_clock_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "calibrate/fit_stats.h"
#include "hw/power_model.h"
#include "hw/user_error.h"

namespace cs::calibrate {

double kernel_clock_share(const KernelClockCase& c) { return (c.low_ms / c.high_ms - 1) / (c.high_MHz / c.low_MHz - 1); }

double attention_model_us(const hw::KernelModel& k, const KernelClockCase& c) {
  return c.kind == "attention_fwd" ? k.attn_fwd_us + c.flops / (k.attn_fwd_tflops * 1e6)
                                   : k.attn_bwd_us + c.flops / (k.attn_bwd_tflops * 1e6);
}

namespace {

double share_at(double share, double from_MHz, double to_MHz) {
  // t(f) = A + B / f: the clock-bound part B / f grows by from / to against the fixed part A.
  const double bound = share * from_MHz / to_MHz;
  return bound / ((1 - share) + bound);
}

double median_share(const std::vector<KernelClockShare>& v) {
  std::vector<double> s;
  for (const KernelClockShare& x : v) s.push_back(x.share);
  return median(s);
}

}  // namespace

KernelClockFit fit_kernel_clock(const std::vector<KernelClockCase>& cases, const hw::KernelModel& kernels, double max_MHz) {
  KernelClockFit f;
  f.forms.resize(sim::kMemoryForms);
  std::set<std::string> seen;
  std::vector<double> high_MHz;
  for (const KernelClockCase& c : cases) {
    if (!seen.insert(c.name).second)
      throw hw::UserError("kernel clock data", 0, 0, "the kernel '" + c.name + "' comes twice: give each once");
    if (c.kind != "gemm_bf16") high_MHz.push_back(c.high_MHz);
  }
  hw::KernelClockModel& m = f.model;
  m.memory_fit_MHz = median(high_MHz);
  // Every share at memory_fit_MHz (each case's own clock after the copies is a few MHz off it);
  // the GEMM check's at its own.
  for (size_t i = 0; i < cases.size(); ++i) {
    const KernelClockCase& c = cases[i];
    const double own = std::clamp(kernel_clock_share(c), 0.0, 1.0);
    KernelClockShare s{c.name, static_cast<int>(i), c.kind == "gemm_bf16" ? own : share_at(own, c.high_MHz, m.memory_fit_MHz),
                       c.low_ms / c.high_ms};
    if (c.kind == "attention_fwd") f.attention_fwd.push_back(s);
    else if (c.kind == "attention_bwd") f.attention_bwd.push_back(s);
    else if (c.kind == "gemm_bf16") f.gemm.push_back(s);
    else f.forms[static_cast<size_t>(c.form)].push_back(s);
  }
  if (f.attention_fwd.empty() || f.attention_bwd.empty() || f.forms[0].empty())
    throw hw::UserError("kernel clock data", 0, 0,
                        "the kernel clock fit needs attention forward and backward and a plain copy (form 'any')");
  const double fwd = median_share(f.attention_fwd), bwd = median_share(f.attention_bwd);
  m.attention_fit_MHz = m.memory_fit_MHz;
  if (kernels.present()) {
    std::vector<double> refs;
    for (auto* v : {&f.attention_fwd, &f.attention_bwd})
      for (KernelClockShare& s : *v) {
        const KernelClockCase& c = cases[static_cast<size_t>(s.index)];
        // The case's curve at its kind's share: t(f) = t_high ((1 - s) + s f_high / f).
        const double share = share_at(v == &f.attention_fwd ? fwd : bwd, m.memory_fit_MHz, c.high_MHz);
        const double below = attention_model_us(kernels, c) / (c.high_ms * 1e3) - (1 - share);
        if (!(below > 0) || !(share > 0)) continue;  // the model's time is out of this share's reach
        s.reference_MHz = share * c.high_MHz / below;
        s.above_max = max_MHz > 0 && s.reference_MHz > max_MHz;
        if (!s.above_max) refs.push_back(s.reference_MHz);
      }
    if (refs.empty())
      throw hw::UserError("kernel clock data", 0, 0,
                          "no attention case's time is reached by the attention model at a clock up to the maximum");
    m.attention_fit_MHz = median(refs);
  }
  // The profile holds the attention shares at the clock its attention times stand for.
  m.attention_fwd = share_at(fwd, m.memory_fit_MHz, m.attention_fit_MHz);
  m.attention_bwd = share_at(bwd, m.memory_fit_MHz, m.attention_fit_MHz);
  m.form.fill(-1);
  for (int i = 0; i < sim::kMemoryForms; ++i)
    if (!f.forms[i].empty()) m.form[i] = median_share(f.forms[i]);
  // Each case predicted back by its kind's share, at its own two clocks.
  std::vector<double> err;
  for (const KernelClockCase& c : cases) {
    if (c.kind == "gemm_bf16") continue;
    sim::GenericCompute g;
    g.kind = c.kind == "attention_fwd"   ? sim::ComputeKind::kAttentionForward
             : c.kind == "attention_bwd" ? sim::ComputeKind::kAttentionBackward
                                         : sim::ComputeKind::kMemoryBound;
    g.form = c.form;
    const double s = m.share(g);
    const double ref = m.reference_MHz(g);
    const double predicted = hw::share_stretch(s, ref, c.low_MHz) / hw::share_stretch(s, ref, c.high_MHz);
    err.push_back(std::abs(predicted / (c.low_ms / c.high_ms) - 1));
  }
  f.median_error = median(err);
  f.worst_error = *std::max_element(err.begin(), err.end());
  return f;
}

}  // namespace cs::calibrate
