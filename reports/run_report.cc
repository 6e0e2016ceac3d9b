#include "reports/run_report.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace cs::reports {

namespace {

nlohmann::json rank_times_json(const models::RankStepTimes& t) {
  return {{"warmup_forward_ms", t.warmup_forward.to_ms()}, {"steady_ms", t.steady.to_ms()},
          {"input_backward_ms", t.input_backward.to_ms()}, {"weight_backward_ms", t.weight_backward.to_ms()},
          {"optimizer_ms", t.optimizer.to_ms()},           {"bubble_ms", t.bubble.to_ms()},
          {"pipeline_end_ms", t.pipeline_end.to_ms()}};
}

nlohmann::json chunk_times_json(const models::RankChunkTimes& t) {
  return {{"forward_ms", t.forward.to_ms()},   {"backward_ms", t.backward.to_ms()},
          {"weight_ms", t.weight.to_ms()},     {"forward_backward_ms", t.forward_backward.to_ms()},
          {"optimizer_ms", t.optimizer.to_ms()}, {"bubble_ms", t.bubble.to_ms()}};
}

nlohmann::json step_json(const models::StepBreakdown& b) {
  nlohmann::json ranks = nlohmann::json::array(), by_chunk = nlohmann::json::array();
  for (const auto& t : b.ranks) {
    nlohmann::json j = rank_times_json(t);
    j["rank"] = t.rank;
    ranks.push_back(std::move(j));
  }
  for (const auto& t : b.by_chunk) {
    nlohmann::json j = chunk_times_json(t);
    j["rank"] = t.rank;
    by_chunk.push_back(std::move(j));
  }
  return {{"schedule", b.schedule},
          {"step_ms", b.step.to_ms()},
          {"mean", rank_times_json(b.mean)},
          {"ranks", ranks},
          {"by_chunk", {{"mean", chunk_times_json(b.by_chunk_mean)}, {"ranks", by_chunk}}}};
}

nlohmann::json training_json(const models::TrainingResult& t) {
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& p : t.phases) {
    nlohmann::json j = {{"name", p.name},
                        {"gpus", p.gpus},
                        {"steps", p.steps},
                        {"tokens", p.tokens},
                        {"seq_len", p.seq_len},
                        {"layout", p.layout},
                        {"global_batch", {{"start", p.batch_start}, {"end", p.batch_end}}},
                        {"micro_batches_per_step", p.micro_batches},
                        {"step_s", p.step.to_seconds()},
                        {"days", p.seconds / 86400},
                        {"tokens_per_s_per_gpu", p.tokens_per_s_per_gpu},
                        {"model_tflops_per_gpu", {{"causal", p.tflops_causal}, {"full_attention", p.tflops_full}}},
                        {"mfu_bf16", {{"causal", p.mfu_causal}, {"full_attention", p.mfu_full}}},
                        {"gpu_hours", p.gpu_hours},
                        {"cost_usd", p.cost_usd}};
    if (p.fit_micro_batches > 0)
      j["ramp"] = {{"fit_micro_batches", p.fit_micro_batches},
                   {"step_at_fit_s", p.step_at_ramp_start.to_seconds()},
                   {"extrapolated", p.extrapolated}};
    phases.push_back(std::move(j));
  }
  return {{"phases", phases},
          {"gpu_hours", t.gpu_hours},
          {"days", t.days},
          {"cost_usd", t.cost_usd},
          {"usd_per_gpu_hour", t.usd_per_gpu_hour}};
}

// The run's cost phase by phase: the answer a capacity planner came for.
std::string training_console(const models::TrainingResult& t) {
  std::string out = "\ntraining run (each phase's step simulated at its full batch; a ramp's steps from an affine fit):\n";
  out += fmt::format("{:<24} {:>6} {:>9} {:>10} {:>9} {:>10} {:>9} {:>15} {:>11} {:>8} {:>12}\n", "phase", "gpus",
                     "steps", "tokens_B", "step_s", "tok/s/gpu", "TFLOPS", "MFU%", "GPU-hours_K", "days", "cost_USD_M");
  for (const auto& p : t.phases) {
    out += fmt::format("{:<24} {:>6} {:>9} {:>10.1f} {:>9.3f} {:>10.1f} {:>4.0f}/{:<4.0f} {:>6.2f}/{:<6.2f}  {:>11.1f} {:>8.2f} {:>12.3f}\n",
                       p.name, p.gpus, p.steps, p.tokens * 1e-9, p.step.to_seconds(), p.tokens_per_s_per_gpu,
                       p.tflops_causal, p.tflops_full, 100 * p.mfu_causal, 100 * p.mfu_full, p.gpu_hours * 1e-3,
                       p.seconds / 86400, p.cost_usd * 1e-6);
    if (p.layout != t.phases.front().layout) out += fmt::format("  {}: layout {}\n", p.name, p.layout);
    if (p.extrapolated)
      out += fmt::format("  {}: the ramp starts below the schedule's minimum of {} micro-batches; its first steps are "
                         "extrapolated\n", p.name, p.fit_micro_batches);
  }
  out += fmt::format("{:<24} {:>6} {:>9} {:>10} {:>9} {:>10} {:>9} {:>15} {:>11.1f} {:>8.2f} {:>12.3f}\n", "total", "",
                     "", "", "", "", "", "", t.gpu_hours * 1e-3, t.days, t.cost_usd * 1e-6);
  out += "  TFLOPS and MFU: model FLOPs with causal / full attention, against the dense BF16 peak\n";
  if (t.usd_per_gpu_hour > 0) out += fmt::format("  cost at ${:.2f} per GPU-hour\n", t.usd_per_gpu_hour);
  return out;
}

