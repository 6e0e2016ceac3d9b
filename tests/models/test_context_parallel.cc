// Context parallelism (layout `cp`): each sequence split over cp ranks, attention against the keys
// gathered from the CP group, the ranks' layout, memory and fidelities, and DeepSeek-V3's
// context-extension phases.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

#include "hw/user_error.h"
#include "models/layer_ops.h"
#include "models/memory_model.h"
#include "models/model_zoo.h"
#include "models/op_workload.h"
#include "models/parallel_layout.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "models/training_run.h"
#include "test_support.h"
#include "tiny_moe_scenario.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

const LayerOp& find_op(const std::vector<LayerOp>& ops, const std::string& name) {
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == name; });
  REQUIRE(it != ops.end());
  return *it;
}

bool has_op(const std::vector<LayerOp>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == name; });
}

double model_flops(const std::vector<LayerOp>& ops) {
  double f = 0;
  for (const LayerOp& o : ops) f += o.model_flops;
  return f;
}

// The tiny MoE model on `nodes` HGX nodes of DeepSeek's fat-tree.
std::string scenario(int nodes, const std::string& layout, const std::string& fidelity, int64_t seq,
                     const std::string& schedule) {
  return cs::test::tiny_moe_on_fat_tree(nodes, layout, fidelity, seq,
                                        "  pipeline: {schedule: " + schedule + ", micro_batches: 8}\n");
}

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "cp.yaml");
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("context parallelism: ranks are numbered tp, cp, dp, pp and checked", "[cp]") {
  ParallelLayout l;
  l.pp = 16;
  l.cp = 8;
  l.dp = 16;
  l.ep = 64;
  CHECK(l.gpus() == 2048);
  CHECK(l.replicas() == 128);
  CHECK(l.expert_dp() == 2);
  const RankCoords c = rank_coords(l, 128 + 9, 8);
  CHECK(c.pp == 1);
  CHECK(c.dp == 9);
  CHECK(c.cp == 1);
  CHECK(c.ep == 9);
  CHECK(gpu_of(l, 0, 9, 1) == 137);
  const ModelSpec m = load_model("deepseek-v3");
  CHECK(layout_problem(l, m, 2048, 8).empty());
  CHECK(layout_problem(l, m, 1024, 8) == "tp x cp x dp x pp = 1 x 8 x 16 x 16 = 2048 GPUs, but the cluster has 1024");
  l.cp = 2;
  l.dp = 1;
  l.pp = 1;
  CHECK(layout_problem(l, m, 2, 8).find("ep (64) must divide cp x dp (2)") != std::string::npos);
  // A CP group's ring is modelled on whole nodes: 3 ranks on 8-GPU nodes would straddle them.
  l.cp = 3;
  l.ep = 1;
  CHECK(layout_problem(l, m, 3, 8).find("a CP group of 3 ranks (3 GPUs with tp 1) must fill whole nodes of 8") == 0);
  // Degrees beyond the cluster are refused before they are multiplied (four of 2^20 overflow).
  l.cp = 1 << 20;
  l.dp = l.pp = l.tp = 1 << 20;
  CHECK(layout_problem(l, m, 2048, 8) == "tp (1048576) exceeds the cluster's 2048 GPUs");
  l.tp = l.dp = l.pp = 1;
  l.cp = 0;
  CHECK(layout_problem(l, m, 0, 8) == "tp, cp, dp, pp and ep must be at least 1");
}

