#include "calibrate/kernel_params.h"

#include <fmt/format.h>

#include <algorithm>

#include "calibrate/fit_sources.h"
#include "hw/user_error.h"

namespace cs::calibrate {

namespace {

std::string note(const std::string& what, int cases, const FitStats& st) {
  return fmt::format("{} of {} cases, median error {:.1f}%, worst {:.1f}%", what, cases, st.median_error * 100,
                     st.worst_error * 100);
}

// attention_fa2: each fitted kernel's four rates, and the clock its calls ran at.
void set_fa2_params(const MeasurementSet& set, const hw::GpuSpec& gpu, const KernelFit& k,
                    const std::string& fa2_clock_log, hw::GpuProfile& p) {
  p.attention_fa2 = k.fa2;
  const std::string files = attention_sources_of(set, &fa2_case);
  for (const KernelFit::Fa2Kernel& q : k.fa2_kernels) {
    const std::string what = fmt::format(
        "least squares over FlashAttention-2's head-dim-{} kernel (PyTorch's flash backend), FLOPs as it ran them "
        "(v padded to q/k's head dim where it differs)",
        q.head_dim);
    const std::string fwd = note(what + ", forward", q.fwd_cases, q.fwd) + ": " + files;
    const std::string bwd = note(what + ", backward", q.bwd_cases, q.bwd) + ": " + files;
    const hw::AttentionFa2Model::Rates& r = k.fa2.rates_for(q.head_dim);
    const int at = 4 * hw::AttentionFa2Model::kernel_of(q.head_dim);
    const double w[] = {r.fwd_us, r.fwd_tflops, r.bwd_us, r.bwd_tflops};
    for (int i = 0; i < 4; ++i)
      p.attention_fa2_params[hw::AttentionFa2Model::param_name(at + i)] = {w[i], "measured", i < 2 ? fwd : bwd};
  }
  if (fa2_clock_log.empty()) return;
  const std::string src = loaded_clock_source(fa2_clock_log, gpu, &p.attention_fa2.fit_MHz);
  p.attention_fa2_params["fit_MHz"] = {p.attention_fa2.fit_MHz, "measured",
                                       src +
                                           " (FlashAttention-2's calls back to back; taken for every file's flash "
                                           "calls: they draw alike, below the power limit)"};
}

}  // namespace

std::optional<KernelFit> fit_kernel_sections(const MeasurementSet& set, const hw::GpuSpec& gpu,
                                             const std::string& fa2_clock_log, hw::GpuProfile& p) {
  if (!fa2_clock_log.empty() && std::none_of(set.attentions.begin(), set.attentions.end(), fa2_case))
    throw hw::UserError(fa2_clock_log, 0, 0,
                        "a FlashAttention-2 clock log, but no FlashAttention-2 call (attention_bench.py's flash "
                        "backend) to go with it");
  if (set.attentions.empty() && set.memory_bound.empty()) return std::nullopt;
  KernelFit k = fit_kernels(set);
  p.kernels = k.model;
  const std::string attn = attention_sources_of(set, &fitted_case);
  const std::string fwd =
      note("least squares over SDPA's own backend pick, forward", k.attn_fwd_cases, k.attn_fwd) + ": " + attn;
  const std::string bwd =
      note("least squares over SDPA's own backend pick, backward", k.attn_bwd_cases, k.attn_bwd) + ": " + attn;
  const std::string mem =
      note("median bytes / time of the fused (compiled) kernels", k.elementwise_cases, k.elementwise) + ": " +
      sources_of(set, "kernels/torch/memory_bound.py");
  const double v[] = {k.model.attn_fwd_us, k.model.attn_fwd_tflops, k.model.attn_bwd_us, k.model.attn_bwd_tflops,
                      k.model.elementwise_GBps};
  const std::string* src[] = {&fwd, &fwd, &bwd, &bwd, &mem};
  for (int i = 0; i < hw::KernelModel::kRequiredParams; ++i)
    p.kernel_params[hw::KernelModel::param_name(i)] = {v[i], "measured", *src[i]};
  if (k.fa2.present()) set_fa2_params(set, gpu, k, fa2_clock_log, p);
  return k;
}

}  // namespace cs::calibrate
