#include "reports/schedule_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace cs::reports {
namespace {

using models::ChunkTask;
using models::ScheduleKind;
using sim::Time;

std::string us(Time t) { return fmt::format("{:g}", t.to_us()); }

// Every task starts and ends on a multiple of the gcd of the task times (starts are sums of
// ends), so one slot of that length loses nothing.
int64_t slot_ps(const models::PipelineSchedule& s, const models::ChunkTimes& t) {
  int64_t g = 0;
  for (const auto& tasks : s.per_rank)
    for (const ChunkTask& task : tasks) g = std::gcd(g, t.of(task).ps_count());
  return g;
}

std::string stage_list(const models::PipelineSchedule& s, int rank) {
  std::string out;
  for (const models::StageRef& st : s.rank_stages(rank)) {
    if (!out.empty()) out += ", ";
    out += std::to_string(st.stage);
    if (st.direction == 1 || (s.params.kind == ScheduleKind::kDualPipeV && st.stage >= s.params.stages / 2)) out += "'";
  }
  return out;
}

std::string header(const models::PipelineSchedule& s, const models::ChunkTimes& t) {
  const auto& p = s.params;
  std::string what = fmt::format("{} stages on {} ranks, {} micro-batches", s.model_stages, s.ranks, p.micro_batches);
  if (p.kind == ScheduleKind::kInterleaved1f1b) what += fmt::format(" ({} virtual stages per rank)", p.virtual_stages);
  if (p.kind == ScheduleKind::kDualPipe)
    what += fmt::format(" ({} each way; two model copies, stage r forward and pp-1-r reverse on rank r)",
                        s.micro_batches_per_direction);
  if (p.kind == ScheduleKind::kDualPipeV) what += " (one model; rank r holds stages r and pp-1-r)";
  std::string out = fmt::format("schedule     {}: {}\n", models::schedule_kind_name(p.kind), what);
  std::string pair;
  if (p.kind == ScheduleKind::kDualPipe || p.kind == ScheduleKind::kDualPipeV)
    pair = fmt::format(", F&B {} us", us(t.forward_backward));
  out += fmt::format("chunk times  F {} us, B {} us (input {} + weight W {}){}; no communication time\n",
                     us(t.forward), us(t.backward), us(t.backward_input()), us(t.weight), pair);
  return out;
}

std::string legend(const models::PipelineSchedule& s) {
  std::string out = "legend       F forward, B full backward, I input backward, W weight backward, . idle";
  if (s.params.kind == ScheduleKind::kDualPipe) out += ",\n             FxBy forward x overlapped with backward y, ' the reverse direction";
  if (s.params.kind == ScheduleKind::kDualPipeV) out += ",\n             FxBy forward x overlapped with backward y, ' a stage on the way back up";
  if (s.params.kind == ScheduleKind::kInterleaved1f1b) out += ",\n             a, b, ... the rank's model chunk (stage r, pp+r, ...)";
  return out + "\n";
}

}  // namespace

std::string schedule_grid(const models::PipelineSchedule& s, const models::ChunkTimes& t,
                          const models::ScheduleRun& run) {
  const int64_t slot = slot_ps(s, t);
  if (slot == 0) return "";
  const int64_t slots = run.makespan.ps_count() / slot;
  // Columns just wide enough that every token, and a space, fits the slots its task spans.
  size_t width = 2;
  for (int r = 0; r < s.ranks; ++r)
    for (size_t i = 0; i < s.per_rank[r].size(); ++i) {
      const auto span = static_cast<size_t>((run.timing[r][i].end - run.timing[r][i].start).ps_count() / slot);
      if (span > 0) width = std::max(width, (models::task_token(s, s.per_rank[r][i]).size() + span) / span);
    }
  const std::string label_fmt = fmt::format("rank {{:<{}}} ", std::to_string(s.ranks - 1).size());
  std::string out;
  for (int r = 0; r < s.ranks; ++r) {
    std::string row(static_cast<size_t>(slots) * width, ' ');
    for (int64_t k = 0; k < slots; ++k) row[static_cast<size_t>(k) * width] = '.';
    for (size_t i = 0; i < s.per_rank[r].size(); ++i) {
      const int64_t first = run.timing[r][i].start.ps_count() / slot;
      const int64_t span = (run.timing[r][i].end - run.timing[r][i].start).ps_count() / slot;
      if (span == 0) continue;
      std::string cell = models::task_token(s, s.per_rank[r][i]);
      cell.resize(static_cast<size_t>(span) * width - 1, span > 1 ? '-' : ' ');
      row.replace(static_cast<size_t>(first) * width, cell.size() + 1, cell + ' ');
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += fmt::format(fmt::runtime(label_fmt), r) + row + "\n";
  }
  return out;
}

std::string schedule_show(const models::PipelineSchedule& s, const models::ChunkTimes& t,
                          const models::ScheduleRun& run) {
  std::string out = header(s, t);
  out += fmt::format("makespan     {} us\n\n", us(run.makespan));
  const int64_t slot = slot_ps(s, t);
  if (slot > 0 && run.makespan.ps_count() / slot <= kMaxGridSlots) {
    out += fmt::format("one column = {} us\n", us(Time::ps(slot)));
    out += schedule_grid(s, t, run) + "\n";
  } else if (slot > 0) {
    out += fmt::format("(grid left out: {} columns of {} us; --trace FILE shows every task)\n\n",
                       run.makespan.ps_count() / slot, us(Time::ps(slot)));
  }
  out += legend(s) + "\n";
  out += fmt::format("{:<6}{:<18}{:>10}{:>12}{:>13}\n", "rank", "stages held", "busy_us", "bubble_us", "activations");
  for (int r = 0; r < s.ranks; ++r)
    out += fmt::format("{:<6}{:<18}{:>10}{:>12}{:>13}\n", r, stage_list(s, r), us(run.busy[r]), us(run.bubble[r]),
                       models::activation_peak(s, r).total);
  const models::PublishedBubble pub = models::published_bubble(s, t);
  std::vector<int> at;
  for (int r = 0; r < s.ranks; ++r)
    if (run.bubble[r] == run.max_bubble()) at.push_back(r);
  const std::string ranks = at.size() == static_cast<size_t>(s.ranks) ? "every rank" : fmt::format("ranks {}", fmt::join(at, ", "));
  out += fmt::format("\nbubble       simulated largest {} us ({}); published {} = {} us, for {}\n", us(run.max_bubble()),
                     ranks, pub.formula, us(pub.value), pub.applies_to);
  if (!pub.conditions.empty())
    out += fmt::format("             the formula holds when {}: {}\n", pub.conditions,
                       pub.conditions_hold ? "so here" : "not so here, so the two may differ");
  out += "activations  peak micro-batch chunks in flight per rank (a forward adds one, its backward frees it)\n";
  return out;
}

}  // namespace cs::reports
