// Pieces of scenario text the pipeline, training and fidelity tests share: a tiny MoE model (8
// layers, MLA, 16 routed experts in 2 groups, top-4) as a workload's `model:` entry, and 8 H800 on
// one switch. Kept line for line, so the positions the tests assert stay where they are.
#pragma once

#include <string>

namespace cs::test {

inline const std::string kTinyMoeModel = R"(  model: {name: tiny-moe, source: test, layers: 8, hidden: 1024, vocab: 8000,
          attention: {kind: mla, heads: 8, q_lora_rank: 256, kv_lora_rank: 128, qk_nope_head_dim: 64,
                      qk_rope_head_dim: 32, v_head_dim: 64},
          ffn: {activation: swiglu, hidden: 2048},
          moe: {first_dense_layers: 1, routed_experts: 16, shared_experts: 1, expert_hidden: 256, top_k: 4,
                groups: 2, groups_per_token: 2, gating: sigmoid}}
)";

inline const std::string kEightH800OnASwitch = R"(cluster:
  gpu: h800
  gpus: 8
  sm_partitions: {compute: 112, comm: 20}
  fabric: {kind: switch, link_bw_GBps: 160, link_lat_ns: 3330}
)";

// The tiny MoE model on `nodes` HGX H800 nodes of DeepSeek's fat-tree in `layout` at `fidelity`,
// then `rest` (the pipeline and any further workload keys). Line 15 is `layout`, 16 `seq_len`,
// 17 `fidelity`.
inline std::string tiny_moe_on_fat_tree(int nodes, const std::string& layout, const std::string& fidelity,
                                        long long seq_len, const std::string& rest) {
  return R"(schema_version: 1
name: tiny-moe
cluster:
  preset: h800-2048
  nodes: )" + std::to_string(nodes) + R"(
  sm_partitions: {compute: 112, comm: 20}
workload:
  kind: model
)" + kTinyMoeModel + "  layout: " + layout + "\n  seq_len: " + std::to_string(seq_len) + "\n  fidelity: " + fidelity +
         "\n" + rest;
}

// The tiny MoE model on 8 GPUs (pp 4 x dp 2, ep 2), the whole step in 1F1B, with `training` as
// the body of its `training:` section.
inline std::string tiny_training_scenario(const std::string& training) {
  return R"(schema_version: 1
name: train
)" + kEightH800OnASwitch + R"(workload:
  kind: model
)" + kTinyMoeModel + R"(  layout: {pp: 4, dp: 2, ep: 2}
  seq_len: 1024
  pipeline: {schedule: 1f1b, micro_batches: 4}
training:
)" + training;
}

}  // namespace cs::test
