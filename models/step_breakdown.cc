#include "models/step_breakdown.h"

#include <algorithm>
#include <stdexcept>

namespace cs::models {

namespace {

bool has_backward(ChunkTask::Kind k) {
  return k == ChunkTask::kBackward || k == ChunkTask::kBackwardInput || k == ChunkTask::kForwardBackward;
}
bool has_forward(ChunkTask::Kind k) { return k == ChunkTask::kForward || k == ChunkTask::kForwardBackward; }

struct Interval {
  sim::Time start, end;
  bool any = false;
  void add(const sim::OpTiming& t) {
    start = any ? std::min(start, t.start) : t.start;
    end = any ? std::max(end, t.end) : t.end;
    any = true;
  }
};

}  // namespace

StepBreakdown step_breakdown(const PipelineRecord& rec, const sim::OpGraph& g, const std::vector<sim::OpTiming>& timing,
                             sim::Time step) {
  StepBreakdown out;
  out.schedule = rec.schedule;
  out.step = step;
  std::vector<int> rank_of_stream(g.streams().size(), -1);
  for (int r = 0; r < rec.ranks; ++r)
    for (uint32_t s : rec.streams[r]) rank_of_stream[s] = r;
  std::vector<std::vector<const ChunkSpan*>> spans(rec.ranks);
  for (const ChunkSpan& s : rec.spans) spans.at(s.rank).push_back(&s);

  for (int r = 0; r < rec.ranks; ++r) {
    RankStepTimes t;
    t.rank = r;
    const auto& mine = spans[r];
    size_t first_bwd = mine.size(), steady_end = 0;  // steady: [first_bwd, steady_end)
    for (size_t i = 0; i < mine.size(); ++i) {
      if (has_backward(mine[i]->kind) && first_bwd == mine.size()) first_bwd = i;
      if (has_forward(mine[i]->kind)) steady_end = i + 1;
    }
    // 1F1B pairs a forward with a backward: when the first backward is a lone one, the forward
    // just before it opens the steady phase (Megatron's pp-1-r warm-up forwards), and a lone last
    // forward takes its backward along.
    if (first_bwd < mine.size() && first_bwd > 0 && mine[first_bwd]->kind != ChunkTask::kForwardBackward &&
        mine[first_bwd - 1]->kind == ChunkTask::kForward)
      --first_bwd;
    if (steady_end > 0 && mine[steady_end - 1]->kind == ChunkTask::kForward) {
      size_t j = steady_end;
      while (j < mine.size() && !has_backward(mine[j]->kind)) ++j;
      if (j < mine.size()) steady_end = j + 1;
    }
    RankChunkTimes c;
    c.rank = r;
    sim::Time cursor;
    // Adds the interval's time past the cursor to `into` and returns it; the gap before it is bubble.
    const auto account = [&](const Interval& iv, sim::Time& into) {
      if (!iv.any) return sim::Time();
      const sim::Time s = std::max(iv.start, cursor);
      if (s > cursor) t.bubble += s - cursor;
      const sim::Time ran = iv.end > s ? iv.end - s : sim::Time();
      into += ran;
      cursor = std::max(cursor, iv.end);
      return ran;
    };
    for (size_t i = 0; i < mine.size(); ++i) {
      Interval iv;
      for (uint32_t op = mine[i]->first_op; op < mine[i]->end_op; ++op)
        if (rank_of_stream[g.ops()[op].stream] == r) iv.add(timing[op]);
      const ChunkTask::Kind k = mine[i]->kind;
      sim::Time& into = i < first_bwd                     ? t.warmup_forward
                        : i < steady_end                     ? t.steady
                        : k == ChunkTask::kBackwardWeight ? t.weight_backward
                                                          : t.input_backward;
      const sim::Time ran = account(iv, into);
      (k == ChunkTask::kForward           ? c.forward
       : k == ChunkTask::kForwardBackward ? c.forward_backward
       : k == ChunkTask::kBackwardWeight  ? c.weight
                                          : c.backward) += ran;
    }
    t.pipeline_end = cursor;
    if (r < static_cast<int>(rec.optimizer.size())) {
      // Op by op, in start order: waiting for a peer's gradients between them is bubble.
      std::vector<uint32_t> ops = rec.optimizer[r];
      std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) { return timing[a].start < timing[b].start; });
      for (uint32_t op : ops) {
        Interval iv;
        iv.add(timing[op]);
        account(iv, t.optimizer);
      }
    }
    if (step < cursor) throw std::logic_error("step breakdown: a rank ran past the step's end");
    t.bubble += step - cursor;
    c.optimizer = t.optimizer;
    c.bubble = t.bubble;
    out.ranks.push_back(t);
    out.by_chunk.push_back(c);
  }
  // Means in picoseconds, rounded down: exact sums matter per rank, not for the mean.
  const auto n = static_cast<int64_t>(std::max<size_t>(out.ranks.size(), 1));
  out.mean.rank = -1;
  for (const RankStepTimes& t : out.ranks) {
    out.mean.warmup_forward += t.warmup_forward;
    out.mean.steady += t.steady;
    out.mean.input_backward += t.input_backward;
    out.mean.weight_backward += t.weight_backward;
    out.mean.optimizer += t.optimizer;
    out.mean.bubble += t.bubble;
    out.mean.pipeline_end += t.pipeline_end;
  }
  RankChunkTimes& cm = out.by_chunk_mean;
  cm.rank = -1;
  for (const RankChunkTimes& c : out.by_chunk) {
    cm.forward += c.forward;
    cm.backward += c.backward;
    cm.weight += c.weight;
    cm.forward_backward += c.forward_backward;
    cm.optimizer += c.optimizer;
    cm.bubble += c.bubble;
  }
  for (sim::Time* p : {&out.mean.warmup_forward, &out.mean.steady, &out.mean.input_backward, &out.mean.weight_backward,
                       &out.mean.optimizer, &out.mean.bubble, &out.mean.pipeline_end, &cm.forward, &cm.backward,
                       &cm.weight, &cm.forward_backward, &cm.optimizer, &cm.bubble})
    *p = sim::Time::ps(p->ps_count() / n);
  return out;
}

}  // namespace cs::models
