// schedule_defect: the validity a schedule must have whatever its kind, checked from the task
// orders alone (no times), so that a generator bug shows up as a sentence rather than a hang.
#include <map>
#include <set>

#include "models/pipeline_schedule.h"

namespace cs::models {
namespace {

std::string pass_name(const PipelineSchedule& s, const PassRef& p) {
  static const char* const kPass[] = {"forward", "input gradient", "weight gradient"};
  std::string out = std::string(kPass[static_cast<int>(p.pass)]) + " of micro-batch " +
                    std::to_string(p.chunk.micro_batch) + " on stage " + std::to_string(p.chunk.stage);
  if (s.directions > 1) out += " direction " + std::to_string(p.chunk.direction);
  return out;
}

// Every pass of every chunk produced once, in range, on the rank that holds its stage.
std::string production_defect(const PipelineSchedule& s) {
  std::set<PassRef> seen;
  for (int r = 0; r < static_cast<int>(s.per_rank.size()); ++r)
    for (const ChunkTask& t : s.per_rank[r])
      for (const PassRef& p : task_provides(t)) {
        const ChunkRef& c = p.chunk;
        if (c.micro_batch < 0 || c.micro_batch >= s.micro_batches_per_direction || c.stage < 0 ||
            c.stage >= s.model_stages || c.direction < 0 || c.direction >= s.directions)
          return "rank " + std::to_string(r) + " runs " + task_token(s, t) + ", outside the schedule's sizes";
        if (s.rank_of(c.stage, c.direction) != r)
          return "rank " + std::to_string(r) + " runs the " + pass_name(s, p) + ", which rank " +
                 std::to_string(s.rank_of(c.stage, c.direction)) + " holds";
        if (!seen.insert(p).second) return "the " + pass_name(s, p) + " runs twice";
      }
  for (int d = 0; d < s.directions; ++d)
    for (int st = 0; st < s.model_stages; ++st)
      for (int m = 0; m < s.micro_batches_per_direction; ++m)
        for (ChunkPass pass : {ChunkPass::kForward, ChunkPass::kInputGrad, ChunkPass::kWeightGrad})
          if (!seen.count({pass, {m, st, d}})) return "the " + pass_name(s, {pass, {m, st, d}}) + " never runs";
  return "";
}

// Runs the ranks' orders with no times: each rank advances while its next task's needs are met.
// Whatever cannot finish is a deadlock (a backward ordered before its own forward is one).
std::string deadlock_defect(const PipelineSchedule& s) {
  std::set<PassRef> done;
  std::vector<size_t> next(s.per_rank.size(), 0);
  size_t left = 0;
  for (const auto& o : s.per_rank) left += o.size();
  for (bool progress = true; progress && left > 0;) {
    progress = false;
    for (size_t r = 0; r < s.per_rank.size(); ++r)
      while (next[r] < s.per_rank[r].size()) {
        const ChunkTask& t = s.per_rank[r][next[r]];
        bool ready = true;
        for (const PassRef& p : task_needs(s, t)) ready = ready && done.count(p);
        if (!ready) break;
        for (const PassRef& p : task_provides(t)) done.insert(p);
        ++next[r];
        --left;
        progress = true;
      }
  }
  if (left == 0) return "";
  for (size_t r = 0; r < s.per_rank.size(); ++r)
    if (next[r] < s.per_rank[r].size()) {
      const ChunkTask& t = s.per_rank[r][next[r]];
      for (const PassRef& p : task_needs(s, t))
        if (!done.count(p))
          return "deadlock: rank " + std::to_string(static_cast<int>(r)) + " waits at " + task_token(s, t) + " (task " +
                 std::to_string(static_cast<int>(next[r])) + ") for the " + pass_name(s, p);
    }
  return "deadlock";
}

}  // namespace

std::string schedule_defect(const PipelineSchedule& s) {
  if (static_cast<int>(s.per_rank.size()) != s.ranks)
    return std::to_string(static_cast<int>(s.per_rank.size())) + " task orders for " + std::to_string(s.ranks) +
           " ranks";
  if (std::string d = production_defect(s); !d.empty()) return d;
  return deadlock_defect(s);
}

}  // namespace cs::models
