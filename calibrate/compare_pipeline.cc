#include "calibrate/compare_pipeline.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "calibrate/compare_run.h"
#include "calibrate/fit_stats.h"
#include "calibrate/json_file.h"
#include "calibrate/pipeline_cases.h"
#include "hw/user_error.h"
#include "models/model_workload.h"
#include "models/parallel_layout.h"
#include "models/scenario_runner.h"

namespace cs::calibrate {

namespace {

const char* const kKinds[] = {"forward", "backward", "backward_input", "backward_weight", "forward_backward"};

std::string kind_name(models::ChunkTask::Kind k) { return kKinds[static_cast<int>(k)]; }

// Why the case is not the scenario's step; empty when it is.
std::string mismatch(const PipelineCase& c, const models::ModelWorkload& w) {
  const models::ModelSpec& m = w.model;
  const models::ScheduleParams& p = *w.pipeline;
  if (c.schedule != p.kind) return "another schedule";
  if (c.stages != p.stages || c.micro_batches != p.micro_batches || c.virtual_stages != p.virtual_stages)
    return "another schedule size";
  if (c.ranks != w.layout.pp || w.layout.tp != 1 || w.layout.dp != 1) return "another layout";
  if (m.moe || m.layers != c.model.layers || m.hidden != c.model.hidden || m.vocab != c.model.vocab ||
      m.attention.heads != c.model.heads || m.attention.kv_heads != c.model.kv_heads ||
      m.attention.head_dim != c.model.head_dim || m.ffn.hidden != c.model.ffn_hidden)
    return "another model";
  if (w.seq_len != c.seq_len || w.micro_batch != c.micro_batch) return "another micro-batch";
  if (models::workload_stage_layers(w) != c.layers_per_stage) return "other layers per stage";
  return "";
}

}  // namespace

PipelineCompare compare_pipeline(const models::Scenario& sc, const std::string& measured_path) {
  if (!sc.model || !sc.model->pipeline)
    throw hw::UserError(measured_path, 0, 0, "pipeline_step.py output needs a scenario that runs a whole pipeline step "
                                             "('workload.pipeline'); '" + sc.name + "' runs none");
  const models::ModelWorkload& w = *sc.model;
  const std::vector<PipelineCase> cases = read_pipeline_cases(read_json_file(measured_path), measured_path, 0);
  const PipelineCase* c = nullptr;
  std::string why;
  for (const PipelineCase& x : cases) {
    const std::string m = mismatch(x, w);
    if (m.empty()) {
      c = &x;
      break;
    }
    why += (why.empty() ? "" : "; ") + x.name + ": " + m;
  }
  if (!c)
    throw hw::UserError(measured_path, 0, 0, "no case is the step of scenario '" + sc.name + "' (" + why + ")");
  require_scenario_gpu(sc, c->gpu, measured_path);

  // Each task's simulated end, from the ops emitted for it on its rank's streams.
  std::vector<std::vector<std::pair<models::ChunkTask::Kind, double>>> sim_tasks;
  models::RunOptions options;
  options.inspect = [&](const models::OpWorkload& work, const sim::ExecResult& ex) {
    if (!work.pipeline) return;
    sim_tasks.assign(static_cast<size_t>(work.pipeline->ranks), {});
    for (const models::ChunkSpan& s : work.pipeline->spans) {
      double end = 0;
      for (uint32_t op = s.first_op; op < s.end_op; ++op)
        if (ex.ops[op].done()) end = std::max(end, ex.ops[op].end.to_us() / 1000.0);
      sim_tasks[static_cast<size_t>(s.rank)].push_back({s.kind, end});
    }
  };
  const models::RunResult result = models::run_scenario(sc, options);
  if (!result.step || sim_tasks.size() != c->task_end_ms.size())
    throw std::logic_error("a whole-step pipeline ran without its schedule record");

  PipelineCompare r;
  r.scenario = sc.name;
  r.scenario_gpu = sc.cluster.gpu.model;
  r.measured_file = measured_path;
  r.measured_gpu = c->gpu;
  r.case_name = c->name;
  r.schedule = c->label();
  r.measured_step_ms = c->iteration_us / 1000.0;
  for (const models::RankStepTimes& t : result.step->ranks) {
    r.simulated_rank_end_ms.push_back(t.pipeline_end.to_us() / 1000.0);
    r.simulated_step_ms = std::max(r.simulated_step_ms, r.simulated_rank_end_ms.back());
  }
  std::map<std::string, std::vector<double>> measured, simulated;
  const models::PipelineSchedule sched = models::make_schedule(c->params());
  for (size_t rank = 0; rank < c->task_end_ms.size(); ++rank) {
    const std::vector<double>& ends = c->task_end_ms[rank];
    r.measured_rank_end_ms.push_back(ends.empty() ? 0 : ends.back());
    for (size_t i = 0; i < ends.size(); ++i)
      measured[kind_name(sched.per_rank[rank][i].kind)].push_back(ends[i] - (i ? ends[i - 1] : 0.0));
    const auto& sim = sim_tasks[rank];
    for (size_t i = 0; i < sim.size(); ++i)
      simulated[kind_name(sim[i].first)].push_back(sim[i].second - (i ? sim[i - 1].second : 0.0));
  }
  for (const char* k : kKinds) {
    if (!measured.count(k) && !simulated.count(k)) continue;
    r.tasks.push_back({k, static_cast<int>(measured[k].size()), static_cast<int>(simulated[k].size()),
                       median(measured[k]), median(simulated[k])});
  }
  r.notes.push_back("the measured step time is the median over the bench's timed steps; rank ends and task spans are "
                    "those of its last timed step");
  r.notes.push_back("the simulated step ends at each rank's last chunk: the scenario's optimizer step, which the bench "
                    "does not run, is left out");
  return r;
}

std::string pipeline_compare_console(const PipelineCompare& r) {
  std::ostringstream o;
  o << "scenario   " << r.scenario << " (" << r.scenario_gpu << ")\n";
  o << "measured   " << r.measured_file << " (pipeline_step, " << r.measured_gpu << ", case " << r.case_name << ": "
    << r.schedule << ")\n\n";
  o << std::left << std::setw(18) << "task kind" << std::right << std::setw(8) << "meas_n" << std::setw(8) << "sim_n"
    << std::setw(12) << "meas_ms" << std::setw(12) << "sim_ms" << std::setw(9) << "err%" << "   (median span)\n";
  for (const PipelineTaskRow& t : r.tasks)
    o << std::left << std::setw(18) << t.kind << std::right << std::setw(8) << t.measured_count << std::setw(8)
      << t.simulated_count << std::setw(12) << table_fixed(t.measured_median_ms, 3) << std::setw(12)
      << table_fixed(t.simulated_median_ms, 3) << std::setw(9)
      << table_error_pct(t.measured_median_ms, t.simulated_median_ms) << "\n";
  o << "\n" << std::left << std::setw(18) << "rank end" << std::right << std::setw(28) << "meas_ms" << std::setw(12)
    << "sim_ms" << std::setw(9) << "err%\n";
  for (size_t i = 0; i < r.measured_rank_end_ms.size() && i < r.simulated_rank_end_ms.size(); ++i)
    o << std::left << std::setw(18) << ("rank " + std::to_string(i)) << std::right << std::setw(28)
      << table_fixed(r.measured_rank_end_ms[i], 3) << std::setw(12) << table_fixed(r.simulated_rank_end_ms[i], 3)
      << std::setw(9) << table_error_pct(r.measured_rank_end_ms[i], r.simulated_rank_end_ms[i]) << "\n";
  o << std::left << std::setw(18) << "step" << std::right << std::setw(28) << table_fixed(r.measured_step_ms, 3)
    << std::setw(12) << table_fixed(r.simulated_step_ms, 3) << std::setw(9)
    << table_error_pct(r.measured_step_ms, r.simulated_step_ms) << "\n\n";
  for (const std::string& n : r.notes) o << "note: " << n << "\n";
  return o.str();
}

nlohmann::json pipeline_compare_json(const PipelineCompare& r) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const PipelineTaskRow& t : r.tasks)
    tasks.push_back({{"kind", t.kind},
                     {"measured_count", t.measured_count},
                     {"simulated_count", t.simulated_count},
                     {"measured_median_ms", t.measured_median_ms},
                     {"simulated_median_ms", t.simulated_median_ms}});
  return {{"schema_version", 1},
          {"scenario", r.scenario},
          {"scenario_gpu", r.scenario_gpu},
          {"measured_file", r.measured_file},
          {"measured_format", "pipeline_step"},
          {"measured_gpu", r.measured_gpu},
          {"case", r.case_name},
          {"schedule", r.schedule},
          {"measured_step_ms", r.measured_step_ms},
          {"simulated_step_ms", r.simulated_step_ms},
          {"measured_rank_end_ms", r.measured_rank_end_ms},
          {"simulated_rank_end_ms", r.simulated_rank_end_ms},
          {"tasks", tasks},
          {"notes", r.notes}};
}

}  // namespace cs::calibrate
