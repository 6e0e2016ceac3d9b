// Stage-boundary sends as rendezvous, where the schedule commits its point-to-point batches
// (PipelineSchedule::commits: DualPipe, DualPipeV) and NCCL's kernels move them (p2p: sms).
//
// dualpipe.py posts each batch with dist.batch_isend_irecv when the rank reaches it and waits for
// every request before the next chunk computes (req.wait()). PyTorch makes the NCCL stream wait
// for the compute stream at the call, so a batch is posted once everything the rank ran before it
// has finished. NCCL's send cannot finish before the receiver takes the data: a boundary
// activation (tens of MB) is many times its staging buffer. So a transfer moves once the sender
// has posted its batch and the receiver the batch with its receive, and the task after each batch
// waits for all of the batch's transfers. A copy-engine copy (p2p: copy_engine, as our pipeline
// bench sends with cudaMemcpyPeerAsync) needs no receiver: it leaves when its data is ready, and
// only the task that reads it waits for it; so do the sends of schedules that record no batches.
//
// Left out: an NCCL kernel launched at its batch holds its SMs while it waits for the peer; here a
// transfer's kernel starts only once both sides posted, so the wait holds no SM.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "models/pipeline_schedule.h"
#include "sim/op_graph.h"

namespace cs::models {

class PipelineRendezvous {
 public:
  // Inactive (every query answers as for one-sided sends) unless `active` and the schedule
  // records batches. Throws std::logic_error if a pass is posted on one side only, or twice, or
  // a batch comes after a rank's last task (every rank's last chunk commits what is queued, and a
  // weight chunk, the last one of DualPipe's ranks, queues nothing).
  PipelineRendezvous(const PipelineSchedule& sched, bool active);
  bool active() const { return active_; }

  // Where rank r stands once it emitted its next task (and before its first): per GPU index, the
  // last ops of its streams. Call once per rank before emitting and after each task.
  void record_heads(int r, std::vector<std::vector<sim::OpId>> last_ops);
  // The batch posted before the task rank r emits next; null if none (or inactive).
  const CommitBatch* next_batch(int r) const;
  // Whether each transfer of that batch can be made: its pass produced (`produced`) and the other
  // side at (or past) the batch that posts it.
  template <typename Produced>
  bool next_batch_ready(int r, const Produced& produced) const;
  // The rank that receives `pass` (a pass of some batch).
  int receiver(const PassRef& pass) const { return posts(pass).second.rank; }
  // What the transfer of `pass` on GPU index i waits for besides its data: both sides' ops up to
  // the batches that post it. Empty when inactive.
  std::vector<sim::OpId> posted_after(const PassRef& pass, size_t i) const;

 private:
  const std::pair<TaskRef, TaskRef>& posts(const PassRef& pass) const;
  bool reached(const TaskRef& side) const { return static_cast<int>(heads_[side.rank].size()) > side.index; }

  bool active_ = false;
  std::map<PassRef, std::pair<TaskRef, TaskRef>> posted_;        // pass -> (sender's batch, receiver's batch)
  std::vector<std::map<int, const CommitBatch*>> batch_before_;  // per rank: task index -> batch
  // heads_[r][k][i]: GPU index i's last ops once rank r emitted k tasks (a batch before task k is
  // posted after them).
  std::vector<std::vector<std::vector<std::vector<sim::OpId>>>> heads_;
};

template <typename Produced>
bool PipelineRendezvous::next_batch_ready(int r, const Produced& produced) const {
  const CommitBatch* b = next_batch(r);
  if (!b) return true;
  for (const std::vector<PassRef>* list : {&b->sends, &b->recvs})
    for (const PassRef& p : *list)
      if (!produced(p) || !reached(posts(p).first) || !reached(posts(p).second)) return false;
  return true;
}

}  // namespace cs::models
