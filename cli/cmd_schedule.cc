// clustersim schedule show: a pipeline schedule as a text grid, with its bubbles and activations,
// and optionally as a Perfetto trace.
#include <iostream>
#include <optional>
#include <stdexcept>

#include "cli/commands.h"
#include "hw/user_error.h"
#include "models/pipeline_schedule.h"
#include "models/schedule_uniform_sim.h"
#include "reports/atomic_file.h"
#include "reports/schedule_json.h"
#include "reports/schedule_report.h"

namespace cs::cli {

int cmd_schedule_show(const ScheduleShowArgs& a) {
  const auto bad = [](const std::string& msg) { throw hw::UserError("clustersim schedule show", 0, 0, msg); };
  const std::optional<models::ScheduleKind> kind = models::schedule_kind_from_name(a.kind);
  if (!kind) bad("unknown schedule '" + a.kind + "'; the kinds are " + models::schedule_kind_list());
  models::ScheduleParams p;
  p.kind = *kind;
  p.stages = a.stages;
  p.micro_batches = a.micro_batches;
  // --virtual defaults to 2 for interleaved, and to 1 (no virtual stages) for every other kind.
  p.virtual_stages = a.virtual_stages > 0 ? a.virtual_stages : (*kind == models::ScheduleKind::kInterleaved1f1b ? 2 : 1);
  if (const std::string problem = models::schedule_problem(p); !problem.empty()) bad(problem);
  if (a.times.size() != 4) bad("--times takes four whole microseconds F,B,W,F&B, e.g. 1,2,1,2");
  const int64_t f = a.times[0], b = a.times[1], w = a.times[2], fb = a.times[3];
  if (f < 1 || b < 1 || fb < 1 || w < 1 || w >= b)
    bad("--times F,B,W,F&B needs F, B and F&B of at least 1 us and 1 <= W < B (W is part of the full backward B)");

  // Open the trace before the run so that an unwritable path fails at once.
  std::optional<reports::AtomicFile> trace, json;
  if (!a.trace.empty()) trace.emplace(a.trace);
  if (!a.json.empty()) json.emplace(a.json);
  const models::PipelineSchedule s = models::make_schedule(p);
  const models::ChunkTimes t{sim::Time::us(f), sim::Time::us(b), sim::Time::us(w), sim::Time::us(fb)};
  const models::ScheduleRun run = models::simulate_uniform(s, t, trace ? &trace->stream() : nullptr);
  if (run.stuck_tasks != 0) throw std::logic_error("the generated schedule deadlocked");  // generator bug

  const std::string text = reports::schedule_show(s, t, run);
  if (json) json->stream() << reports::schedule_json(s).dump(1) << '\n';
  // Every output finished before any is committed: one that fails leaves all unchanged.
  if (trace) trace->finish_writing();
  if (json) json->finish_writing();
  std::cout << text;
  check_stdout();
  if (trace) {
    trace->commit();
    std::cerr << "clustersim: wrote trace " << a.trace << " (open it in ui.perfetto.dev)\n";
  }
  if (json) {
    json->commit();
    std::cerr << "clustersim: wrote schedule " << a.json << "\n";
  }
  return 0;
}

}  // namespace cs::cli
