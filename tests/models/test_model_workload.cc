// The `model` workload: a model in a parallel layout becomes one stage's op graph (compute on one
// partition, collectives on the other), with the layout and memory checked when it is loaded.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>

#include "hw/user_error.h"
#include "models/model_workload.h"
#include "models/moe_routing.h"
#include "models/op_workload.h"
#include "models/parallel_layout.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

const char* kTinyDense = R"({name: tiny, source: test, layers: 2, hidden: 256, vocab: 1000,
          attention: {kind: gqa, heads: 8, kv_heads: 2, head_dim: 32}, ffn: {activation: swiglu, hidden: 512}})";
const char* kTinyMoe = R"({name: tiny-moe, source: test, layers: 2, hidden: 256, vocab: 1000,
          attention: {kind: mla, heads: 4, q_lora_rank: 64, kv_lora_rank: 32, qk_nope_head_dim: 16,
                      qk_rope_head_dim: 8, v_head_dim: 16},
          ffn: {activation: swiglu, hidden: 512},
          moe: {first_dense_layers: 1, routed_experts: 16, shared_experts: 1, expert_hidden: 64, top_k: 4,
                groups: 4, groups_per_token: 2, gating: sigmoid}})";

std::string switch_scenario(int gpus, const std::string& model, const std::string& workload_extra) {
  return "schema_version: 1\nname: t\ncluster:\n  gpu: h800\n  gpus: " + std::to_string(gpus) +
         "\n  sm_partitions: {compute: 112, comm: 20}\n  fabric: {kind: switch, link_bw_GBps: 160, link_lat_ns: 3330}\n"
         "workload:\n  kind: model\n  model: " + model + "\n" + workload_extra;
}

std::string preset_scenario(const std::string& workload_extra) {
  return "schema_version: 1\nname: t\ncluster:\n  preset: h800-2048\n  sm_partitions: {compute: 112, comm: 20}\n"
         "workload:\n  kind: model\n  model: deepseek-v3\n" + workload_extra;
}

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "s.yaml");
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

