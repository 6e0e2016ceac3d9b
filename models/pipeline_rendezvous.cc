#include "models/pipeline_rendezvous.h"

#include <stdexcept>
#include <string>

namespace cs::models {

PipelineRendezvous::PipelineRendezvous(const PipelineSchedule& sched, bool active)
    : active_(active && !sched.commits.empty()) {
  if (!active_) return;
  batch_before_.resize(sched.ranks);
  heads_.resize(sched.ranks);
  constexpr TaskRef kNone{-1, -1};
  for (int r = 0; r < static_cast<int>(sched.commits.size()); ++r)
    for (const CommitBatch& b : sched.commits[r]) {
      if (b.before_task >= static_cast<int>(sched.per_rank[r].size()))
        throw std::logic_error("pipeline rank " + std::to_string(r) + " commits a batch after its last task");
      batch_before_[r][b.before_task] = &b;
      for (const auto& [list, side] : {std::pair{&b.sends, 0}, std::pair{&b.recvs, 1}})
        for (const PassRef& p : *list) {
          auto& both = posted_.try_emplace(p, kNone, kNone).first->second;
          TaskRef& at = side == 0 ? both.first : both.second;
          if (at.rank != -1) throw std::logic_error("a pipeline pass is posted twice on one side");
          at = {r, b.before_task};
        }
    }
  for (const auto& [p, both] : posted_)
    if (both.first.rank == -1 || both.second.rank == -1)
      throw std::logic_error("a pipeline pass is posted by its sender or its receiver only");
}

void PipelineRendezvous::record_heads(int r, std::vector<std::vector<sim::OpId>> last_ops) {
  if (active_) heads_[r].push_back(std::move(last_ops));
}

const CommitBatch* PipelineRendezvous::next_batch(int r) const {
  if (!active_) return nullptr;
  const auto it = batch_before_[r].find(static_cast<int>(heads_[r].size()) - 1);
  return it == batch_before_[r].end() ? nullptr : it->second;
}

const std::pair<TaskRef, TaskRef>& PipelineRendezvous::posts(const PassRef& pass) const {
  const auto it = posted_.find(pass);
  if (it == posted_.end()) throw std::logic_error("a pipeline send that no batch posts");
  return it->second;
}

std::vector<sim::OpId> PipelineRendezvous::posted_after(const PassRef& pass, size_t i) const {
  std::vector<sim::OpId> out;
  if (!active_) return out;
  const auto& [from, to] = posts(pass);
  for (const TaskRef& side : {from, to})
    for (const sim::OpId op : heads_[side.rank][side.index][i]) out.push_back(op);
  return out;
}

}  // namespace cs::models