// A table of six figures in ms, one row per pipeline rank and their mean.
using SixMs = std::array<double, 6>;
void ms_table(std::string& out, const std::array<const char*, 6>& head, const std::vector<std::pair<std::string, SixMs>>& rows) {
  out += fmt::format("{:<6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "rank", head[0], head[1], head[2], head[3],
                     head[4], head[5]);
  for (const auto& [name, v] : rows)
    out += fmt::format("{:<6} {:>12.3f} {:>12.3f} {:>12.3f} {:>12.3f} {:>12.3f} {:>12.3f}\n", name, v[0], v[1], v[2], v[3],
                       v[4], v[5]);
}

// DeepSeek's step breakdown (ISCA'25 Table 4), per pipeline rank and averaged; bubble is idle time.
std::string step_console(const models::StepBreakdown& b) {
  std::string out = fmt::format("\nstep       {:.3f} ms, {} schedule; per pipeline rank (ms; the parts sum to the step):\n",
                                b.step.to_ms(), b.schedule);
  std::vector<std::pair<std::string, SixMs>> rows;
  const auto phases = [&](const std::string& name, const models::RankStepTimes& t) {
    rows.push_back({name, {t.warmup_forward.to_ms(), t.steady.to_ms(), t.input_backward.to_ms(),
                           t.weight_backward.to_ms(), t.optimizer.to_ms(), t.bubble.to_ms()}});
  };
  for (const auto& t : b.ranks) phases(std::to_string(t.rank), t);
  phases("mean", b.mean);
  ms_table(out, {"warmup_fwd", "steady", "input_bwd", "weight_bwd", "optimizer", "bubble"}, rows);
  out += "\nthe same step by what each task runs, wherever it runs (lone forward, lone backward, weight, overlapped pair):\n";
  rows.clear();
  const auto kinds = [&](const std::string& name, const models::RankChunkTimes& t) {
    rows.push_back({name, {t.forward.to_ms(), t.backward.to_ms(), t.weight.to_ms(), t.forward_backward.to_ms(),
                           t.optimizer.to_ms(), t.bubble.to_ms()}});
  };
  for (const auto& t : b.by_chunk) kinds(std::to_string(t.rank), t);
  kinds("mean", b.by_chunk_mean);
  ms_table(out, {"forward", "backward", "weight", "fwd_and_bwd", "optimizer", "bubble"}, rows);
  return out;
}

}  // namespace

