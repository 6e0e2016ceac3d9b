// A whole pipeline step of a model on the engine: every rank's chunks in its schedule's order,
// stage boundaries as sends, DualPipe's overlapped pairs interleaved.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hw/user_error.h"
#include "models/memory_model.h"
#include "models/model_workload.h"
#include "models/op_workload.h"
#include "models/pipeline_schedule.h"
#include "models/scenario_loader.h"
#include "tiny_moe_scenario.h"
#include "models/scenario_runner.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

std::string scenario(const std::string& pipeline, const std::string& extra = "",
                     const std::string& layout = "{pp: 4, dp: 2, ep: 2}") {
  return R"(schema_version: 1
name: pipe
)" + cs::test::kEightH800OnASwitch + R"(workload:
  kind: model
)" + cs::test::kTinyMoeModel + R"(  layout: )" + layout + R"(
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
  double pipeline_ms[3] = {}, optimizer_ms[3] = {};
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
    // The step ends with every rank's optimizer step; each rank's breakdown adds up to the step.
    REQUIRE(r.step);
    CHECK(count_label(w, "optimizer.adamw") == 8);
    CHECK(count_label(w, "optimizer.sum_dualpipe_copies") == (std::string(kind) == "dualpipe" ? 8u : 0u));
    cs::sim::Time end;
    for (const RankStepTimes& t : r.step->ranks) {
      CHECK(t.total() == r.makespan);
      CHECK(t.optimizer > cs::sim::Time());
      end = std::max(end, t.pipeline_end);
      // By chunk kind, the same tasks' time (clipped where a task starts under the last one's end).
      const RankChunkTimes& c = r.step->by_chunk.at(static_cast<size_t>(t.rank));
      CHECK(c.total() == r.makespan);
      CHECK(c.forward + c.backward + c.weight + c.forward_backward ==
            t.warmup_forward + t.steady + t.input_backward + t.weight_backward);
      CHECK((c.forward_backward > cs::sim::Time()) == (std::string(kind) == "dualpipe"));
    }
    CHECK(end < r.makespan);
    pipeline_ms[k] = end.to_ms();
    optimizer_ms[k++] = r.step->mean.optimizer.to_ms();
  }
  // Splitting the backward fills bubbles; DualPipe's two directions and overlapped pairs fill more.
  CHECK(pipeline_ms[1] < pipeline_ms[0]);
  CHECK(pipeline_ms[2] < pipeline_ms[1]);
  // DualPipe reduces the gradients of two stages per rank and sums its two copies.
  CHECK(optimizer_ms[2] > 1.5 * optimizer_ms[0]);
}

TEST_CASE("pipeline workload: the placement shows the split the run uses, over every model stage",
          "[pipeline_workload]") {
  // Interleaved 1F1B with 2 virtual stages and DualPipeV both make 8 model stages of pp 4: the
  // split is over 8 (8 layers, one each), and the line numbers model stages, apart from the ranks'
  // "pipeline stage". It printed pp stages before, at 4096 tokens whatever the run's length.
  for (const std::string pipeline :
       {"{schedule: interleaved, micro_batches: 8, virtual_stages: 2}", "{schedule: dualpipev, micro_batches: 8}"}) {
    INFO(pipeline);
    const Scenario sc = load_scenario_text(scenario(pipeline), "p.yaml");
    CHECK(workload_stage_layers(*sc.model) == std::vector<int>(8, 1));
    const ModelRunSummary s = summarize_model_workload(*sc.model, sc.cluster);
    std::string line;
    for (const std::string& l : s.placement)
      if (l.rfind("layers per", 0) == 0) line = l;
    CHECK(line ==
          "layers per model stage (forward FLOPs balanced): 1 1 1 1 1 1 1 1 (embedding on model stage 0; final norm, "
          "head on model stage 7, of 8 over 4 ranks)");
  }
  // One stage per rank keeps the line as it was.
  const Scenario one = load_scenario_text(scenario("{schedule: 1f1b, micro_batches: 8}"), "p.yaml");
  std::string line;
  for (const std::string& l : summarize_model_workload(*one.model, one.cluster).placement)
    if (l.rfind("layers per", 0) == 0) line = l;
  CHECK(line ==
        "layers per stage (forward FLOPs balanced): 1 3 3 1 (embedding on stage 0; final norm, head on stage 3)");
}

