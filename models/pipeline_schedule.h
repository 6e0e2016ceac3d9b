// Pipeline schedules as data: for each pipeline rank, the ordered chunks it runs, from which the
// dependencies between chunks (on whichever ranks) follow. Generated, never drawn by hand:
//   1F1B               PipeDream-flush / Megatron's non-interleaved schedule
//   interleaved 1F1B   Megatron's virtual-pipeline schedule (v model chunks per rank)
//   ZB1P               ZB-H1 of Qi et al. 2023, backward split into B (inputs) and W (weights)
//   DualPipe           deepseek-ai/DualPipe dualpipe.py: two model copies in opposite directions
//   DualPipeV          deepseek-ai/DualPipe dualpipev.py: one model cut in half into a V
//
// Vocabulary. `stages` is PP as REFERENCE.md's bubble table uses it: the number of pipeline
// stages of one model copy for 1F1B, ZB1P, DualPipe and DualPipeV; for interleaved 1F1B the
// number of ranks (each holding `virtual_stages` model chunks, pp x v chunks in all). Ranks
// (devices): PP, except DualPipeV with PP/2. A "chunk" is one micro-batch through one model
// stage (a virtual stage for interleaved). DualPipe numbers micro-batches per direction: m/2
// of them in each, 0-based; `direction` 1 is the reverse copy, which enters at the last rank.
//
// Invalid sizes: schedule_problem() says what is wrong (the caller places the message, e.g. as
// a hw::UserError); make_schedule() throws std::invalid_argument with that text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cs::models {

enum class ScheduleKind : uint8_t { k1f1b, kInterleaved1f1b, kZb1p, kDualPipe, kDualPipeV };

// "1f1b", "interleaved", "zb1p", "dualpipe", "dualpipev".
const char* schedule_kind_name(ScheduleKind k);
// Accepts the names above and a few spellings ("interleaved-1f1b", "zb-h1", "dualpipe-v").
std::optional<ScheduleKind> schedule_kind_from_name(std::string_view name);
// "1f1b, interleaved, zb1p, dualpipe, dualpipev" (for messages).
std::string schedule_kind_list();

struct ScheduleParams {
  ScheduleKind kind = ScheduleKind::k1f1b;
  int stages = 1;          // PP (see above)
  int micro_batches = 1;   // per step, both directions together for DualPipe
  int virtual_stages = 1;  // model chunks per rank: interleaved only (2 to 26), else 1
};

// Empty when the sizes are valid, else what is wrong. Constraints (from the schedules' sources):
// all: stages, micro-batches >= 1; interleaved: v >= 2 and micro-batches a multiple of stages
// (Megatron); ZB1P: micro-batches >= stages; DualPipe: stages even, micro-batches even and
// >= 2 x stages (dualpipe.py asserts num_chunks % 2 == 0 and num_chunks >= num_ranks * 2);
// DualPipeV: stages even, micro-batches >= stages (dualpipev.py: num_chunks >= num_ranks * 2).
std::string schedule_problem(const ScheduleParams& p);

// One micro-batch's pass through one model stage of one direction.
struct ChunkRef {
  int micro_batch = 0;  // per direction for DualPipe
  int stage = 0;        // model stage (virtual stage for interleaved), 0-based along its direction
  int direction = 0;    // DualPipe: 0 forward-direction copy, 1 reverse copy; else 0
  auto operator<=>(const ChunkRef&) const = default;
};

struct ChunkTask {
  enum Kind : uint8_t {
    kForward,
    kBackward,          // full backward: input and weight gradients together (B = B_input + W)
    kBackwardInput,     // gradient of the inputs only; its kBackwardWeight runs later
    kBackwardWeight,    // gradient of the weights of an earlier kBackwardInput
    kForwardBackward,   // DualPipe's overlapped pair: forward of `chunk`, full backward of `bwd`
  };
  Kind kind = kForward;
  ChunkRef chunk;  // the chunk (kForwardBackward: its forward half)
  ChunkRef bwd;    // kForwardBackward only: the backward half
  bool operator==(const ChunkTask&) const = default;
};

// What a task makes available to others: a chunk's forward output, its input gradient (sent
// upstream), its weight gradient.
enum class ChunkPass : uint8_t { kForward, kInputGrad, kWeightGrad };
struct PassRef {
  ChunkPass pass = ChunkPass::kForward;
  ChunkRef chunk;
  auto operator<=>(const PassRef&) const = default;
};

// A model stage held by a rank: its parameters live there.
struct StageRef {
  int stage = 0;
  int direction = 0;
  auto operator<=>(const StageRef&) const = default;
};