TEST_CASE("context parallelism: a rank scores 1/cp of the attention and up-projects every key", "[cp]") {
  const ModelSpec m = load_model("deepseek-v3");
  LayerContext whole;
  whole.tokens = whole.seq_len = 32768;
  LayerContext part = whole;
  part.cp = 8;
  part.tokens = 4096;
  const int layer = 10;  // an MoE layer
  const std::vector<LayerOp> a = layer_ops(m, layer, whole), b = layer_ops(m, layer, part);
  // Attention: the causal-balanced split gives each rank an eighth of the query-key pairs.
  CHECK(find_op(b, "attn.core").flops * 8 == Approx(find_op(a, "attn.core").flops).epsilon(1e-12));
  CHECK(find_op(b, "attn.core.bwd").flops * 8 == Approx(find_op(a, "attn.core.bwd").flops).epsilon(1e-12));
  // Queries are local, keys are the whole sequence's: every rank up-projects all 32768 latents,
  // of which MFU counts its own eighth.
  CHECK(find_op(b, "attn.q_up").gemm.m == 4096);
  CHECK(find_op(b, "attn.kv_up").gemm.m == 32768);
  CHECK(find_op(b, "attn.kv_up").flops == Approx(find_op(a, "attn.kv_up").flops));
  CHECK(find_op(b, "attn.kv_up").model_flops * 8 == Approx(find_op(a, "attn.kv_up").model_flops));
  // So the model FLOPs of the eight ranks add up to the unsplit sequence's.
  CHECK(model_flops(b) * 8 == Approx(model_flops(a)).epsilon(1e-9));
  // The gather carries the FP8 latent with its scales and the BF16 RoPE key of every token; its
  // backward reduce-scatters their BF16 gradients.
  const LayerOp& g = find_op(b, "attn.cp_gather");
  CHECK(g.comm == CommOp::kCpAllGather);
  CHECK(g.comm_bytes == Approx(32768 * (512 * kFp8TileBytes + 64 * 2.0)));
  const LayerOp& rs = find_op(b, "attn.cp_gather.bwd");
  CHECK(rs.comm == CommOp::kCpReduceScatter);
  CHECK(rs.comm_bytes == Approx(32768 * 576 * 2.0));
  CHECK_FALSE(has_op(a, "attn.cp_gather"));
}

TEST_CASE("context parallelism: a GPU keeps its tokens' activations and the gathered latent", "[cp]") {
  MemoryInputs whole;
  whole.model = load_model("deepseek-v3");
  whole.layout.pp = 16;
  whole.layout.dp = 128;
  whole.layout.ep = 64;
  whole.seq_len = 4096;
  whole.recompute.rms_norm = whole.recompute.mla_up_proj = true;
  MemoryInputs cp = whole;
  cp.layout.cp = 8;
  cp.layout.dp = 16;
  cp.seq_len = 32768;
  CHECK(cp.tokens() == 4096);
  const auto bytes = [](const std::vector<SavedTensor>& ts) {
    double b = 0;
    for (const SavedTensor& t : ts) b += t.bytes();
    return b;
  };
  const std::vector<SavedTensor> a = layer_saved_tensors(whole, 10), b = layer_saved_tensors(cp, 10);
  const auto gathered = std::find_if(b.begin(), b.end(), [](const SavedTensor& t) {
    return t.name.find("kv latent gathered over the CP group") != std::string::npos;
  });
  REQUIRE(gathered != b.end());
  CHECK(gathered->elements == 32768.0 * 512);
  // Everything else is per local token, as in the 4096-token pretraining micro-batch.
  CHECK(bytes(b) > bytes(a));
  CHECK(bytes(b) < bytes(a) * 1.1);
}

TEST_CASE("context parallelism: full, folded and mirrored fidelity agree", "[cp]") {
  struct Case {
    int nodes;
    const char* layout;
    int64_t seq;
  };
  // A CP group of 2 inside a node, and one of 16 over two nodes (its ring crosses InfiniBand).
  const Case cases[] = {{2, "{pp: 2, cp: 2, dp: 4, ep: 4}", 2048}, {8, "{pp: 2, cp: 16, dp: 2, ep: 16}", 4096}};
  for (const Case& c : cases)
    for (const char* sched : {"1f1b", "dualpipe"}) {
      INFO(c.layout << " " << sched);
      double ms[3];
      int i = 0;
      for (const char* fid : {"full", "folded", "mirrored"}) {
        const Scenario sc = load_scenario_text(scenario(c.nodes, c.layout, fid, c.seq, sched), "cp.yaml");
        const OpWorkload w = build_op_workload(sc);
        const bool gathers = std::any_of(w.graph.ops().begin(), w.graph.ops().end(), [&](const auto& op) {
          return w.graph.label(op).find("cp_gather") != std::string::npos;
        });
        CHECK(gathers);
        ms[i++] = run_scenario(sc, w).makespan.to_ms();
      }
      std::printf("context parallelism, %s %s: full %.6f ms, folded %.6f ms, mirrored %.6f ms\n", c.layout, sched,
                  ms[0], ms[1], ms[2]);
      // The same answer (the simulated GPUs' links stand in for their peers'), but for the order
      // in which a link's rates are summed.
      CHECK(ms[1] == Approx(ms[0]).epsilon(1e-6));
      CHECK(ms[2] == Approx(ms[0]).epsilon(1e-6));
    }
}

