#include "models/pipeline_rendezvous.h"

#include <stdexcept>
#include <string>

namespace cs::models {

PipelineRendezvous::PipelineRendezvous(const PipelineSchedule& sched, bool active)
    : active_(active && !sched.commits.empty()) {
  if (!active_) return;
  batches_.resize(sched.ranks);
  cursor_.assign(sched.ranks, 0);
  heads_.resize(sched.ranks);
  for (int r = 0; r < static_cast<int>(sched.commits.size()); ++r)
    for (size_t k = 0; k < sched.commits[r].size(); ++k) {
      const CommitBatch& b = sched.commits[r][k];
      if (b.before_task < 0 || b.before_task > static_cast<int>(sched.per_rank[r].size()) ||
          (k > 0 && b.before_task < sched.commits[r][k - 1].before_task))
        throw std::logic_error("pipeline rank " + std::to_string(r) + " commits a batch out of its tasks' order");
      batches_[r].push_back(&b);
      for (const auto& [list, sender] : {std::pair{&b.sends, true}, std::pair{&b.recvs, false}})
        for (const PassRef& p : *list) {
          auto& both = posted_[p];
          BatchRef& at = sender ? both.first : both.second;
          if (at.rank != -1) throw std::logic_error("a pipeline pass is posted twice on one side");
          at = {r, k};
        }
    }
  for (const auto& [p, both] : posted_)
    if (both.first.rank == -1 || both.second.rank == -1)
      throw std::logic_error("a pipeline pass is posted by its sender or its receiver only");
}

void PipelineRendezvous::record_heads(int r, std::vector<std::vector<sim::OpId>> last_ops) {
  if (active_) heads_[r].push_back(std::move(last_ops));
}

const CommitBatch* PipelineRendezvous::pending(int r) const {
  if (!active_ || cursor_[r] == batches_[r].size()) return nullptr;
  const CommitBatch* b = batches_[r][cursor_[r]];
  return b->before_task == emitted(r) ? b : nullptr;
}

const std::pair<PipelineRendezvous::BatchRef, PipelineRendezvous::BatchRef>& PipelineRendezvous::posts(
    const PassRef& pass) const {
  const auto it = posted_.find(pass);
  if (it == posted_.end()) throw std::logic_error("a pipeline send that no batch posts");
  return it->second;
}

std::vector<sim::OpId> PipelineRendezvous::posted_after(const PassRef& pass, size_t i) const {
  std::vector<sim::OpId> out;
  if (!active_) return out;
  const auto& [from, to] = posts(pass);
  for (const BatchRef& side : {from, to})
    for (const sim::OpId op : heads_[side.rank][batches_[side.rank][side.index]->before_task][i]) out.push_back(op);
  return out;
}

std::vector<PassRef> PipelineRendezvous::posted_after_passes(const PassRef& pass) const {
  std::vector<PassRef> out;
  if (!active_) return out;
  const auto& [from, to] = posts(pass);
  for (const BatchRef& side : {from, to}) {
    if (side.index == 0) continue;
    const CommitBatch& before = *batches_[side.rank][side.index - 1];
    if (before.before_task != batches_[side.rank][side.index]->before_task) continue;
    out.insert(out.end(), before.sends.begin(), before.sends.end());
    out.insert(out.end(), before.recvs.begin(), before.recvs.end());
  }
  return out;
}

}  // namespace cs::models