TEST_CASE("pipeline workload: sizes and keys are checked", "[pipeline_workload]") {
  CHECK(error_of(scenario("{schedule: dualpipe, micro_batches: 6}")).find("p.yaml:18:13: ") == 0);
  CHECK(error_of(scenario("{schedule: dualpipe, micro_batches: 6}")).find("at least twice as many micro-batches as stages") != std::string::npos);
  CHECK(error_of(scenario("{schedule: gpipe, micro_batches: 8}")).find("must be one of 1f1b, interleaved, zb1p, dualpipe, dualpipev") !=
        std::string::npos);
  CHECK(error_of(scenario("{schedule: 1f1b, micro_batches: 8}", "  stage: 1\n")) ==
        "p.yaml:19:10: 'stage' does not apply when 'pipeline' runs the whole step");
  CHECK(error_of(scenario("{schedule: 1f1b}")).find("missing required key 'micro_batches'") != std::string::npos);
}


TEST_CASE("pipeline workload: interleaved 1F1B and DualPipeV run more model stages than ranks", "[pipeline_workload]") {
  struct Case {
    const char* kind;
    int cross_rank_boundaries;  // of the 7 between 8 one-layer model stages
  };
  // Interleaved (v 2): stage s on rank s % 4, every boundary crosses ranks. DualPipeV: stages
  // 0-3 down ranks 0-3, 4-7 back up; rank 3 hands stage 3 to stage 4 itself.
  const Case cases[] = {{"interleaved", 7}, {"dualpipev", 6}};
  const Scenario base = load_scenario_text(scenario("{schedule: 1f1b, micro_batches: 8}"), "p.yaml");
  const double one_f_one_b_ms = run_scenario(base).makespan.to_ms();
  for (const Case& c : cases) {
    INFO(c.kind);
    const Scenario sc = load_scenario_text(scenario(std::string("{schedule: ") + c.kind + ", micro_batches: 8}"), "p.yaml");
    REQUIRE(sc.model->pipeline);
    const PipelineSchedule sched = make_schedule(*sc.model->pipeline);
    CHECK(sched.ranks == 4);  // the layout's pp is the ranks
    CHECK(sched.model_stages == 8);
    const OpWorkload w = build_op_workload(sc);
    // Every GPU of every rank runs, each micro-batch through every layer on both replicas.
    REQUIRE(w.engine_streams[0].size() == 8);
    for (const uint32_t s : w.engine_streams[0]) CHECK(!w.graph.streams()[s].ops.empty());
    for (int layer = 0; layer < 8; ++layer) {
      // Appends: g++ 12 warns falsely (-Wrestrict) on "L" + std::string.
      std::string op(1, 'L');
      op.append(std::to_string(layer)).append(".attn.o_proj");
      CHECK(count_label(w, op) == 8 * 2);
      CHECK(count_label(w, op + ".dgrad") == 8 * 2);
    }
    CHECK(count_label(w, "pp.send_activation") == static_cast<size_t>(c.cross_rank_boundaries) * 8 * 2);
    CHECK(count_label(w, "pp.send_gradient") == static_cast<size_t>(c.cross_rank_boundaries) * 8 * 2);
    // The loader's size bound holds for the graph built: ops and their dependencies.
    const size_t deps = w.graph.deps().size();
    CHECK(model_workload_size(*sc.model).ops >= w.graph.ops().size() + deps);
    const RunResult r = run_scenario(sc, w);
    REQUIRE(r.model);
    CHECK(r.model->pipeline == c.kind);
    CHECK(r.model->schedule == c.kind);  // the memory shape checked
    CHECK(r.model->simulated_gpus == 8);
    WARN(c.kind << " makespan " << r.makespan.to_ms() << " ms, 1f1b " << one_f_one_b_ms << " ms");
    // Both shrink 1F1B's bubble: interleaved by v, DualPipeV by overlapping and its V.
    CHECK(r.makespan.to_ms() < one_f_one_b_ms);
  }
}

