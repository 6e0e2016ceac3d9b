#include "calibrate/pipeline_cases.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "hw/user_error.h"
#include "models/cost_config.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"

namespace cs::calibrate {

using nlohmann::json;

std::string PipelineCase::label() const {
  std::string s = std::string(models::schedule_kind_name(schedule)) + " pp" + std::to_string(stages);
  if (schedule == models::ScheduleKind::kInterleaved1f1b) s += " v" + std::to_string(virtual_stages);
  return s + " m" + std::to_string(micro_batches);
}

namespace {

// Typed access with the file and the JSON path in every message, so a hand-edited or truncated
// result is refused at the field that is wrong rather than as a parser exception.
struct Reader {
  const std::string& file;

  [[noreturn]] void fail(const std::string& message) const { throw hw::UserError(file, 0, 0, message); }

  const json& at(const json& j, const char* key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key))
      fail(where + " has no '" + key + "': not a kernels/torch/pipeline_step.py result of this version");
    return j.at(key);
  }
  std::string text(const json& j, const char* key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_string()) fail(where + "." + key + " must be a string");
    return v.get<std::string>();
  }
  double number(const json& j, const char* key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_number()) fail(where + "." + key + " must be a number");
    return v.get<double>();
  }
  // A whole number of at least `min` (counts and sizes).
  int64_t whole(const json& j, const char* key, const std::string& where, int64_t min) const {
    const double v = number(j, key, where);
    if (v != std::floor(v) || v < static_cast<double>(min) || v > 1e12)
      fail(where + "." + key + " must be a whole number of at least " + std::to_string(min));
    return static_cast<int64_t>(v);
  }
  int count(const json& j, const char* key, const std::string& where, int min = 1) const {
    const int64_t v = whole(j, key, where, min);
    if (v > 1'000'000) fail(where + "." + key + " is out of range");
    return static_cast<int>(v);
  }
  const json& list(const json& j, const char* key, const std::string& where) const {
    const json& v = at(j, key, where);
    if (!v.is_array()) fail(where + "." + key + " must be a list");
    return v;
  }
};

PipelineModel read_model(const Reader& r, const json& bench) {
  const json& m = r.at(bench, "model", "bench");
  PipelineModel out;
  out.layers = r.count(m, "layers", "bench.model");
  out.hidden = r.count(m, "hidden", "bench.model");
  out.heads = r.count(m, "heads", "bench.model");
  out.kv_heads = r.count(m, "kv_heads", "bench.model");
  out.head_dim = r.count(m, "head_dim", "bench.model");
  out.ffn_hidden = r.count(m, "ffn", "bench.model");
  out.vocab = r.count(m, "vocab", "bench.model");
  return out;
}

// The schedule guard: the bench executed `clustersim schedule show --json` of the generator as it
// was then; a measurement of another order is not a measurement of what we would simulate now.
void check_tokens(const Reader& r, const PipelineCase& c, const std::string& where) {
  models::PipelineSchedule s;
  try {
    s = models::make_schedule(c.params());
  } catch (const std::invalid_argument& e) {
    r.fail(where + " (" + c.name + "): not a schedule clustersim generates: " + e.what());
  }
  const std::string rerun = ": the schedule generator changed since the measurement; measure again "
                            "(kernels/torch/measure_pipeline.sh)";
  if (s.ranks != c.ranks || s.model_stages != static_cast<int>(c.layers_per_stage.size()))
    r.fail(where + " (" + c.name + "): " + std::to_string(c.ranks) + " ranks and " +
           std::to_string(c.layers_per_stage.size()) + " model stages, where clustersim's " + c.label() + " has " +
           std::to_string(s.ranks) + " ranks and " + std::to_string(s.model_stages) + " model stages" + rerun);
  for (int rank = 0; rank < s.ranks; ++rank) {
    const std::vector<models::ChunkTask>& tasks = s.per_rank[rank];
    const std::vector<std::string>& ran = c.task_tokens[rank];
    for (size_t i = 0; i < std::max(tasks.size(), ran.size()); ++i) {
      const std::string want = i < tasks.size() ? models::task_token(s, tasks[i]) : "(nothing)";
      const std::string got = i < ran.size() ? ran[i] : "(nothing)";
      if (want != got)
        r.fail(where + " (" + c.name + "): rank " + std::to_string(rank) + "'s task " + std::to_string(i) + " ran '" +
               got + "' where clustersim's " + c.label() + " now runs '" + want + "'" + rerun);
    }
  }
}

