// Stage-boundary sends as rendezvous, where the schedule records how its source batches its
// point-to-point operations (PipelineSchedule::commits: DualPipe, DualPipeV, 1F1B, interleaved 1F1B) and NCCL's
// kernels move them (p2p: sms).
//
// dualpipe.py posts each batch with dist.batch_isend_irecv when the rank reaches it and waits for
// every request before the next chunk computes (req.wait()); Megatron's 1F1B and interleaved 1F1B
// do the same per call (send_forward_recv_backward, send_forward_backward_recv_forward_backward and
// the like), one call after the other. PyTorch makes the NCCL
// stream wait for the compute stream at the call, so a batch is posted once everything the rank
// ran before it has finished, and once the rank's earlier batches at that point have. NCCL's send
// cannot finish before the receiver takes the data: a boundary activation (tens of MB) is many
// times its staging buffer. So a transfer moves once the sender has posted its batch and the
// receiver the batch with its receive, and the task after a batch (or the optimizer step, after
// a rank's last batch) waits for all of its transfers. A copy-engine copy (p2p: copy_engine, as
// our pipeline bench sends with cudaMemcpyPeerAsync) needs no receiver: it leaves when its data is
// ready, and only the task that reads it waits for it; so do the sends of schedules that record
// no batches.
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
  // records batches. Throws std::logic_error if a pass is posted on one side only or twice, or a
  // rank's batches are out of its tasks' order.
  PipelineRendezvous(const PipelineSchedule& sched, bool active);
  bool active() const { return active_; }

  // Where rank r stands once it emitted its next task (and before its first): per GPU index, the
  // last ops of its streams. Call once per rank before emitting and after each task.
  void record_heads(int r, std::vector<std::vector<sim::OpId>> last_ops);
  // Rank r's first batch not yet passed, if it is posted where the rank stands now (before the
  // task it emits next, or after its last); null otherwise (or inactive).
  const CommitBatch* pending(int r) const;
  // Whether the pending batch's transfers can all be made: each pass produced (`produced`) and the
  // other side at the batch that posts it (or past it).
  template <typename Produced>
  bool pending_ready(int r, const Produced& produced) const;
  // Marks the pending batch of rank r passed: its transfers are made.
  void pass(int r) { ++cursor_[r]; }
  // Whether every batch of rank r is passed.
  bool all_passed(int r) const { return !active_ || cursor_[r] == batches_[r].size(); }
  // The rank that receives `pass` (a pass of some batch).
  int receiver(const PassRef& pass) const { return posts(pass).second.rank; }
  // What the transfer of `pass` on GPU index i waits for besides its data: both sides' ops up to
  // the batches that post it. Empty when inactive.
  std::vector<sim::OpId> posted_after(const PassRef& pass, size_t i) const;
  // The passes of the batches each side posted just before the one with `pass` at the same point:
  // their transfers come first. Empty when inactive.
  std::vector<PassRef> posted_after_passes(const PassRef& pass) const;

 private:
  struct BatchRef {
    int rank = -1;
    size_t index = 0;  // in the rank's commits
  };
  const std::pair<BatchRef, BatchRef>& posts(const PassRef& pass) const;
  int emitted(int r) const { return static_cast<int>(heads_[r].size()) - 1; }
  bool reached(const BatchRef& b) const {
    return emitted(b.rank) >= batches_[b.rank][b.index]->before_task && cursor_[b.rank] >= b.index;
  }

  bool active_ = false;
  std::vector<std::vector<const CommitBatch*>> batches_;     // per rank, in order
  std::vector<size_t> cursor_;                               // per rank: batches passed
  std::map<PassRef, std::pair<BatchRef, BatchRef>> posted_;  // pass -> (sender's batch, receiver's)
  // heads_[r][k][i]: GPU index i's last ops once rank r emitted k tasks (a batch before task k is
  // posted after them).
  std::vector<std::vector<std::vector<std::vector<sim::OpId>>>> heads_;
};

template <typename Produced>
bool PipelineRendezvous::pending_ready(int r, const Produced& produced) const {
  const CommitBatch* b = pending(r);
  if (!b) return false;
  for (const std::vector<PassRef>* list : {&b->sends, &b->recvs})
    for (const PassRef& p : *list)
      if (!produced(p) || !reached(posts(p).first) || !reached(posts(p).second)) return false;
  return true;
}

}  // namespace cs::models
