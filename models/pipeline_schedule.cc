#include "models/pipeline_schedule.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>

#include "models/schedule_generators.h"

namespace cs::models {
namespace {

// Sizes beyond these make grids and graphs nobody can read or wait for; they are input errors.
constexpr int kMaxStages = 1024;
constexpr int kMaxMicroBatches = 65536;
constexpr int kMaxVirtual = 26;             // chunk letters a..z in task_token
constexpr int64_t kMaxChunks = 4'000'000;  // micro-batches x model stages

struct KindName {
  const char* name;
  ScheduleKind kind;
};
// The first spelling of each kind is its name; the others are accepted.
constexpr KindName kNames[] = {
    {"1f1b", ScheduleKind::k1f1b},           {"interleaved", ScheduleKind::kInterleaved1f1b},
    {"zb1p", ScheduleKind::kZb1p},           {"dualpipe", ScheduleKind::kDualPipe},
    {"dualpipev", ScheduleKind::kDualPipeV}, {"interleaved-1f1b", ScheduleKind::kInterleaved1f1b},
    {"zb-h1", ScheduleKind::kZb1p},          {"zbh1", ScheduleKind::kZb1p},
    {"dualpipe-v", ScheduleKind::kDualPipeV},
};

}  // namespace

const char* schedule_kind_name(ScheduleKind k) {
  for (const KindName& n : kNames)
    if (n.kind == k) return n.name;
  return "?";
}

std::optional<ScheduleKind> schedule_kind_from_name(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const KindName& n : kNames)
    if (lower == n.name) return n.kind;
  return std::nullopt;
}

std::string schedule_kind_list() { return "1f1b, interleaved, zb1p, dualpipe, dualpipev"; }

std::string schedule_problem(const ScheduleParams& p) {
  const std::string kind = schedule_kind_name(p.kind);
  if (p.stages < 1 || p.stages > kMaxStages)
    return "the number of stages must be 1 to " + std::to_string(kMaxStages) + ", not " + std::to_string(p.stages);
  if (p.micro_batches < 1 || p.micro_batches > kMaxMicroBatches)
    return "the number of micro-batches must be 1 to " + std::to_string(kMaxMicroBatches) + ", not " +
           std::to_string(p.micro_batches);
  const bool interleaved = p.kind == ScheduleKind::kInterleaved1f1b;
  if (interleaved && (p.virtual_stages < 2 || p.virtual_stages > kMaxVirtual))
    return "interleaved 1F1B needs 2 to " + std::to_string(kMaxVirtual) + " virtual stages per rank, not " +
           std::to_string(p.virtual_stages) + " (with 1 it is plain 1f1b)";
  if (!interleaved && p.virtual_stages != 1)
    return "virtual stages apply to the interleaved schedule only; " + kind + " has 1 per rank, not " +
           std::to_string(p.virtual_stages);
  if (static_cast<int64_t>(p.micro_batches) * p.stages * p.virtual_stages > kMaxChunks)
    return "micro-batches x stages x virtual stages must be at most " + std::to_string(kMaxChunks);
  const std::string sizes =
      std::to_string(p.stages) + " stages and " + std::to_string(p.micro_batches) + " micro-batches";
  switch (p.kind) {
    case ScheduleKind::k1f1b:
      return "";
    case ScheduleKind::kInterleaved1f1b:
      if (p.micro_batches % p.stages != 0)
        return "interleaved 1F1B needs the micro-batches to be a multiple of the stages (Megatron "
               "runs them in groups of pp), not " + sizes;
      return "";
    case ScheduleKind::kZb1p:
      if (p.micro_batches < p.stages)
        return "ZB1P (ZB-H1) needs at least as many micro-batches as stages, not " + sizes;
      return "";
    case ScheduleKind::kDualPipe:
      if (p.stages % 2 != 0) return "DualPipe needs an even number of stages, not " + std::to_string(p.stages);
      if (p.micro_batches % 2 != 0)
        return "DualPipe needs an even number of micro-batches (half go each way), not " +
               std::to_string(p.micro_batches);
      if (p.micro_batches < 2 * p.stages)
        return "DualPipe needs at least twice as many micro-batches as stages (dualpipe.py: "
               "num_chunks >= num_ranks * 2), not " + sizes;
      return "";
    case ScheduleKind::kDualPipeV:
      if (p.stages % 2 != 0)
        return "DualPipeV needs an even number of stages (two per device), not " + std::to_string(p.stages);
      if (p.micro_batches < p.stages)
        return "DualPipeV needs at least as many micro-batches as stages (dualpipev.py: num_chunks "
               ">= num_ranks * 2 on stages/2 ranks), not " + sizes;
      return "";
  }
  return "unknown schedule kind";
}