PipelineCase read_case(const Reader& r, const json& j, const std::string& where, const PipelineModel& model,
                       int64_t seq_len, int64_t micro_batch, const std::string& precision) {
  PipelineCase c;
  c.name = r.text(j, "name", where);
  const json& check = r.at(j, "check", where);
  if (!check.is_object() || !check.contains("passed") || check["passed"] != true)
    r.fail(where + " (" + c.name + "): its gradient check did not pass (check.passed is not true): the step it "
                   "timed is not known to compute the model");
  const std::string kind = r.text(j, "schedule", where);
  const auto k = models::schedule_kind_from_name(kind);
  if (!k) r.fail(where + " (" + c.name + "): schedule '" + kind + "' is not one clustersim generates (" +
                 models::schedule_kind_list() + ")");
  c.schedule = *k;
  c.stages = r.count(j, "stages", where);
  c.micro_batches = r.count(j, "micro_batches", where);
  c.virtual_stages = r.count(j, "virtual_stages", where);
  c.ranks = r.count(j, "ranks", where);
  for (const json& n : r.list(j, "layers_per_stage", where)) {
    if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() > 100000)
      r.fail(where + ".layers_per_stage must list whole numbers of layers");
    c.layers_per_stage.push_back(n.get<int>());
  }
  const int layers = std::accumulate(c.layers_per_stage.begin(), c.layers_per_stage.end(), 0);
  if (layers != model.layers)
    r.fail(where + " (" + c.name + "): layers_per_stage adds up to " + std::to_string(layers) +
           " layers, but bench.model has " + std::to_string(model.layers));
  const double median_ms = r.number(r.at(j, "iteration_ms", where), "median", where + ".iteration_ms");
  if (!(median_ms > 0)) r.fail(where + ".iteration_ms.median must be positive");
  c.iteration_us = median_ms * 1e3;
  const json& runs = r.list(j, "tasks_last_run", where);
  for (size_t rank = 0; rank < runs.size(); ++rank) {
    const std::string w = where + ".tasks_last_run[" + std::to_string(rank) + "]";
    if (!runs[rank].is_array()) r.fail(w + " must be a list of tasks");
    std::vector<std::string>& tokens = c.task_tokens.emplace_back();
    std::vector<double>& ends = c.task_end_ms.emplace_back();
    for (size_t i = 0; i < runs[rank].size(); ++i) {
      const std::string wi = w + "[" + std::to_string(i) + "]";
      tokens.push_back(r.text(runs[rank][i], "token", wi));
      ends.push_back(r.number(runs[rank][i], "end_ms", wi));
      if (!(ends.back() >= (i ? ends[i - 1] : 0.0))) r.fail(wi + ".end_ms must not run backwards");
    }
  }
  if (static_cast<int>(c.task_tokens.size()) != c.ranks)
    r.fail(where + " (" + c.name + "): tasks_last_run lists " + std::to_string(c.task_tokens.size()) +
           " ranks, but the case has " + std::to_string(c.ranks));
  c.model = model;
  c.seq_len = seq_len;
  c.micro_batch = micro_batch;
  c.precision = precision;
  check_tokens(r, c, where);
  return c;
}

}  // namespace

std::vector<PipelineCase> read_pipeline_cases(const json& d, const std::string& file, int source) {
  const Reader r{file};
  const json& prov = r.at(d, "provenance", "the file");
  const std::string gpu = r.text(r.at(prov, "gpu", "provenance"), "name", "provenance.gpu");
  // One process drove every GPU; a step over unlike GPUs is not a measurement of one GPU's profile.
  if (prov.contains("gpu_names"))
    for (const json& n : r.list(prov, "gpu_names", "provenance"))
      if (n != gpu) r.fail("provenance.gpu_names mixes GPUs ('" + gpu + "' and " + n.dump() + "): measure on one kind");
  const json& bench = r.at(d, "bench", "the file");
  const PipelineModel model = read_model(r, bench);
  const int64_t seq_len = r.whole(bench, "seq_len", "bench", 1);
  const int64_t micro_batch = r.whole(bench, "micro_batch", "bench", 1);
  const std::string precision = r.text(bench, "precision", "bench");
  // The scenario's bf16_mixed is what the bench ran: BF16 weights, activations and GEMMs.
  if (precision != "bf16") r.fail("bench.precision '" + precision + "': only bf16 steps are simulated");
  // The scenario sends stage boundaries by the copy engine, as the bench did (simulate_pipeline_step).
  const std::string boundary = r.text(bench, "stage_boundary", "bench");
  if (!boundary.starts_with("copy engine"))
    r.fail("bench.stage_boundary '" + boundary + "': only stage boundaries sent by the copy engine are simulated");
  const json& cases = r.list(d, "cases", "the file");
  if (cases.empty()) r.fail("'cases' lists no case");
  std::vector<PipelineCase> out;
  for (size_t i = 0; i < cases.size(); ++i) {
    PipelineCase c = read_case(r, cases[i], "cases[" + std::to_string(i) + "]", model, seq_len, micro_batch, precision);
    c.gpu = gpu;
    c.index = static_cast<int>(i);
    c.source = source;
    out.push_back(std::move(c));
  }
  return out;
}

