#include "calibrate/validate.h"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <string_view>

#include "calibrate/comm_fit.h"
#include "calibrate/gemm_fit.h"
#include "calibrate/kernel_fit.h"
#include "calibrate/pipeline_cases.h"
#include "calibrate/sim_cases.h"

namespace cs::calibrate {

namespace {
bool in(const std::map<std::string, hw::ProfileRange>& r, const char* key, double v) {
  const auto it = r.find(key);
  return it == r.end() || it->second.contains(v);
}

// Whether a parameter's source ("how: FILE (GPU, DATE)", as calibrate fit writes it) names `file`,
// however either path is spelled.
bool names_file(const std::string& source, const std::string& file) {
  const size_t colon = source.rfind(": "), paren = source.rfind(" (");
  if (colon == std::string::npos || paren == std::string::npos || paren < colon) return false;
  std::error_code ec1, ec2;
  const auto a = std::filesystem::weakly_canonical(source.substr(colon + 2, paren - colon - 2), ec1);
  const auto b = std::filesystem::weakly_canonical(file, ec2);
  return !ec1 && !ec2 && a == b;
}

// The cases of the given kinds.
FitStats stats(const std::vector<CaseCheck>& cases, std::initializer_list<std::string_view> kinds, bool held_only) {
  std::vector<double> pred, meas;
  for (const CaseCheck& c : cases)
    if (std::find(kinds.begin(), kinds.end(), c.kind) != kinds.end() && (!held_only || c.held_out)) {
      pred.push_back(c.predicted_us);
      meas.push_back(c.measured_us);
    }
  return fit_stats(pred, meas);
}
// The job's measured time at one case's split, from its per-op times.
double measured_job_us(const OverlapCase& c, int gemms, int a2as) {
  const double g = gemms * c.gemm_together_us, a = a2as * c.a2a_together_us;
  if (g <= a) return g + (a2as - g / c.a2a_together_us) * c.a2a_alone_us;
  return a + (gemms - a / c.gemm_together_us) * c.gemm_alone_us;
}

std::vector<OverlapOptimum> overlap_optima(const hw::GpuProfile& p, const hw::GpuSpec& gpu,
                                           const std::vector<OverlapCase>& cases) {
  std::map<std::string, std::vector<const OverlapCase*>> by_shape;
  for (const OverlapCase& c : cases) by_shape[c.shape_name].push_back(&c);
  std::vector<OverlapOptimum> out;
  for (auto& [shape, cs] : by_shape) {
    std::sort(cs.begin(), cs.end(), [](auto* a, auto* b) { return a->ctas < b->ctas; });
    OverlapOptimum o;
    o.shape = shape;
    // The job: the op counts of the middle case of the sweep, the same at every split.
    const OverlapCase& mid = *cs[cs.size() / 2];
    o.gemms = mid.gemm_count;
    o.a2as = mid.a2a_count;
    for (const OverlapCase* c : cs) {
      OverlapCase job = *c;
      job.gemm_count = o.gemms;
      job.a2a_count = o.a2as;
      o.ctas.push_back(c->ctas);
      o.measured_us.push_back(measured_job_us(*c, o.gemms, o.a2as));
      o.predicted_us.push_back(simulate_overlap(p, gpu, job).makespan.to_seconds() * 1e6);
    }
    const auto best = [](const std::vector<double>& v) {
      return static_cast<int>(std::min_element(v.begin(), v.end()) - v.begin());
    };
    const int m = best(o.measured_us), q = best(o.predicted_us);
    o.measured_best = o.ctas[m];
    o.predicted_best = o.ctas[q];
    o.steps_apart = std::abs(m - q);
    out.push_back(std::move(o));
  }
  return out;
}
}  // namespace

Validation validate_profile(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const MeasurementSet& set,
                            int holdout_every) {
  Validation v;
  // FP8 and BF16 GEMMs through the same engine path (the shape's type picks the profile's rates);
  // the range the profile was fitted on is the FP8 sweep's.
  const auto gemms = [&](const std::vector<GemmCase>& cases, const char* kind, bool ranged, bool holdout = true) {
    const std::vector<bool> held = gemm_holdout(cases, holdout ? holdout_every : 0);
    for (size_t i = 0; i < cases.size(); ++i) {
      const GemmCase& c = cases[i];
      CaseCheck k;
      k.kind = kind;
      k.label = c.key() + " on " + std::to_string(c.sms) + " SMs";
      k.measured_us = c.time_us;
      k.predicted_us = simulate_gemm(p, gpu, c).to_seconds() * 1e6;
      k.held_out = held[i];
      k.beyond_range = ranged && !(in(p.gemm_range, "sms", c.sms) && in(p.gemm_range, "m", double(c.shape.m)) &&
                                   in(p.gemm_range, "n", double(c.shape.n)) && in(p.gemm_range, "k", double(c.shape.k)));
      v.cases.push_back(k);
    }
  };
  gemms(set.gemms, "gemm", true);
  gemms(set.bf16_gemms, "gemm_bf16", false);
  // Both scalings' kernels (kernels/torch/fp8_tile_scaling.py), by kind. None is held out: the
  // blocks' are never fitted, the tiles' only through their ratio to the blocks'.
  std::vector<GemmCase> blocks, tiles;
  for (const GemmCase& c : set.fp8_scaling_gemms) (c.shape.scaling == sim::Fp8Scaling::kTiles ? tiles : blocks).push_back(c);
  gemms(blocks, "gemm_fp8_blocks", false, false);
  gemms(tiles, "gemm_fp8_tiles", false, false);
  std::vector<AllToAllCase> a2a;
  for (const AllToAllCase& c : set.all_to_alls)
    if (comm_fits_case(c)) a2a.push_back(c);
  const std::vector<bool> comm_held = comm_holdout(a2a, holdout_every);
  for (size_t i = 0; i < a2a.size(); ++i) {
    const AllToAllCase& c = a2a[i];
    CaseCheck k;
    k.kind = "all_to_all";
    k.label = c.mode + " " + std::to_string(static_cast<int64_t>(c.size_bytes)) + " B on " + std::to_string(c.gpus) +
              " GPUs, " + std::to_string(c.ctas) + " SMs";
    k.measured_us = c.time_us;
    k.predicted_us = simulate_all_to_all(p, gpu, c).to_seconds() * 1e6;
    k.held_out = comm_held[i];
    k.beyond_range = !(in(p.comm_range, "ctas", c.ctas) && in(p.comm_range, "size_bytes", c.size_bytes));
    v.cases.push_back(k);
  }
  // Attention and memory-bound kernels, where the profile has them: the calls its fit used (SDPA's
  // own backend pick; fused kernels), as a model workload's ops would run them.
  if (p.kernels.present()) {
    for (const AttentionCase& c : set.attentions) {
      if (!fitted_case(c)) continue;
      CaseCheck k;
      k.kind = "attention";
      k.label = c.name + (c.backward ? " backward" : " forward");
      k.measured_us = c.time_us;
      k.predicted_us = simulate_kernel(p, gpu, {attention_case_flops(c), 0, sim::DType::kBf16,
                                                c.backward ? sim::ComputeKind::kAttentionBackward
                                                           : sim::ComputeKind::kAttentionForward})
                           .to_seconds() * 1e6;
      v.cases.push_back(k);
    }
    for (const AttentionCase& c : set.attentions) {
      if (!p.attention_fa2.present() || !fa2_case(c)) continue;
      CaseCheck k;
      k.kind = "attention_fa2";
      k.label = c.name + (c.d_v_run != c.d_v ? " (v padded)" : "") + (c.backward ? " backward" : " forward");
      k.measured_us = c.time_us;
      const sim::GenericCompute op{
          attention_case_flops(c),
          0,
          sim::DType::kBf16,
          c.backward ? sim::ComputeKind::kAttentionBackward : sim::ComputeKind::kAttentionForward,
          sim::MemoryForm::kAny,
          static_cast<int32_t>(c.d_qk),
          static_cast<int32_t>(c.d_v)};  // the engine pads v as FlashAttention-2 ran it
      k.predicted_us = simulate_kernel(p, gpu, op, hw::AttentionKernel::kFa2).to_seconds() * 1e6;
      v.cases.push_back(k);
    }
    // A kernel alone, without the launch gap the simulator puts before it in a stream: neither
    // its device time nor one call's CUDA-event time counts the device's gap to a next kernel.
    hw::GpuProfile alone = p;
    alone.kernels.launch_gap_us = 0;
    for (const MemoryBoundCase& c : set.memory_bound) {
      if (!fitted_case(c)) continue;
      CaseCheck k;
      k.kind = "memory_bound";
      k.label = c.op + " (" + c.variant + ")";
      k.measured_us = c.time_us;
      k.predicted_us =
          simulate_kernel(alone, gpu, {0, c.bytes, sim::DType::kBf16, sim::ComputeKind::kMemoryBound}).to_seconds() * 1e6;
      v.cases.push_back(k);
    }
    for (const MemoryFormCase& c : set.memory_forms) {
      CaseCheck k;
      k.kind = "memory_form";
      k.label = c.op + " (" + sim::memory_form_name(c.form) + ")";
      k.measured_us = c.device_us;
      k.predicted_us =
          simulate_kernel(alone, gpu, {0, c.bytes, sim::DType::kBf16, sim::ComputeKind::kMemoryBound, c.form})
              .to_seconds() * 1e6;
      v.cases.push_back(k);
    }
  }
  v.attention = stats(v.cases, {"attention"}, false);
  v.attention_fa2 = stats(v.cases, {"attention_fa2"}, false);
  v.memory_bound = stats(v.cases, {"memory_bound"}, false);
  v.memory_forms = stats(v.cases, {"memory_form"}, false);
  for (const OverlapCase& c : set.overlaps) {
    CaseCheck k;
    k.kind = "overlap";
    k.label = c.shape_name + ": " + std::to_string(c.a2a_count) + " a2a on " + std::to_string(c.ctas) + " SMs, " +
              std::to_string(c.gemm_count) + " GEMMs on " + std::to_string(c.compute_sms);
    k.measured_us = c.makespan_us;
    k.predicted_us = simulate_overlap(p, gpu, c).makespan.to_seconds() * 1e6;
    k.held_out = true;
    k.beyond_range = !in(p.comm_range, "ctas", c.ctas) || !in(p.gemm_range, "sms", c.compute_sms);
    v.cases.push_back(k);
  }
  v.overlap = stats(v.cases, {"overlap"}, false);
  v.optima = overlap_optima(p, gpu, set.overlaps);
  for (const PipelineCase& c : set.pipelines) {
    CaseCheck k;
    k.kind = "pipeline";
    k.label = c.label();
    k.measured_us = c.iteration_us;
    k.predicted_us = simulate_pipeline_step(p, gpu, c, set.sources[c.source].file).to_seconds() * 1e6;
    // Every step is beyond the fitted ranges in one way: its gradient all-reduce runs on all 132
    // SMs (stage boundaries go by the copy engine, so the communication partition holds none),
    // above any all-to-all the profile measured. Flagging that would mark every case and say
    // nothing, so steps are not flagged.
    k.held_out = true;
    v.cases.push_back(k);
  }
  v.pipeline = stats(v.cases, {"pipeline"}, false);
  // GEMM calls under the power limit: each steady phase's settled call, and each GEMM phase's
  // first second (the controller catching up, duty cycles included), at the profile's clock model.
  // Held out unless the profile's power section was fitted from this very file.
  if (p.power.present())
    for (PowerResponse r : set.power) {
      use_gemm_traffic(r, p, gpu);
      const auto it = p.power_params.find("window_ms");
      const bool fitted = it != p.power_params.end() && names_file(it->second.source, r.file);
      const PowerPrediction pp = predict_power(p.power, r);
      for (const PowerFitRow& row : pp.rows) {
        if (row.phase.find("copy") != std::string::npos) continue;
        char label[120];
        std::snprintf(label, sizeof label, "%s settled call (%.0f MHz measured, %.0f predicted)", row.phase.c_str(),
                      row.measured_MHz, row.predicted_MHz);
        v.cases.push_back({"power", label, row.measured_call_s * 1e6, row.predicted_call_s * 1e6, !fitted, false});
      }
      for (const PowerOnsetRow& row : pp.onsets)
        v.cases.push_back({"power", row.phase + " mean call over its first second", row.measured_mean_call_s * 1e6,
                           row.predicted_mean_call_s * 1e6, !fitted, false});
    }
  v.power = stats(v.cases, {"power"}, false);
  v.gemm_held = stats(v.cases, {"gemm"}, true);
  v.gemm_all = stats(v.cases, {"gemm"}, false);
  v.gemm_bf16_held = stats(v.cases, {"gemm_bf16"}, true);
  v.gemm_bf16_all = stats(v.cases, {"gemm_bf16"}, false);
  v.gemm_tiles = stats(v.cases, {"gemm_fp8_tiles"}, false);
  v.gemm_scalings = stats(v.cases, {"gemm_fp8_blocks", "gemm_fp8_tiles"}, false);
  v.comm_held = stats(v.cases, {"all_to_all"}, true);
  v.comm_all = stats(v.cases, {"all_to_all"}, false);
  return v;
}

}  // namespace cs::calibrate