size_t count_label(const OpWorkload& w, const std::string& suffix) {
  size_t n = 0;
  for (const auto& op : w.graph.ops()) {
    const std::string& l = w.graph.label(op);
    if (l.size() >= suffix.size() && l.compare(l.size() - suffix.size(), suffix.size(), suffix) == 0) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("model workload: a dense model with TP runs compute and all-reduces on their own streams", "[model_workload]") {
  const Scenario sc = load_scenario_text(
      switch_scenario(4, kTinyDense, "  layout: {tp: 2, dp: 2}\n  seq_len: 128\n  micro_batch: 2\n  micro_batches: 3\n"),
      "s.yaml");
  REQUIRE(sc.model);
  const OpWorkload w = build_op_workload(sc);
  CHECK(w.stream_names == std::vector<std::string>{"compute", "comm"});
  REQUIRE(w.engine_streams[0].size() == 4);
  // Per layer and micro-batch, 2 forward and 2 backward all-reduces per TP group (2 groups of 2
  // GPUs: 2 ops each); the vocabulary-parallel embedding and loss all-reduce forward, and the
  // head's replicated input all-reduces its gradient backward.
  const size_t per_mb_per_gpu = 2 * (2 + 2) + 3;
  size_t comm_ops = 0;
  for (uint32_t s : w.engine_streams[1]) comm_ops += w.graph.streams()[s].ops.size();
  CHECK(comm_ops == 4 * 3 * per_mb_per_gpu);
  CHECK(w.graph.collectives().size() == 2 * 3 * per_mb_per_gpu);
  for (const auto& c : w.graph.collectives()) {
    CHECK(c.kind == cs::sim::CollectiveKind::kAllReduce);
    CHECK(c.gpus.size() == 2);
    CHECK(c.gpus[1] == c.gpus[0] + 1);  // TP groups are consecutive GPUs
  }
  const RunResult r = run_scenario(sc, w);
  REQUIRE(r.model);
  CHECK(r.model->stage_gpus == 4);
  CHECK(r.makespan >= r.streams[0].busy_max);
  CHECK(r.makespan.ps_count() > 0);
}

TEST_CASE("model workload: MoE dispatch and combine are all-to-all-v with the routing's volumes", "[model_workload]") {
  const Scenario sc = load_scenario_text(
      switch_scenario(8, kTinyMoe, "  layout: {dp: 8, ep: 8}\n  seq_len: 64\n  micro_batch: 2\n"), "s.yaml");
  const OpWorkload w = build_op_workload(sc);
  // One MoE layer: dispatch and combine forward, and both mirrored in backward, on 8 GPUs.
  CHECK(count_label(w, "moe.dispatch") == 8);
  CHECK(count_label(w, "moe.combine.bwd") == 8);
  const MoeRoutingSetup setup{16, 4, 4, 2, 8, 8, {}};
  const double bpt = 256 * (1 + 4.0 / 128);
  const auto expected = dispatch_transfers(setup, 128, bpt);
  const double want = std::accumulate(expected.begin(), expected.end(), 0.0,
                                      [](double s, const cs::sim::Transfer& t) { return s + t.bytes; });
  bool found = false;
  for (const auto& c : w.graph.collectives()) {
    if (c.kind != cs::sim::CollectiveKind::kAllToAllV) continue;
    const auto& op = w.graph.ops()[c.ops[0]];
    if (w.graph.label(op) != "L1.moe.dispatch") continue;
    found = true;
    double got = 0;
    for (const auto& t : w.graph.transfers(c)) got += t.bytes;
    CHECK(got == Approx(want).epsilon(1e-12));
  }
  CHECK(found);
  // The routed experts wait for the dispatch; the shared expert does not, so it overlaps it.
  const auto& ops = w.graph.ops();
  const cs::sim::OpLists deps_of = w.graph.deps_of_each();
  const auto depends_on_comm = [&](const std::string& label) {
    for (const auto& op : ops) {
      if (w.graph.label(op) != label || w.graph.streams()[op.stream].gpu != 0) continue;
      const auto deps = deps_of.of(static_cast<uint32_t>(&op - ops.data()));
      return std::any_of(deps.begin(), deps.end(), [&](uint32_t d) { return ops[d].kind == cs::sim::OpKind::kComm; });
    }
    FAIL("no op " << label);
    return false;
  };
  CHECK(depends_on_comm("L1.moe.expert_up"));
  CHECK_FALSE(depends_on_comm("L1.moe.shared_up"));
  const RunResult r = run_scenario(sc, w);
  REQUIRE(r.model);
  CHECK(r.model->gpus_per_token > 1);
}

TEST_CASE("model workload: DeepSeek-V3 in DeepSeek's layout fits an 80 GB H800 with DualPipe", "[model_workload]") {
  const std::string ok = preset_scenario("  layout: {pp: 16, dp: 128, ep: 64}\n  schedule: dualpipe\n");
  REQUIRE(error_of(ok).empty());
  const Scenario sc = load_scenario_text(ok, "s.yaml");
  const ModelRunSummary s = summarize_model_workload(*sc.model, sc.cluster);
  double total = 0;
  for (const auto& [name, bytes] : s.memory_bytes) total += bytes;
  CHECK(total <= s.memory_available_bytes);
  CHECK(s.memory_available_bytes == Approx(80.0 * (1 << 30) * 150109880320.0 / (141.0 * (1 << 30))));
  // The FLOP-balanced split leaves the last stage one layer beside the head and MTP.
  CHECK(stage_layers(sc.model->layout, sc.model->model) ==
        std::vector<int>{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1});
}

TEST_CASE("model workload: skewed routing makes the hot GPUs compute and receive more, and the stage wait", "[model_workload]") {
  const std::string base = "  layout: {dp: 8, ep: 8}\n  seq_len: 256\n  micro_batch: 4\n";
  const Scenario flat = load_scenario_text(switch_scenario(8, kTinyMoe, base), "s.yaml");
  const Scenario hot = load_scenario_text(switch_scenario(8, kTinyMoe, base + "  routing: {zipf_exponent: 1.5}\n"), "s.yaml");
  const OpWorkload wf = build_op_workload(flat), wh = build_op_workload(hot);
  const auto rows = [](const OpWorkload& w) {
    std::vector<int64_t> out;
    for (const auto& op : w.graph.ops())
      if (op.kind == cs::sim::OpKind::kGemm && w.graph.label(op) == "L1.moe.expert_up")
        out.push_back(w.graph.gemms()[op.payload].m * w.graph.gemms()[op.payload].groups);
    return out;
  };
  const std::vector<int64_t> f = rows(wf), h = rows(wh);
  REQUIRE(f.size() == 8);
  REQUIRE(h.size() == 8);
  CHECK(*std::min_element(f.begin(), f.end()) == *std::max_element(f.begin(), f.end()));
  CHECK(*std::max_element(h.begin(), h.end()) > *std::max_element(f.begin(), f.end()));
  // Rows are conserved (to rounding): the skew moves work, it does not add it.
  CHECK(std::accumulate(h.begin(), h.end(), int64_t{0}) == Approx(std::accumulate(f.begin(), f.end(), int64_t{0})).epsilon(0.01));
  CHECK(run_scenario(hot, wh).makespan > run_scenario(flat, wf).makespan);
}

TEST_CASE("model workload: DeepSeek-V3 with PP4 does not fit, and the error says why", "[model_workload]") {
  const std::string e = error_of(preset_scenario("  layout: {pp: 4, dp: 512, ep: 64}\n  schedule: dualpipe\n"));
  CHECK(e.find("s.yaml:9:11: pipeline rank") == 0);
  CHECK(e.find("does not fit: needs") != std::string::npos);
  for (const char* cat : {"weights", "gradients", "optimizer", "activations", "buffers", "GiB available"})
    CHECK(e.find(cat) != std::string::npos);
  // 1F1B holds one copy of the stage and fewer micro-batches, yet PP4 still does not fit.
  CHECK(error_of(preset_scenario("  layout: {pp: 4, dp: 512, ep: 64}\n")).find("does not fit") != std::string::npos);
}

TEST_CASE("model workload: impossible layouts and options are refused at their keys", "[model_workload]") {
  CHECK(error_of(preset_scenario("  layout: {pp: 16, dp: 64, ep: 64}\n")) ==
        "s.yaml:9:11: tp x dp x pp = 1 x 64 x 16 = 1024 GPUs, but the cluster has 2048");
  CHECK(error_of(preset_scenario("  layout: {pp: 16, dp: 128, ep: 48}\n")).find("ep (48) must divide dp (128)") !=
        std::string::npos);
  CHECK(error_of(preset_scenario("  layout: {pp: 16, dp: 128, ep: 64}\n  stage: 16\n")) ==
        "s.yaml:10:10: stage 16 does not exist: pp is 16");
  CHECK(error_of(switch_scenario(3, kTinyDense, "  layout: {dp: 3}\n  schedule: dualpipe\n"))
            .find("DualPipe needs an even pp, not 1") != std::string::npos);
  CHECK(error_of(switch_scenario(4, kTinyDense, "  layout: {dp: 4}\n  routing: {zipf_exponent: 1}\n"))
            .find("routing applies to MoE models only") != std::string::npos);
  CHECK(error_of(switch_scenario(4, "deepsek-v3", "  layout: {dp: 4}\n")).find("s.yaml:10:10: unknown model 'deepsek-v3'") == 0);
  CHECK(error_of(switch_scenario(4, kTinyDense, "  layout: {dp: 4}\n  partitions: {compute: comm, comm: comm}\n"))
            .find("compute and communication need different SM partitions") != std::string::npos);
  CHECK(error_of(preset_scenario("  layout: {pp: 16, dp: 128, ep: 64}\n  micro_batches: 100000\n"))
            .find("s.yaml:10:18: the stage's graph would hold") == 0);
  CHECK(error_of(switch_scenario(4, kTinyDense, "  layout: {dp: 4}\n  streams: []\n")).find("unknown key 'streams'") !=
        std::string::npos);
}

TEST_CASE("model workload: folding the data-parallel replicas agrees with simulating them all", "[model_workload]") {
  // Replicas of a stage exchange nothing within a micro-batch, and here they share no link: the
  // EP groups' all-to-alls stay under their own leaf ports, the TP groups inside their nodes.
  for (const char* file : {"deepseek-v3-stage-h800.yaml", "llama3-70b-tp8-h100.yaml"}) {
    INFO(file);
    const Scenario full = load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/" + file);
    Scenario folded = full;
    ModelWorkload mw = *full.model;
    mw.fidelity = ModelWorkload::Fidelity::kFolded;
    folded.model = std::make_shared<const ModelWorkload>(mw);
    const RunResult a = run_scenario(full), b = run_scenario(folded);
    CHECK(b.makespan == a.makespan);
    CHECK(b.streams[0].busy_mean == a.streams[0].busy_mean);
    CHECK(b.streams[1].busy_mean == a.streams[1].busy_mean);
    REQUIRE(b.model);
    CHECK(b.model->simulated_gpus < a.model->simulated_gpus);
    CHECK(b.model->fidelity == "folded");
    CHECK(b.ops * 2 <= a.ops);
  }
}

TEST_CASE("model workload: SDPA's layout copies add their kernels, and MLA refuses them at their key", "[model_workload]") {
  const std::string plain = switch_scenario(2, kTinyDense, "  layout: {dp: 2}\n");
  const std::string copies = plain + "  implementation: {attention_layout_copies: true}\n";
  const Scenario a = load_scenario_text(plain, "s.yaml"), b = load_scenario_text(copies, "s.yaml");
  const OpWorkload wa = build_op_workload(a), wb = build_op_workload(b);
  CHECK(count_label(wa, "attn.layout_copy") == 0);
  // Two layers on each of the two GPUs, forward and backward each, and one concatenation per backward.
  CHECK(count_label(wb, "attn.layout_copy") == 4);
  CHECK(count_label(wb, "attn.layout_copy.bwd") == 4);
  CHECK(count_label(wb, "attn.qkv_concat") == 4);
  CHECK(run_scenario(b, wb).makespan > run_scenario(a, wa).makespan);
  // Each op's form reaches the graph the engine runs (the cost model prices by it).
  size_t forms = 0;
  for (const auto& op : wb.graph.ops()) {
    if (op.kind != cs::sim::OpKind::kCompute) continue;
    const std::string& l = wb.graph.label(op);
    const cs::sim::MemoryForm f = wb.graph.computes()[op.payload].form;
    const auto expect = [&](const char* name, cs::sim::MemoryForm want) {
      if (l.find(name) == std::string::npos) return;
      INFO(l);
      CHECK(f == want);
      ++forms;
    };
    expect("attn.layout_copy", cs::sim::MemoryForm::kLayoutCopy);
    expect("attn.qkv_concat", cs::sim::MemoryForm::kConcat);
    expect("ffn.act.bwd", cs::sim::MemoryForm::kActivationBackward);
  }
  CHECK(forms == 16);
  // With context parallelism V arrives by the CP all-gather: not the layout measured.
  CHECK(error_of(switch_scenario(4, kTinyDense, "  layout: {dp: 2, cp: 2}\n  implementation: {attention_layout_copies: true}\n"))
            .find("s.yaml:13:45: attention_layout_copies is SDPA's layout of one GPU's whole sequences; with cp 2") == 0);
  CHECK(error_of(switch_scenario(8, kTinyMoe, "  layout: {dp: 8, ep: 8}\n  implementation: {attention_layout_copies: true}\n")) ==
        "s.yaml:17:45: attention_layout_copies is SDPA's layout around GQA attention; tiny-moe uses MLA");
  CHECK(error_of(plain + "  implementation: {layout_copies: true}\n").find("s.yaml:13:20: unknown key 'layout_copies'") == 0);
}

}  // namespace CS_TEST_FILE
