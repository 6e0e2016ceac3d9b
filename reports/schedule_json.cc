#include "reports/schedule_json.h"

#include <stdexcept>

namespace cs::reports {

namespace {

const char* kind_name(models::ChunkTask::Kind k) {
  switch (k) {
    case models::ChunkTask::kForward: return "forward";
    case models::ChunkTask::kBackward: return "backward";
    case models::ChunkTask::kBackwardInput: return "backward_input";
    case models::ChunkTask::kBackwardWeight: return "backward_weight";
    case models::ChunkTask::kForwardBackward: return "forward_backward";
  }
  throw std::logic_error("unknown chunk task kind");
}

const char* pass_name(models::ChunkPass p) {
  switch (p) {
    case models::ChunkPass::kForward: return "forward";
    case models::ChunkPass::kInputGrad: return "input_grad";
    case models::ChunkPass::kWeightGrad: return "weight_grad";
  }
  throw std::logic_error("unknown chunk pass");
}

nlohmann::json chunk_json(const models::ChunkRef& c) {
  return {{"micro_batch", c.micro_batch}, {"stage", c.stage}, {"direction", c.direction}};
}

nlohmann::json passes_json(const std::vector<models::PassRef>& ps) {
  nlohmann::json out = nlohmann::json::array();
  for (const models::PassRef& p : ps) {
    nlohmann::json j = chunk_json(p.chunk);
    j["pass"] = pass_name(p.pass);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

nlohmann::json schedule_json(const models::PipelineSchedule& s) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["kind"] = models::schedule_kind_name(s.params.kind);
  j["stages"] = s.params.stages;
  j["micro_batches"] = s.params.micro_batches;
  j["virtual_stages"] = s.params.virtual_stages;
  j["ranks"] = s.ranks;
  j["model_stages"] = s.model_stages;
  j["directions"] = s.directions;
  j["micro_batches_per_direction"] = s.micro_batches_per_direction;
  nlohmann::json held = nlohmann::json::array();
  nlohmann::json tasks = nlohmann::json::array();
  for (int r = 0; r < s.ranks; ++r) {
    nlohmann::json stages = nlohmann::json::array();
    for (const models::StageRef& st : s.rank_stages(r)) stages.push_back({{"stage", st.stage}, {"direction", st.direction}});
    held.push_back(std::move(stages));
    nlohmann::json list = nlohmann::json::array();
    for (const models::ChunkTask& t : s.per_rank[static_cast<size_t>(r)]) {
      nlohmann::json tj;
      tj["token"] = models::task_token(s, t);
      tj["kind"] = kind_name(t.kind);
      tj["chunk"] = chunk_json(t.chunk);
      if (t.kind == models::ChunkTask::kForwardBackward) tj["bwd"] = chunk_json(t.bwd);
      tj["needs"] = passes_json(models::task_needs(s, t));
      tj["provides"] = passes_json(models::task_provides(t));
      list.push_back(std::move(tj));
    }
    tasks.push_back(std::move(list));
  }
  j["rank_stages"] = std::move(held);
  j["tasks"] = std::move(tasks);
  nlohmann::json batches = nlohmann::json::array();
  for (int r = 0; r < s.ranks; ++r) {
    nlohmann::json list = nlohmann::json::array();
    if (static_cast<size_t>(r) < s.commits.size())
      for (const models::CommitBatch& b : s.commits[static_cast<size_t>(r)])
        list.push_back(
            {{"before_task", b.before_task}, {"sends", passes_json(b.sends)}, {"recvs", passes_json(b.recvs)}});
    batches.push_back(std::move(list));
  }
  j["batches"] = std::move(batches);
  return j;
}

}  // namespace cs::reports