PipelineSchedule make_schedule(const ScheduleParams& p) {
  if (std::string problem = schedule_problem(p); !problem.empty()) throw std::invalid_argument(problem);
  PipelineSchedule s;
  s.params = p;
  s.ranks = p.kind == ScheduleKind::kDualPipeV ? p.stages / 2 : p.stages;
  s.model_stages = p.stages * p.virtual_stages;
  s.directions = p.kind == ScheduleKind::kDualPipe ? 2 : 1;
  s.micro_batches_per_direction = p.micro_batches / s.directions;
  switch (p.kind) {
    case ScheduleKind::k1f1b:
      s.per_rank = detail::one_f_one_b(p.stages, p.micro_batches, &s.commits);
      break;
    case ScheduleKind::kInterleaved1f1b:
      s.per_rank = detail::interleaved_1f1b(p.stages, p.micro_batches, p.virtual_stages, &s.commits);
      break;
    case ScheduleKind::kZb1p: s.per_rank = detail::zb_h1(p.stages, p.micro_batches); break;
    case ScheduleKind::kDualPipe:
      s.per_rank = detail::dualpipe(p.stages, p.micro_batches, &s.commits);
      break;
    case ScheduleKind::kDualPipeV:
      s.per_rank = detail::dualpipe_v(p.stages, p.micro_batches, &s.commits);
      break;
  }
  return s;
}

int PipelineSchedule::rank_of(int stage, int direction) const {
  const int pp = params.stages;
  switch (params.kind) {
    case ScheduleKind::kInterleaved1f1b: return stage % pp;
    case ScheduleKind::kDualPipe: return direction == 0 ? stage : pp - 1 - stage;
    case ScheduleKind::kDualPipeV: return stage < pp / 2 ? stage : pp - 1 - stage;
    default: return stage;
  }
}

std::vector<StageRef> PipelineSchedule::rank_stages(int rank) const {
  const int pp = params.stages;
  switch (params.kind) {
    case ScheduleKind::kInterleaved1f1b: {
      std::vector<StageRef> out;
      for (int c = 0; c < params.virtual_stages; ++c) out.push_back({c * pp + rank, 0});
      return out;
    }
    case ScheduleKind::kDualPipe: return {{rank, 0}, {pp - 1 - rank, 1}};
    case ScheduleKind::kDualPipeV: return {{rank, 0}, {pp - 1 - rank, 0}};
    default: return {{rank, 0}};
  }
}

std::vector<PassRef> task_needs(const PipelineSchedule& s, const ChunkTask& t) {
  std::vector<PassRef> out;
  const auto forward_needs = [&](const ChunkRef& c) {
    if (c.stage > 0) out.push_back({ChunkPass::kForward, {c.micro_batch, c.stage - 1, c.direction}});
  };
  const auto backward_needs = [&](const ChunkRef& c) {
    out.push_back({ChunkPass::kForward, c});
    if (c.stage + 1 < s.model_stages)
      out.push_back({ChunkPass::kInputGrad, {c.micro_batch, c.stage + 1, c.direction}});
  };
  switch (t.kind) {
    case ChunkTask::kForward: forward_needs(t.chunk); break;
    case ChunkTask::kBackward:
    case ChunkTask::kBackwardInput: backward_needs(t.chunk); break;
    case ChunkTask::kBackwardWeight: out.push_back({ChunkPass::kInputGrad, t.chunk}); break;
    case ChunkTask::kForwardBackward:
      forward_needs(t.chunk);
      backward_needs(t.bwd);
      break;
  }
  return out;
}

std::vector<PassRef> task_provides(const ChunkTask& t) {
  switch (t.kind) {
    case ChunkTask::kForward: return {{ChunkPass::kForward, t.chunk}};
    case ChunkTask::kBackward: return {{ChunkPass::kInputGrad, t.chunk}, {ChunkPass::kWeightGrad, t.chunk}};
    case ChunkTask::kBackwardInput: return {{ChunkPass::kInputGrad, t.chunk}};
    case ChunkTask::kBackwardWeight: return {{ChunkPass::kWeightGrad, t.chunk}};
    case ChunkTask::kForwardBackward:
      return {{ChunkPass::kForward, t.chunk}, {ChunkPass::kInputGrad, t.bwd}, {ChunkPass::kWeightGrad, t.bwd}};
  }
  return {};
}