TEST_CASE("pipeline workload: DualPipeV holds two model stages per rank and PP+1 chunks", "[pipeline_workload]") {
  const Scenario sc = load_scenario_text(scenario("{schedule: dualpipe-v, micro_batches: 8}"), "p.yaml");
  const PipelineSchedule s = make_schedule(*sc.model->pipeline);
  MemoryInputs in = memory_inputs(*sc.model, sc.cluster, 0);
  CHECK(in.model_stages == 8);
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    in.pp_rank = r;
    // Rank r holds stages r and 7 - r: one layer each (8 layers on 8 model stages).
    const HeldMoment m = activation_moment(in);
    REQUIRE(m.size() == 2);
    CHECK(m[0].stage == r);
    CHECK(m[1].stage == 7 - r);
    // REFERENCE.md's DualPipeV row: PP + 1 chunks in flight, PP the model stages.
    CHECK(m[0].chunks + m[1].chunks == s.model_stages + 1);
    CHECK(m[0].chunks + m[1].chunks == activation_peak(s, r).total);
    const MemoryBreakdown b = memory_breakdown(in, sc.cluster.gpu);
    const auto has_line = [&](const std::string& prefix) {
      for (const MemoryLine& l : b.lines)
        if (l.category == MemoryCategory::kWeights && l.name.rfind(prefix, 0) == 0) return true;
      return false;
    };
    const std::string first = std::to_string(r), second = std::to_string(7 - r);
    CHECK(has_line("stage " + first + " layers " + first + "-" + first));
    CHECK(has_line("stage " + second + " layers " + second + "-" + second));
    // Rank 0 holds both ends of the V: the embedding and the head, and needs no embedding copy.
    CHECK(has_line("embedding") == (r == 0));
    CHECK(has_line("output head") == (r == 0));
    CHECK_FALSE(has_line("embedding copy"));
  }
}

TEST_CASE("pipeline workload: interleaved 1F1B keeps more activations on rank 0 than 1F1B", "[pipeline_workload]") {
  // One layer per model stage for interleaved, two for 1F1B: the same layers on each rank's GPUs.
  const Scenario il = load_scenario_text(scenario("{schedule: interleaved, virtual_stages: 2, micro_batches: 8}", "",
                                                  "{pp: 4, dp: 2, ep: 2, layers_per_stage: [1, 1, 1, 1, 1, 1, 1, 1]}"),
                                         "p.yaml");
  const Scenario plain = load_scenario_text(
      scenario("{schedule: 1f1b, micro_batches: 8}", "", "{pp: 4, dp: 2, ep: 2, layers_per_stage: [2, 2, 2, 2]}"), "p.yaml");
  CHECK(il.model->pipeline->virtual_stages == 2);
  MemoryInputs in = memory_inputs(*il.model, il.cluster, 0);
  const MemoryInputs in_plain = memory_inputs(*plain.model, plain.cluster, 0);
  const HeldMoment m = activation_moment(in);
  // Megatron: pp(1 + (pp-1)/(pp v)) micro-batch-stage equivalents at rank 0, a chunk being 1/v of
  // one: v pp + pp - 1 = 11 chunks, stage 0 in all 8 micro-batches and stage 4 in 3.
  const int pp = 4, v = 2;
  REQUIRE(m.size() == 2);
  CHECK(m[0].chunks + m[1].chunks == v * pp + pp - 1);
  CHECK(double(m[0].chunks + m[1].chunks) / v == Approx(pp * (1 + double(pp - 1) / (pp * v))));
  CHECK(m[0].stage == 0);
  CHECK(m[0].chunks == 8);
  CHECK(m[1].stage == 4);
  CHECK(m[1].chunks == 3);
  // In bytes: layer 0 (dense, with the token ids) x 8 and layer 4 (MoE) x 3, against 1F1B's
  // layers 0 and 1 (MoE like layer 4) x pp.
  double ids = 0, dense = 0, moe = 0;
  for (const SavedTensor& t : stage_extra_saved_tensors(in, 0)) ids += t.bytes();
  for (const SavedTensor& t : layer_saved_tensors(in, 0)) dense += t.bytes();
  for (const SavedTensor& t : layer_saved_tensors(in, 4)) moe += t.bytes();
  const double il_bytes = memory_breakdown(in, il.cluster.gpu).category_bytes(MemoryCategory::kActivations);
  const double plain_bytes = memory_breakdown(in_plain, plain.cluster.gpu).category_bytes(MemoryCategory::kActivations);
  CHECK(il_bytes == Approx(8 * (ids + dense) + 3 * moe).epsilon(1e-12));
  CHECK(plain_bytes == Approx(pp * (ids + dense + moe)).epsilon(1e-12));
  CHECK(il_bytes > plain_bytes);
  WARN("rank 0 activations: interleaved v 2 " << il_bytes / (1 << 20) << " MiB, 1f1b " << plain_bytes / (1 << 20) << " MiB");
  // Every rank: Megatron's warm-up, (pp-1-r) x 2 + (v-1) x pp forwards, plus one.
  const PipelineSchedule s = make_schedule(*il.model->pipeline);
  for (int r = 0; r < pp; ++r) {
    in.pp_rank = r;
    const HeldMoment mr = activation_moment(in);
    CHECK(mr[0].chunks + mr[1].chunks == (pp - 1 - r) * 2 + (v - 1) * pp + 1);
    CHECK(mr[0].chunks + mr[1].chunks == activation_peak(s, r).total);
  }
}