TEST_CASE("context parallelism: impossible layouts are placed", "[cp]") {
  const std::string bad_seq = error_of(scenario(2, "{pp: 2, cp: 4, dp: 2, ep: 4}", "full", 1020, "1f1b"));
  INFO(bad_seq);
  CHECK(bad_seq.find("cp.yaml:16:12:") != std::string::npos);
  CHECK(bad_seq.find("2 x cp = 8 equal chunks; seq_len 1020 does not divide") != std::string::npos);
  // Folded runs one EP group, which must hold whole CP groups (or the reverse): 24 GPUs on one
  // switch (one node), CP groups of 6, EP groups of 4.
  const std::string folded = error_of(R"(schema_version: 1
name: cp
)" + cs::test::kEightH800OnASwitch.substr(0, cs::test::kEightH800OnASwitch.find("gpus: 8")) + "gpus: 24" +
                                      cs::test::kEightH800OnASwitch.substr(cs::test::kEightH800OnASwitch.find("gpus: 8") + 7) +
                                      R"(workload:
  kind: model
)" + cs::test::kTinyMoeModel + R"(  layout: {pp: 2, cp: 6, dp: 2, ep: 4}
  seq_len: 1200
  fidelity: folded
  pipeline: {schedule: 1f1b, micro_batches: 8}
)");
  INFO(folded);
  CHECK(folded.find("folded fidelity simulates one EP group of 4 ranks, which must hold whole CP groups of 6") !=
        std::string::npos);
  const std::string straddle = error_of(scenario(3, "{pp: 2, cp: 6, dp: 2, ep: 4}", "full", 1200, "1f1b"));
  CHECK(straddle.find("cp.yaml:15:11: a CP group of 6 ranks (6 GPUs with tp 1) must fill whole nodes of 8") == 0);
}

TEST_CASE(
    "DeepSeek-V3's context extension: longer sequences cost more per token, and pretraining lands near the published "
    "figures",
    "[cp][bundled]") {
  const Scenario sc = load_scenario_file(cs::test::source_dir() + "/scenarios/deepseek-v3-pretrain-h800.yaml");
  REQUIRE(sc.training);
  const TrainingResult t = predict_training(sc, run_scenario(sc));
  REQUIRE(t.phases.size() == 3);
  const PhaseResult &pre = t.phases[0], &k32 = t.phases[1], &k128 = t.phases[2];
  CHECK(k32.name == "context extension 32K");
  CHECK(k32.steps == 1000);
  CHECK(k32.tokens == 1000.0 * 1920 * 32768);
  CHECK(k128.tokens == 1000.0 * 480 * 131072);
  // Every phase holds 4096 tokens a GPU a micro-batch and 120 micro-batches a pipeline, so the
  // steps differ by attention alone, which grows with the sequence.
  CHECK(k32.micro_batches == 120);
  CHECK(k128.micro_batches == 120);
  CHECK(k32.step > pre.step);
  CHECK(k128.step > k32.step);
  CHECK(k128.tokens_per_s_per_gpu < k32.tokens_per_s_per_gpu);
  CHECK(k32.tokens_per_s_per_gpu < pre.tokens_per_s_per_gpu);
  // DeepSeek's published pretraining (REFERENCE.md: 19.926 s a step, 1541.7 tokens/s per GPU,
  // 2664K GPU-hours), which issue 7 asks within 10%: the model lands 7-8% off (README).
  CHECK(pre.step.to_seconds() == Approx(19.926).epsilon(0.10));
  CHECK(pre.tokens_per_s_per_gpu == Approx(1541.7).epsilon(0.10));
  CHECK(pre.gpu_hours == Approx(2664e3).epsilon(0.10));
  std::printf("DeepSeek-V3 steps: pretraining %.3f s, 32K %.3f s, 128K %.3f s; context extension %.0f GPU-hours\n",
              pre.step.to_seconds(), k32.step.to_seconds(), k128.step.to_seconds(), k32.gpu_hours + k128.gpu_hours);
}

}  // namespace CS_TEST_FILE