// Where a task sits: rank and position in that rank's order.
struct TaskRef {
  int rank = 0;
  int index = 0;
  auto operator<=>(const TaskRef&) const = default;
};

// One batch of a rank's point-to-point communication, as its source posts it: dualpipe.py's
// _commit_and_wait_comm (the sends and receives queued since the rank's last commit) or one of
// Megatron's p2p calls (send_forward_recv_backward, ...). It is posted (one dist.batch_isend_irecv)
// when the rank reaches task `before_task` (per_rank[rank].size(): after its last task), after the
// rank's earlier batches at that point, and all of it is waited for before the task computes. A
// receive may be posted a task ahead of the one that reads it, and a send later than the task that
// made it.
struct CommitBatch {
  int before_task = 0;
  std::vector<PassRef> sends, recvs;  // what the rank sends (its passes) and receives (others')
  bool operator==(const CommitBatch&) const = default;
};

struct PipelineSchedule {
  ScheduleParams params;
  int ranks = 1;
  int model_stages = 1;      // stages of one model copy: pp x v (interleaved), else pp
  int directions = 1;        // 2 for DualPipe (two model copies)
  int micro_batches_per_direction = 1;
  std::vector<std::vector<ChunkTask>> per_rank;  // each rank's tasks in execution order
  // Per rank, its point-to-point batches in order, where the schedule's source posts and waits for
  // them in a way recorded here (DualPipe, DualPipeV, 1F1B, interleaved 1F1B); empty for ZB1P,
  // whose sends leave as soon as their data is ready.
  std::vector<std::vector<CommitBatch>> commits;

  // The rank that holds `stage` of `direction`.
  int rank_of(int stage, int direction) const;
  // The stages whose parameters `rank` holds: by direction, then down the model (DualPipeV: its
  // stage r, then pp-1-r; interleaved: chunk 0, 1, ...).
  std::vector<StageRef> rank_stages(int rank) const;
};

// Throws std::invalid_argument (schedule_problem's text) on invalid sizes.
PipelineSchedule make_schedule(const ScheduleParams& p);

// Dependencies as data. A forward needs the previous stage's forward of its micro-batch; a
// backward (full or input) needs its own forward and the next stage's input gradient; a weight
// backward needs its own input backward. A kForwardBackward needs the union of its halves'.
std::vector<PassRef> task_needs(const PipelineSchedule& s, const ChunkTask& t);
std::vector<PassRef> task_provides(const ChunkTask& t);
// For each rank and task, the tasks (on any rank, the rank's own earlier ones included) it
// waits for. Throws std::logic_error when a needed pass is produced by no task or by two.
std::vector<std::vector<std::vector<TaskRef>>> task_dependencies(const PipelineSchedule& s);

// Micro-batch activations in flight on a rank, at chunk granularity: a forward adds one to its
// stage, an input (or full) backward releases it; a weight backward keeps only the inputs of its
// weight GEMMs, which the REFERENCE.md table does not count, and neither does this. An overlapped
// pair counts its forward before its backward releases anything (the two run together).
struct ActivationPeak {
  int total = 0;                                    // peak of the sum over the rank's stages
  std::vector<std::pair<StageRef, int>> per_stage;  // each stage's own peak, in rank_stages order
};
ActivationPeak activation_peak(const PipelineSchedule& s, int rank);

// The moments when a rank's activations can peak, counted as activation_peak counts: right after
// each task that adds a forward (an overlapped pair before its backward releases), the chunks in
// flight of each stage the rank holds, indexed like rank_stages(rank). Stages differ in bytes
// (embedding, head, MTP), so the peak in bytes is at one of these moments; repeated moments and
// those another one covers stage by stage are left out, in first-seen order otherwise.
std::vector<std::vector<int>> activation_moments(const PipelineSchedule& s, int rank);

// Empty when valid, else the first defect: every chunk's forward, input gradient and weight
// gradient produced exactly once and on the rank that holds its stage; on each rank a chunk's
// forward before its backward and its input backward before its weight backward; every
// dependency produced by some task; the ranks' orders free of deadlock (run in order, each task
// waiting only for what it needs, every task finishes).
std::string schedule_defect(const PipelineSchedule& s);

// "F3", "B3", "I3" (input backward), "W3", "F5B1"; the second model chunk of a DualPipe(V) rank
// gets a prime: DualPipe's reverse direction, DualPipeV's stage on the way back up ("F3'",
// "F5'B1"). Interleaved tasks add the rank's model chunk as a letter: "F3a"
// (chunk 0, stage r), "F3b" (chunk 1, stage pp + r), ...
std::string task_token(const PipelineSchedule& s, const ChunkTask& t);

}  // namespace cs::models