TEST_CASE("pipeline workload: virtual stages and model stages are checked at their keys", "[pipeline_workload]") {
  // Line 18 is `  pipeline: {...}`: the map at column 13.
  CHECK(error_of(scenario("{schedule: dualpipev, micro_batches: 8, virtual_stages: 2}")) ==
        "p.yaml:18:69: virtual_stages applies to the interleaved schedule only; dualpipev holds its two stages per rank");
  CHECK(error_of(scenario("{schedule: 1f1b, micro_batches: 8, virtual_stages: 2}")) ==
        "p.yaml:18:64: virtual_stages applies to the interleaved schedule only; 1f1b holds one stage per rank");
  CHECK(error_of(scenario("{schedule: interleaved, micro_batches: 8, virtual_stages: 3}")) ==
        "p.yaml:18:13: the pipeline has 12 model stages on its 4 ranks, more than the model's 8 layers: every model "
        "stage needs at least one");
  CHECK(error_of(scenario("{schedule: interleaved, micro_batches: 8}", "", "{pp: 4, dp: 2, ep: 2, layers_per_stage: [2, 2, 2, 2]}")) ==
        "p.yaml:18:13: layers_per_stage lists 4 stages, but the pipeline has 8 model stages on its 4 ranks");
  CHECK(error_of(scenario("{schedule: interleaved, micro_batches: 6}")).find("p.yaml:18:13: interleaved 1F1B needs the micro-batches to be a multiple") == 0);
  CHECK(error_of(scenario("{schedule: dualpipev, micro_batches: 6}")) ==
        "p.yaml:18:13: DualPipeV needs at least as many micro-batches as stages (dualpipev.py: num_chunks >= num_ranks * 2 "
        "on stages/2 ranks), not 8 stages and 6 micro-batches (DualPipeV's stages: 2 per rank, 8 on pp 4)");
  CHECK(error_of(scenario("{schedule: interleaved-1f1b, micro_batches: 8, virtual_stages: 1}")).find("p.yaml:18:76: ") == 0);
  CHECK(error_of(scenario("{schedule: gpipe, micro_batches: 8}")).find("p.yaml:18:24: ") == 0);
}

TEST_CASE("pipeline workload: a GPU's sends go on one stream per peer and direction", "[pipeline_workload]") {
  // One shared send stream per GPU queued a send behind sends to other peers that were emitted
  // earlier but produced later (DeepSeek-V3's DualPipe step lost 5 s of bubble to it).
  const Scenario sc = load_scenario_text(scenario("{schedule: dualpipe, micro_batches: 8}"), "p.yaml");
  const OpWorkload w = build_op_workload(sc);
  std::vector<int> streams_of_gpu(8, 0);
  for (uint32_t es : w.engine_streams[2]) {
    const auto& st = w.graph.streams()[es];
    REQUIRE_FALSE(st.ops.empty());
    ++streams_of_gpu[st.gpu];
    const auto& first = w.graph.ops()[st.ops.front()];
    const auto& first_send = w.graph.collectives()[first.payload];
    for (uint32_t o : st.ops) {
      const auto& op = w.graph.ops()[o];
      const auto& send = w.graph.collectives()[op.payload];
      CHECK(send.gpus == first_send.gpus);  // {source, destination}: one peer
      CHECK(w.graph.label(op) == w.graph.label(first));  // one direction
    }
  }
  // DualPipe runs both directions through every rank: an end rank sends to one neighbour
  // (activations one way, gradients the other, for each of its two stages), a middle rank to two.
  for (int g = 0; g < 8; ++g) {
    INFO("GPU " << g);
    CHECK(streams_of_gpu[g] >= 2);
    CHECK(streams_of_gpu[g] <= 4);
  }
}

