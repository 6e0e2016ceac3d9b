#include "calibrate/kernel_clock_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "calibrate/fit_stats.h"
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

KernelClockFit fit_kernel_clock(const std::vector<KernelClockCase>& cases, const hw::KernelModel& kernels) {
  KernelClockFit f;
  f.forms.resize(sim::kMemoryForms);
  std::set<std::string> seen;
  std::vector<double> high_MHz;
  for (const KernelClockCase& c : cases) {
    if (!seen.insert(c.name).second)
      throw hw::UserError("kernel clock", 0, 0, "the kernel '" + c.name + "' comes twice: give each once");
    const KernelClockShare s{c.name, std::clamp(kernel_clock_share(c), 0.0, 1.0), c.low_ms / c.high_ms};
    if (c.kind == "attention_fwd") f.attention_fwd.push_back(s);
    else if (c.kind == "attention_bwd") f.attention_bwd.push_back(s);
    else if (c.kind == "gemm_bf16") f.gemm.push_back(s);
    else f.forms[static_cast<size_t>(c.form)].push_back(s);
    if (c.kind != "gemm_bf16") high_MHz.push_back(c.high_MHz);
  }
  if (f.attention_fwd.empty() || f.attention_bwd.empty() || f.forms[0].empty())
    throw hw::UserError("kernel clock", 0, 0,
                        "the kernel clock fit needs attention forward and backward and a plain copy (form 'any')");
  hw::KernelClockModel& m = f.model;
  m.memory_fit_MHz = median(high_MHz);
  m.attention_fwd = median_share(f.attention_fwd);
  m.attention_bwd = median_share(f.attention_bwd);
  m.attention_fit_MHz = m.memory_fit_MHz;
  // The attention shares above are at the light load's clock; the profile holds them at the clock
  // the attention times stand for (A + B / f is the same curve either way).
  if (kernels.present()) {
    std::vector<double> refs;
    for (auto* v : {&f.attention_fwd, &f.attention_bwd})
      for (KernelClockShare& s : *v) {
        const KernelClockCase& c = *std::find_if(cases.begin(), cases.end(), [&](const KernelClockCase& x) { return x.name == s.name; });
        const double share = v == &f.attention_fwd ? m.attention_fwd : m.attention_bwd;
        const double below = attention_model_us(kernels, c) / (c.high_ms * 1e3) - (1 - share);
        if (!(below > 0) || !(share > 0)) continue;  // the model's time is out of this share's reach
        s.reference_MHz = share * c.high_MHz / below;
        refs.push_back(s.reference_MHz);
      }
    if (refs.empty())
      throw hw::UserError("kernel clock", 0, 0, "no attention case's time is reached by the attention model at any clock");
    m.attention_fit_MHz = median(refs);
    m.attention_fwd = share_at(m.attention_fwd, m.memory_fit_MHz, m.attention_fit_MHz);
    m.attention_bwd = share_at(m.attention_bwd, m.memory_fit_MHz, m.attention_fit_MHz);
  }
  // Each memory-bound case's share at memory_fit_MHz (its own clock after the copies a few MHz off).
  for (size_t i = 0; i < f.forms.size(); ++i)
    for (KernelClockShare& x : f.forms[i]) {
      const KernelClockCase& c = *std::find_if(cases.begin(), cases.end(), [&](const KernelClockCase& y) { return y.name == x.name; });
      x.share = share_at(x.share, c.high_MHz, m.memory_fit_MHz);
    }
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
    const double predicted = ((1 - s) + s * ref / c.low_MHz) / ((1 - s) + s * ref / c.high_MHz);
    err.push_back(std::abs(predicted / (c.low_ms / c.high_ms) - 1));
  }
  f.median_error = median(err);
  f.worst_error = *std::max_element(err.begin(), err.end());
  return f;
}

}  // namespace cs::calibrate
