// A whole pipeline step of a model on the engine: every rank's chunks in its schedule's order,
// stage boundaries as sends, DualPipe's overlapped pairs interleaved.
#include <catch2/catch.hpp>

#include <string>

#include "hw/user_error.h"
#include "models/model_workload.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"

using namespace cs::models;

namespace {

std::string scenario(const std::string& pipeline, const std::string& extra = "") {
  return R"(schema_version: 1
name: pipe
cluster:
  gpu: h800
  gpus: 8
  sm_partitions: {compute: 112, comm: 20}
  fabric: {kind: switch, link_bw_GBps: 160, link_lat_ns: 3330}
workload:
  kind: model
  model: {name: tiny-moe, source: test, layers: 8, hidden: 1024, vocab: 8000,
          attention: {kind: mla, heads: 8, q_lora_rank: 256, kv_lora_rank: 128, qk_nope_head_dim: 64,
                      qk_rope_head_dim: 32, v_head_dim: 64},
          ffn: {activation: swiglu, hidden: 2048},
          moe: {first_dense_layers: 1, routed_experts: 16, shared_experts: 1, expert_hidden: 256, top_k: 4,
                groups: 2, groups_per_token: 2, gating: sigmoid}}
  layout: {pp: 4, dp: 2, ep: 2}
  seq_len: 1024
  pipeline: )" + pipeline + "\n" + extra;
}

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "p.yaml");
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

size_t count_label(const OpWorkload& w, const std::string& label) {
  size_t n = 0;
  for (const auto& op : w.graph.ops()) n += w.graph.label(op) == label;
  return n;
}

}  // namespace

TEST_CASE("pipeline workload: every schedule runs the whole step, with sends at stage boundaries", "[pipeline_workload]") {
  double makespan_ms[3] = {};
  int k = 0;
  for (const char* kind : {"1f1b", "zb1p", "dualpipe"}) {
    INFO(kind);
    const Scenario sc = load_scenario_text(scenario(std::string("{schedule: ") + kind + ", micro_batches: 8}"), "p.yaml");
    const OpWorkload w = build_op_workload(sc);
    // 8 GPUs run (4 ranks x 2 replicas). Each micro-batch crosses 3 boundaries forward and 3
    // backward on each of the 2 replicas; DualPipe's 8 are 4 per direction, each a full pass.
    CHECK(w.engine_streams[0].size() == 8);
    CHECK(count_label(w, "pp.send_activation") == 3 * 8 * 2);
    CHECK(count_label(w, "pp.send_gradient") == 3 * 8 * 2);
    // Every micro-batch's forward and backward of every layer ran on its GPUs: 8 micro-batches x
    // 2 replicas of each layer's o_proj forward and its dgrad.
    CHECK(count_label(w, "L4.attn.o_proj") == 8 * 2);
    CHECK(count_label(w, "L4.attn.o_proj.dgrad") == 8 * 2);
    const RunResult r = run_scenario(sc, w);  // a deadlock would be a UserError
    REQUIRE(r.model);
    CHECK(r.model->pipeline == kind);
    CHECK(r.model->simulated_gpus == 8);
    makespan_ms[k++] = r.makespan.to_ms();
  }
  // Splitting the backward fills bubbles; DualPipe's two directions and overlapped pairs fill more.
  CHECK(makespan_ms[1] < makespan_ms[0]);
  CHECK(makespan_ms[2] < makespan_ms[1]);
}

TEST_CASE("pipeline workload: sizes and keys are checked", "[pipeline_workload]") {
  CHECK(error_of(scenario("{schedule: dualpipe, micro_batches: 6}")).find("p.yaml:18:13: ") == 0);
  CHECK(error_of(scenario("{schedule: dualpipe, micro_batches: 6}")).find("at least twice as many micro-batches as stages") != std::string::npos);
  CHECK(error_of(scenario("{schedule: interleaved, micro_batches: 8}")).find("must be one of 1f1b, zb1p, dualpipe") !=
        std::string::npos);
  CHECK(error_of(scenario("{schedule: 1f1b, micro_batches: 8}", "  stage: 1\n")) ==
        "p.yaml:19:10: 'stage' does not apply when 'pipeline' runs the whole step");
  CHECK(error_of(scenario("{schedule: 1f1b}")).find("missing required key 'micro_batches'") != std::string::npos);
}