nlohmann::json result_json(const models::RunResult& r, const std::string& version, nlohmann::json report) {
  using nlohmann::json;
  json parts = json::array();
  for (const auto& p : r.partitions) parts.push_back({{"name", p.name}, {"sms", p.sms}});
  json streams = json::array();
  for (const auto& s : r.streams) {
    streams.push_back({{"name", s.name},
                       {"partition", s.partition},
                       {"mover", s.mover == sim::Mover::kCopyEngine ? "copy_engine" : "sms"},
                       {"gpus", s.gpus},
                       {"ops_per_gpu", s.ops_per_gpu},
                       {"busy_mean_us", s.busy_mean.to_us()},
                       {"busy_max_us", s.busy_max.to_us()},
                       {"end_us", s.end_max.to_us()}});
  }
  json links = json::array();
  for (const auto& l : r.links) {
    const double busy_s = l.busy.to_seconds();
    links.push_back({{"name", l.name},
                     {"capacity_GBps", l.capacity_GBps},
                     {"bytes", l.bytes},
                     {"busy_us", l.busy.to_us()},
                     {"mean_GBps_while_busy", busy_s > 0 ? l.bytes / busy_s * 1e-9 : 0.0}});
  }
  json resources = json::array();
  for (const auto& b : r.resources)
    resources.push_back({{"resource", b.resource},
                         {"gpus", b.gpus},
                         {"busy_share_mean", b.mean_share},
                         {"busy_share_max", b.max_share},
                         {"bandwidth_share_mean", b.mean_used >= 0 ? nlohmann::json(b.mean_used) : nlohmann::json()}});
  const json engine = {{"ops", r.ops},
                       {"events", r.events},
                       {"reallocations", r.reallocations},
                       {"flows_reallocated", r.flows_reallocated},
                       {"flow_rate_changes", r.flow_rate_changes}};
  json out = json{{"schema_version", kResultSchemaVersion},
                  {"clustersim_version", version},
                  {"scenario", {{"name", r.scenario}, {"file", r.file}}},
                  {"cluster", {{"gpu", r.gpu_model}, {"gpus", r.gpus}, {"fabric", r.fabric}, {"sm_partitions", parts}}},
                  {"cost_model",
                   {{"description", r.cost_model},
                    {"calibrated", r.calibrated},
                    {"range_warnings", r.cost_warnings},
                    {"gemm_clock_MHz_per_gpu", r.gemm_mean_MHz}}},
                  {"makespan_us", r.makespan.to_us()},
                  {"makespan_ps", r.makespan.ps_count()},
                  {"streams", streams},
                  {"links", links},
                  {"resources", resources},
                  {"engine", engine}};
  if (r.model) {
    const models::ModelRunSummary& m = *r.model;
    json memory = json::object();
    for (const auto& [name, bytes] : m.memory_bytes) memory[name + "_bytes"] = bytes;
    memory["available_bytes"] = m.memory_available_bytes;
    memory["pp_rank"] = m.worst_pp_rank;
    memory["schedule"] = m.schedule;
    json model = {{"name", m.model},
                  {"layout", m.layout},
                  {"stage", m.stage},
                  {"stage_gpus", m.stage_gpus},
                  {"simulated_gpus", m.simulated_gpus},
                  {"fidelity", m.fidelity},
                  {"fidelity_warnings", json::array()},
                  {"pipeline", m.pipeline},
                  {"micro_batches", m.micro_batches},
                  {"tokens_per_micro_batch", m.tokens_per_micro_batch},
                  {"precision", m.precision},
                  {"placement", m.placement},
                  {"memory_worst_rank", memory}};
    for (const auto& w : m.fidelity_warnings) model["fidelity_warnings"].push_back(w.text);
    if (m.gpus_per_token > 0)
      model["routing"] = {{"nodes_per_token", m.nodes_per_token}, {"gpus_per_token", m.gpus_per_token}};
    out["model"] = std::move(model);
  }
  if (r.step) out["step"] = step_json(*r.step);
  if (r.training) out["training"] = training_json(*r.training);
  if (!report.is_null()) out["report"] = std::move(report);
  return out;
}

namespace {

std::string model_console(const models::ModelRunSummary& m) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  std::string out =
      m.pipeline.empty()
          ? fmt::format("model      {}, {}; stage {} ({} GPUs), {} micro-batch(es) of {} tokens, {}\n", m.model, m.layout,
                        m.stage, m.stage_gpus, m.micro_batches, m.tokens_per_micro_batch, m.precision)
          : fmt::format("model      {}, {}; one {} step over every stage, {} micro-batches of {} tokens, {}\n", m.model,
                        m.layout, m.pipeline, m.micro_batches, m.tokens_per_micro_batch, m.precision);
  out +=
      m.fidelity == "mirrored"
          ? fmt::format(
                "fidelity   mirrored: {} GPUs simulated, data-parallel rank 0 of each stage's {} standing in for "
                "the rest (MoE all-to-alls as puts of its own traffic; its links carry theirs)\n",
                m.simulated_gpus, m.stage_gpus)
      : m.fidelity == "folded"
          ? fmt::format(
                "fidelity   folded: {} GPUs simulated, one data-parallel replica of each stage's {} (its links "
                "carry the others')\n",
                m.simulated_gpus, m.stage_gpus)
          : fmt::format("fidelity   full: {} GPUs simulated, all {} of each stage\n", m.simulated_gpus, m.stage_gpus);
  for (const auto& w : m.fidelity_warnings) out += "           warning: " + w.text + "\n";
  for (const std::string& line : m.placement) out += "           " + line + "\n";
  if (m.gpus_per_token > 0)
    out += fmt::format("routing    a token reaches {:.3f} nodes and {:.3f} GPUs on average (balanced, node-limited)\n",
                       m.nodes_per_token, m.gpus_per_token);
  double total = 0;
  std::string parts;
  for (const auto& [name, bytes] : m.memory_bytes) {
    total += bytes;
    parts += fmt::format("{}{} {:.2f}", parts.empty() ? "" : ", ", name, bytes / kGiB);
  }
  out += fmt::format("memory     {:.2f} of {:.2f} GiB on pipeline rank {} ({} schedule): {}\n", total / kGiB,
                     m.memory_available_bytes / kGiB, m.worst_pp_rank, m.schedule, parts);
  return out;
}

}  // namespace