std::vector<std::vector<std::vector<TaskRef>>> task_dependencies(const PipelineSchedule& s) {
  std::map<PassRef, TaskRef> producer;
  for (int r = 0; r < static_cast<int>(s.per_rank.size()); ++r)
    for (int i = 0; i < static_cast<int>(s.per_rank[r].size()); ++i)
      for (const PassRef& p : task_provides(s.per_rank[r][i]))
        if (!producer.emplace(p, TaskRef{r, i}).second)
          throw std::logic_error("schedule: a chunk pass is produced twice (rank " + std::to_string(r) + ")");
  std::vector<std::vector<std::vector<TaskRef>>> out(s.per_rank.size());
  for (size_t r = 0; r < s.per_rank.size(); ++r) {
    out[r].resize(s.per_rank[r].size());
    for (size_t i = 0; i < s.per_rank[r].size(); ++i)
      for (const PassRef& p : task_needs(s, s.per_rank[r][i])) {
        const auto it = producer.find(p);
        if (it == producer.end())
          throw std::logic_error("schedule: rank " + std::to_string(static_cast<int>(r)) + " task " +
                                 task_token(s, s.per_rank[r][i]) + " needs a pass no task produces");
        out[r][i].push_back(it->second);
      }
  }
  return out;
}

namespace {

// Calls `at(live)` after each forward a rank's tasks add, `live` the chunks in flight per held
// stage (rank_stages order); activation_peak's counting rules.
template <typename F>
void walk_forwards(const PipelineSchedule& s, int rank, F at) {
  const std::vector<StageRef> held = s.rank_stages(rank);
  std::vector<int> live(held.size(), 0);
  const auto add = [&](const ChunkRef& c, int delta) {
    const auto it = std::find(held.begin(), held.end(), StageRef{c.stage, c.direction});
    if (it == held.end()) return false;  // a misplaced chunk (schedule_defect reports it)
    live[static_cast<size_t>(it - held.begin())] += delta;
    return true;
  };
  for (const ChunkTask& t : s.per_rank[rank]) {
    if ((t.kind == ChunkTask::kForward || t.kind == ChunkTask::kForwardBackward) && add(t.chunk, +1)) at(live);
    if (t.kind == ChunkTask::kBackward || t.kind == ChunkTask::kBackwardInput) add(t.chunk, -1);
    if (t.kind == ChunkTask::kForwardBackward) add(t.bwd, -1);
  }
}

}  // namespace

ActivationPeak activation_peak(const PipelineSchedule& s, int rank) {
  ActivationPeak out;
  for (const StageRef& h : s.rank_stages(rank)) out.per_stage.push_back({h, 0});
  // Counts only rise at a forward, so the peaks are peaks over these moments.
  walk_forwards(s, rank, [&](const std::vector<int>& live) {
    int total = 0;
    for (size_t k = 0; k < live.size(); ++k) {
      out.per_stage[k].second = std::max(out.per_stage[k].second, live[k]);
      total += live[k];
    }
    out.total = std::max(out.total, total);
  });
  return out;
}

std::vector<std::vector<int>> activation_moments(const PipelineSchedule& s, int rank) {
  std::vector<std::vector<int>> seen;
  std::set<std::vector<int>> known;
  walk_forwards(s, rank, [&](const std::vector<int>& live) {
    if (known.insert(live).second) seen.push_back(live);
  });
  const auto covers = [](const std::vector<int>& a, const std::vector<int>& b) {  // a >= b everywhere
    for (size_t k = 0; k < a.size(); ++k)
      if (a[k] < b[k]) return false;
    return true;
  };
  std::vector<std::vector<int>> out;
  for (size_t i = 0; i < seen.size(); ++i) {
    bool covered = false;
    for (size_t j = 0; j < seen.size() && !covered; ++j) covered = j != i && covers(seen[j], seen[i]);
    if (!covered) out.push_back(seen[i]);
  }
  return out;
}

std::string task_token(const PipelineSchedule& s, const ChunkTask& t) {
  const auto id = [&](const ChunkRef& c) {
    std::string out = std::to_string(c.micro_batch);
    const bool second = c.direction == 1 || (s.params.kind == ScheduleKind::kDualPipeV && c.stage >= s.params.stages / 2);
    if (second) out += '\'';
    if (s.params.kind == ScheduleKind::kInterleaved1f1b) out += static_cast<char>('a' + c.stage / s.params.stages);
    return out;
  };
  // One char, then appends: g++ 12 warns falsely (-Wrestrict) on "F" + string and on string = "F".
  char letter = 'F';
  if (t.kind == ChunkTask::kBackward) letter = 'B';
  if (t.kind == ChunkTask::kBackwardInput) letter = 'I';
  if (t.kind == ChunkTask::kBackwardWeight) letter = 'W';
  std::string out(1, letter);
  out += id(t.chunk);
  if (t.kind == ChunkTask::kForwardBackward) out.append("B").append(id(t.bwd));
  return out;
}

}  // namespace cs::models