TEST_CASE("pipeline workload: DualPipe's overlapped pairs run in Figure 4's order", "[pipeline_workload]") {
  // DeepSeek-V3 Figure 4: computation ATTN(F), MLP(B), MLP(W), MLP(F), ATTN(B), ATTN(W);
  // communication DISPATCH(F), DISPATCH(B), COMBINE(F), PP, COMBINE(B). The forward's combine runs
  // under the backward's attention, so what reads the combine comes after ATTN(B); MLP(W) comes
  // between MLP(B) and MLP(F), while the dispatch's backward is in flight; the next unit's
  // COMBINE(B) and the stage's gradient send leave before ATTN(W).
  const Scenario sc = load_scenario_text(scenario("{schedule: dualpipe, micro_batches: 8}"), "p.yaml");
  const OpWorkload w = build_op_workload(sc);
  const auto& g = w.graph;
  const auto has = [](const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; };
  // Pipeline rank 1 (GPUs 2 and 3) holds stages 1 and 2: MoE layers only, so its pairs are MoE pairs.
  const auto& compute = g.streams()[w.engine_streams[0].at(2)];
  REQUIRE(compute.gpu == 2);
  int pairs = 0, residual_after_attn_bwd = 0, residual_after_next_combine = 0, mlp_pairs = 0, wgrad_before_mlp_fwd = 0;
  std::string since_expert_down;  // labels since the forward's MLP
  bool in_forward_mlp = false;
  std::vector<std::string> window;  // from a backward's MLP to its attention
  bool in_backward_mlp = false;
  const auto ends_with = [](const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
  };
  for (uint32_t o : compute.ops) {
    const std::string& l = g.label(g.ops()[o]);
    if (ends_with(l, "moe.expert_down")) {
      in_forward_mlp = true;
      since_expert_down.clear();
    } else if (in_forward_mlp && ends_with(l, "ffn.residual")) {
      ++pairs;
      residual_after_attn_bwd += has(since_expert_down, "attn.core.bwd");
      residual_after_next_combine +=
          has(since_expert_down, "attn.core.bwd") && has(since_expert_down, "ffn.residual.bwd");
      in_forward_mlp = false;
    } else if (in_forward_mlp) {
      since_expert_down += l + " ";
    }
    if (ends_with(l, "moe.expert_up.dgrad")) {
      in_backward_mlp = true;
      window.clear();
    } else if (in_backward_mlp && ends_with(l, "attn.core.bwd")) {
      in_backward_mlp = false;
      const auto at = [&](const std::string& e) {
        for (size_t i = 0; i < window.size(); ++i)
          if (ends_with(window[i], e)) return static_cast<int>(i);
        return -1;
      };
      const int fwd = at("moe.expert_up"), wgrad = at("moe.expert_up.wgrad");
      if (fwd >= 0) {  // a pair: the forward's MLP ran inside the backward's
        ++mlp_pairs;
        wgrad_before_mlp_fwd += wgrad >= 0 && wgrad < fwd;
      }
    } else if (in_backward_mlp) {
      window.push_back(l);
    }
  }
  // Lone forwards put the residual right after their combine; pairs put ATTN(B) between.
  CHECK(pairs > 0);
  CHECK(residual_after_attn_bwd > 0);
  CHECK(residual_after_attn_bwd < pairs);
  // Between ATTN(B) and the forward's residual, the next backward unit's combine side (not after
  // the chunk's last unit).
  CHECK(residual_after_next_combine > 0);
  CHECK(residual_after_next_combine < residual_after_attn_bwd);
  CHECK(mlp_pairs > 0);
  CHECK(wgrad_before_mlp_fwd == mlp_pairs);
  // A weight gradient (its GEMM or the transposed FP8 cast it reads) never waits for an MoE
  // all-to-all, and no all-to-all waits for one.
  const auto weight = [&](const cs::sim::Op& op) {
    return has(g.label(op), ".wgrad") || has(g.label(op), ".x_transpose_cast");
  };
  int sends_before_weights = 0;
  const cs::sim::OpLists deps_of = g.deps_of_each();
  for (const auto& op : g.ops()) {
    const auto op_deps = deps_of.of(static_cast<uint32_t>(&op - g.ops().data()));
    const bool wgrad = weight(op);
    if (g.label(op) == "pp.send_gradient")
      for (uint32_t d : op_deps) sends_before_weights += !weight(g.ops()[d]);
    for (uint32_t d : op_deps) {
      const auto& dep = g.ops()[d];
      if (wgrad && dep.kind == cs::sim::OpKind::kComm) CHECK_FALSE(has(g.label(dep), "moe."));
      if (op.kind == cs::sim::OpKind::kComm && has(g.label(op), "moe.")) CHECK_FALSE(weight(dep));
    }
  }
  // A pair's input gradient leaves once ATTN(B) made it (lone full backwards send after their last op).
  CHECK(sends_before_weights > 0);
}

}  // namespace CS_TEST_FILE