std::string result_console(const models::RunResult& r) {
  std::string out;
  out += fmt::format("scenario   {}\n", r.scenario);
  std::string parts;
  for (const auto& p : r.partitions) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", p.name, p.sms);
  out += fmt::format("cluster    {} x {} (SMs: {})\n", r.gpus, r.gpu_model, parts);
  out += fmt::format("fabric     {}\n", r.fabric);
  out += fmt::format("costs      {}{}\n", r.cost_model, r.calibrated ? "" : "  [UNCALIBRATED]");
  double lo = 0, hi = 0, sum = 0;
  int n = 0;
  for (double MHz : r.gemm_mean_MHz) {
    if (!(MHz > 0)) continue;
    lo = n ? std::min(lo, MHz) : MHz, hi = std::max(hi, MHz), sum += MHz, ++n;
  }
  if (n)
    out += fmt::format("clock      SM clock while GEMMs ran: {:.0f} MHz on average over {} simulated GPU(s), {:.0f} to {:.0f}\n",
                       sum / n, n, lo, hi);
  if (r.model) out += model_console(*r.model);
  out += fmt::format("makespan   {:.3f} ms\n", r.makespan.to_ms());
  if (r.step) out += step_console(*r.step);
  if (r.training) out += training_console(*r.training);
  out += "\n";
  out += fmt::format("{:<20} {:<10} {:>5} {:>8} {:>13} {:>12} {:>10} {:>6}\n", "stream", "partition", "gpus",
                     "ops/gpu", "busy_mean_ms", "busy_max_ms", "end_ms", "busy%");
  for (const auto& s : r.streams) {
    const double pct = r.makespan.ps_count() > 0 ? 100.0 * s.busy_mean.to_seconds() / r.makespan.to_seconds() : 0.0;
    out += fmt::format("{:<20} {:<10} {:>5} {:>8} {:>13.3f} {:>12.3f} {:>10.3f} {:>6.1f}\n", s.name, s.partition,
                       s.gpus, s.ops_per_gpu, s.busy_mean.to_ms(), s.busy_max.to_ms(), s.end_max.to_ms(), pct);
  }
  for (const auto& s : r.streams)
    if (s.mover == sim::Mover::kCopyEngine)
      out += fmt::format("({}: sends by the copy engine, holding none of partition {}'s SMs)\n", s.name, s.partition);
  if (!r.resources.empty()) {
    out += fmt::format("\n{:<20} {:>5} {:>11} {:>10} {:>11}   (busy: share of the makespan with any work or flow; "
                       "used: bytes over capacity x makespan)\n",
                       "resource", "gpus", "busy%_mean", "busy%_max", "used%_mean");
    for (const auto& b : r.resources)
      out += fmt::format("{:<20} {:>5} {:>11.1f} {:>10.1f} {:>11}\n", b.resource, b.gpus, 100 * b.mean_share,
                         100 * b.max_share, b.mean_used >= 0 ? fmt::format("{:.1f}", 100 * b.mean_used) : "-");
  }
  if (!r.links.empty()) {
    // The busiest links tell where the bandwidth went; the full list is in the JSON output.
    std::vector<const models::LinkResult*> top;
    for (const auto& l : r.links) top.push_back(&l);
    std::stable_sort(top.begin(), top.end(), [](auto* a, auto* b) { return a->bytes > b->bytes; });
    if (top.size() > 8) top.resize(8);
    out += fmt::format("\n{:<20} {:>10} {:>12} {:>10} {:>16}\n", "link (busiest)", "cap_GB/s", "GB", "busy_ms",
                       "GB/s_while_busy");
    for (const auto* l : top) {
      const double busy_s = l->busy.to_seconds();
      out += fmt::format("{:<20} {:>10.1f} {:>12.3f} {:>10.3f} {:>16.1f}\n", l->name, l->capacity_GBps,
                         l->bytes * 1e-9, l->busy.to_ms(), busy_s > 0 ? l->bytes / busy_s * 1e-9 : 0.0);
    }
  }
  return out;
}

}  // namespace cs::reports
