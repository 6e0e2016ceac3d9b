#include "models/training_run.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "models/model_flops.h"
#include "models/model_workload.h"
#include "models/scenario_loader.h"

namespace cs::models {

namespace {

using hw::YamlMap;
using hw::YamlNode;

constexpr int64_t kMaxRampIncrements = 1'000'000;  // a ramp is summed increment by increment

// The smallest micro-batch count from `m` up to `limit` the schedule accepts, or 0.
int first_valid_micro_batches(ScheduleParams p, int m, int limit) {
  for (; m <= limit; ++m) {
    p.micro_batches = m;
    if (schedule_problem(p).empty()) return m;
  }
  return 0;
}

sim::Time simulate_step(const Scenario& sc, const ModelWorkload& mw) {
  Scenario s = sc;
  s.model = std::make_shared<const ModelWorkload>(mw);
  return run_scenario(s, build_model_workload(mw, sc.cluster)).makespan;
}

}  // namespace

TrainingPlan parse_training(const YamlNode& t, const YamlNode& workload, const std::vector<std::string>& model_keys,
                            const ClusterConfig& cluster, const GraphLimits& limits) {
  const YamlMap m(t, {"usd_per_gpu_hour", "phases"});
  TrainingPlan plan;
  if (const auto v = m.optional("usd_per_gpu_hour")) plan.usd_per_gpu_hour = v->as_double(0, 1e6);
  const YamlNode phases = m.required("phases");
  std::vector<std::string> overridable = model_keys;
  overridable.erase(std::remove(overridable.begin(), overridable.end(), "kind"), overridable.end());
  for (const YamlNode& pn : phases.items()) {
    const YamlMap p(pn, {"name", "tokens", "steps", "global_batch", "workload"});
    TrainingPhase ph;
    ph.pos = {pn.line(), pn.col()};
    ph.name = p.required("name").as_string();
    if (p.exactly_one_of({"tokens", "steps"}) == "tokens")
      ph.tokens = p.required("tokens").as_double(0, 1e18, true);
    else
      ph.steps = p.required("steps").as_int(1, 1'000'000'000);
    YamlNode wn = workload;
    if (const auto over = p.optional("workload")) {
      (void)YamlMap(*over, overridable);  // only keys a model workload has, `kind` excepted
      wn = workload.merged_with(*over);
    }
    ModelWorkload mw = parse_model_workload(YamlMap(wn, model_keys), cluster, limits);
    if (!mw.pipeline)
      p.optional("workload").value_or(pn).fail("a training phase runs whole steps: its workload needs 'pipeline'");

    const YamlNode gb = p.required("global_batch");
    if (gb.is_map()) {
      const YamlMap b(gb, {"start", "end", "ramp_tokens"});
      ph.batch_start = b.required("start").as_int(1, 1'000'000'000);
      ph.batch_end = b.required("end").as_int(ph.batch_start, 1'000'000'000);
      ph.ramp_tokens = b.required("ramp_tokens").as_double(0, 1e18, true);
    } else {
      ph.batch_start = ph.batch_end = gb.as_int(1, 1'000'000'000);
    }
    const int64_t g = static_cast<int64_t>(mw.layout.dp) * mw.micro_batch;
    for (const int64_t batch : {ph.batch_start, ph.batch_end})
      if (batch % g != 0)
        gb.fail("a global batch of " + std::to_string(batch) + " sequences does not split over dp x micro_batch = " +
                std::to_string(g) + " (every data-parallel rank runs whole micro-batches)");
    if ((ph.batch_end - ph.batch_start) / g > kMaxRampIncrements)
      gb.fail("the ramp takes more than " + std::to_string(kMaxRampIncrements) +
              " increments of dp x micro_batch = " + std::to_string(g));
    ScheduleParams sp = *mw.pipeline;
    sp.micro_batches = static_cast<int>(ph.batch_end / g);
    if (const std::string bad = schedule_problem(sp); !bad.empty())
      gb.fail("at the full batch of " + std::to_string(ph.batch_end) + " sequences (" +
              std::to_string(sp.micro_batches) + " micro-batches per pipeline): " + bad);
    mw.pipeline = sp;
    const WorkloadSize size = model_workload_size(mw);
    if (size.ops > static_cast<uint64_t>(limits.ops) || size.transfers > static_cast<uint64_t>(limits.transfers))
      gb.fail("a step of this batch holds " + std::to_string(size.ops) + " ops and dependencies and " +
              std::to_string(size.transfers) + " transfers, beyond the limits of " + std::to_string(limits.ops) +
              " and " + std::to_string(limits.transfers) +
              ": use a coarser fidelity or a smaller layout (--graph-limit of clustersim run, sweep and check raises "
              "the limits)");
    ph.workload = std::make_shared<const ModelWorkload>(std::move(mw));
    plan.phases.push_back(std::move(ph));
  }
  if (plan.phases.empty()) phases.fail("'training.phases' lists no phase");
  return plan;
}

TrainingResult predict_training(const Scenario& sc, const RunResult& first) {
  TrainingResult out;
  out.usd_per_gpu_hour = sc.training->usd_per_gpu_hour;
  for (size_t i = 0; i < sc.training->phases.size(); ++i) {
    const TrainingPhase& ph = sc.training->phases[i];
    const ModelWorkload& mw = *ph.workload;
    PhaseResult r;
    r.name = ph.name;
    r.gpus = mw.layout.gpus();
    r.batch_start = ph.batch_start;
    r.batch_end = ph.batch_end;
    r.seq_len = mw.seq_len;
    r.layout = layout_text(mw.layout);
    const int64_t g = static_cast<int64_t>(mw.layout.dp) * mw.micro_batch;
    const int m_end = mw.pipeline->micro_batches, m_start = static_cast<int>(ph.batch_start / g);
    r.micro_batches = m_end;
    r.step = i == 0 ? first.makespan : simulate_step(sc, mw);
    // While the batch ramps, the step time is affine in the micro-batch count between the ramp's
    // first batch the schedule accepts and the full batch.
    double fit_s = r.step.to_seconds(), slope_s = 0;
    if (m_start < m_end) {
      r.fit_micro_batches = first_valid_micro_batches(*mw.pipeline, m_start, m_end);
      r.extrapolated = r.fit_micro_batches > m_start;
      if (r.fit_micro_batches < m_end) {
        ModelWorkload lo = mw;
        lo.pipeline->micro_batches = r.fit_micro_batches;
        r.step_at_ramp_start = simulate_step(sc, lo);
        fit_s = r.step_at_ramp_start.to_seconds();
        slope_s = (r.step.to_seconds() - fit_s) / (m_end - r.fit_micro_batches);
      } else {
        r.step_at_ramp_start = r.step;
      }
    }
    const auto step_s = [&](int64_t batch) {
      return m_start < m_end ? fit_s + slope_s * static_cast<double>(batch / g - r.fit_micro_batches) : r.step.to_seconds();
    };
    // Increment by increment of the ramp: batch b holds until the tokens consumed reach
    // ramp_tokens x (b + g - start) / (end - start).
    const double inf = std::numeric_limits<double>::infinity(), seq = static_cast<double>(mw.seq_len);
    double consumed = 0;
    int64_t steps = 0;
    for (int64_t b = ph.batch_start;; b = std::min(ph.batch_end, b + g)) {
      const double per_step = static_cast<double>(b) * seq;
      const double level_end = b < ph.batch_end ? ph.ramp_tokens * static_cast<double>(b + g - ph.batch_start) /
                                                      static_cast<double>(ph.batch_end - ph.batch_start)
                                                : inf;
      double n = level_end == inf ? inf : std::max(0.0, std::ceil((level_end - consumed) / per_step));
      if (ph.tokens) n = std::min(n, std::max(0.0, std::ceil((*ph.tokens - consumed) / per_step)));
      if (ph.steps) n = std::min(n, static_cast<double>(*ph.steps - steps));
      steps += static_cast<int64_t>(n);
      consumed += n * per_step;
      r.seconds += n * step_s(b);
      if ((ph.tokens && consumed >= *ph.tokens) || (ph.steps && steps >= *ph.steps)) break;
    }
    r.steps = steps;
    r.tokens = consumed;
    const double full_tokens = static_cast<double>(ph.batch_end) * seq, t = r.step.to_seconds();
    r.tokens_per_s_per_gpu = full_tokens / t / r.gpus;
    const double causal = model_flops_per_token(mw.model, mw.seq_len, true).total();
    const double full = model_flops_per_token(mw.model, mw.seq_len, false).total();
    r.tflops_causal = causal * r.tokens_per_s_per_gpu * 1e-12;
    r.tflops_full = full * r.tokens_per_s_per_gpu * 1e-12;
    r.mfu_causal = r.tflops_causal / sc.cluster.gpu.bf16_dense_tflops;
    r.mfu_full = r.tflops_full / sc.cluster.gpu.bf16_dense_tflops;
    r.gpu_hours = r.seconds * r.gpus / 3600;
    r.cost_usd = r.gpu_hours * out.usd_per_gpu_hour;
    out.gpu_hours += r.gpu_hours;
    out.days += r.seconds / 86400;
    out.cost_usd += r.cost_usd;
    out.phases.push_back(std::move(r));
  }
  return out;
}

}  // namespace cs::models