sim::Time simulate_pipeline_step(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const PipelineCase& c,
                                 const std::string& file) {
  const PipelineModel& m = c.model;
  std::ostringstream y;
  // Names as JSON strings: a valid YAML double-quoted scalar whatever they hold.
  const std::string name = json(c.name).dump();
  y << "schema_version: 1\nname: " << name << "\ndescription: " << name << "\n"
    << "cluster:\n  gpu: " << gpu.name << "\n  gpus: " << c.ranks << "\n"
    // The bench sends stage boundaries with the copy engine (cudaMemcpyPeerAsync; the reader
    // refuses any other bench.stage_boundary), which takes no SMs (`p2p: copy_engine` below), and
    // runs nothing else that communicates: the compute kernels keep every SM, as on the GPU.
    << "  sm_partitions: {compute: " << gpu.sms << ", comm: 0}\n"
    << "workload:\n  kind: model\n"
    << "  model: {name: dense, source: kernels/torch/pipeline_step.py, layers: " << m.layers << ", hidden: " << m.hidden
    << ", vocab: " << m.vocab << ", norm: rmsnorm, attention: {kind: gqa, heads: " << m.heads
    << ", kv_heads: " << m.kv_heads << ", head_dim: " << m.head_dim << "}, ffn: {activation: swiglu, hidden: "
    << m.ffn_hidden << "}}\n"
    << "  layout: {tp: 1, dp: 1, pp: " << c.ranks << ", layers_per_stage: [";
  for (size_t i = 0; i < c.layers_per_stage.size(); ++i) y << (i ? ", " : "") << c.layers_per_stage[i];
  y << "]}\n  seq_len: " << c.seq_len << "\n  micro_batch: " << c.micro_batch << "\n  precision: bf16_mixed\n"
    // The bench keeps every activation for the backward: nothing is recomputed.
    << "  recompute: {rms_norm: false, mla_up_proj: false}\n"
    // pipeline_model.py's SDPA: strided copies into or out of its layout, each way, and qkv's
    // split backward a concatenation.
    << "  implementation: {attention_layout_copies: true}\n"
    << "  pipeline: {schedule: " << models::schedule_kind_name(c.schedule) << ", micro_batches: " << c.micro_batches
    << ", p2p: copy_engine";
  if (c.schedule == models::ScheduleKind::kInterleaved1f1b) y << ", virtual_stages: " << c.virtual_stages;
  y << "}\n";
  models::Scenario sc;
  try {
    sc = models::load_scenario_text(y.str(), file + " (" + c.name + " as a scenario)");
  } catch (const hw::UserError& e) {
    throw hw::UserError(file, 0, 0, "cases[" + std::to_string(c.index) + "] (" + c.name +
                                        "): the simulator cannot run it: " + e.what());
  }
  // The profile being validated, as it is in memory (not re-read from a file), applied as a
  // scenario's `cost_model: {kind: calibrated, profile: ...}` applies it.
  models::use_profile(sc.cost, sc.cluster, p);
  const models::RunResult r = models::run_scenario(sc);
  if (!r.step || r.step->ranks.empty()) throw std::logic_error("a pipeline scenario ran without its step breakdown");
  sim::Time end;
  for (const models::RankStepTimes& t : r.step->ranks) end = std::max(end, t.pipeline_end);
  return end;
}

}  // namespace cs::calibrate
