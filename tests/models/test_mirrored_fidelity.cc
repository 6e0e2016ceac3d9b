// `fidelity: mirrored`: one GPU per pipeline rank stands in for its EP group, its MoE all-to-alls
// run as puts of its own row of the all-to-all-v, its links for its peers'. Under balanced
// routing it reproduces `full` and `folded` (to the rounding of the rates' sums, a part in a
// million), with a fraction of the ops.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "hw/user_error.h"
#include "models/model_workload.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/sweep_run.h"
#include "models/sweep_spec.h"
#include "test_support.h"
#include "tiny_moe_scenario.h"
#include "models/scenario_runner.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

// How close the fidelities come: the same answer but for the order in which rates are summed (a
// link's load from one GPU's flows or from all of its EP group's).
constexpr double kAgree = 1e-6;

// A tiny MoE model on `nodes` HGX nodes of DeepSeek's fat-tree.
std::string scenario(int nodes, const std::string& layout, const std::string& fidelity, const std::string& pipeline,
                     const std::string& extra = "") {
  return cs::test::tiny_moe_on_fat_tree(nodes, layout, fidelity, 1024, pipeline + extra);
}

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "m.yaml");
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

struct Run {
  double makespan_ms = 0;
  size_t ops = 0;
  int simulated_gpus = 0;
  std::string fidelity;
};

Run run(const std::string& text) {
  const Scenario sc = load_scenario_text(text, "m.yaml");
  const OpWorkload w = build_op_workload(sc);
  const RunResult r = run_scenario(sc, w);
  REQUIRE(r.model);
  return Run{r.makespan.to_ms(), w.graph.ops().size(), r.model->simulated_gpus, r.model->fidelity};
}

}  // namespace

TEST_CASE("mirrored fidelity: a whole step agrees with full and folded, with far fewer ops", "[mirrored]") {
  struct Case {
    int nodes;
    const char* layout;
    int full_gpus, folded_gpus, mirrored_gpus;
  };
  // 16 GPUs: two EP groups of 4 per stage inside a node (NVLink only). 64 GPUs: two EP groups of
  // 16 per stage, each over two nodes (InfiniBand to the same local index, NVLink forwards).
  const Case cases[] = {{2, "{pp: 2, dp: 8, ep: 4}", 16, 8, 2}, {8, "{pp: 2, dp: 32, ep: 16}", 64, 32, 2}};
  for (const Case& c : cases)
    for (const char* sched : {"1f1b", "dualpipe"}) {
      INFO(c.layout << " " << sched);
      const std::string pipeline = std::string("  pipeline: {schedule: ") + sched + ", micro_batches: 8}\n";
      const Run full = run(scenario(c.nodes, c.layout, "full", pipeline));
      const Run folded = run(scenario(c.nodes, c.layout, "folded", pipeline));
      const Run mirrored = run(scenario(c.nodes, c.layout, "mirrored", pipeline));
      std::printf(
          "mirrored fidelity, %s %s: makespan full %.6f ms, folded %.6f ms, mirrored %.6f ms (%+.2e); ops %zu, %zu, "
          "%zu\n",
          c.layout, sched, full.makespan_ms, folded.makespan_ms, mirrored.makespan_ms,
          mirrored.makespan_ms / full.makespan_ms - 1, full.ops, folded.ops, mirrored.ops);
      CHECK(mirrored.makespan_ms == Approx(full.makespan_ms).epsilon(kAgree));
      CHECK(mirrored.makespan_ms == Approx(folded.makespan_ms).epsilon(kAgree));
      CHECK(folded.makespan_ms == Approx(full.makespan_ms).epsilon(kAgree));
      CHECK(full.simulated_gpus == c.full_gpus);
      CHECK(folded.simulated_gpus == c.folded_gpus);
      CHECK(mirrored.simulated_gpus == c.mirrored_gpus);
      CHECK(mirrored.fidelity == "mirrored");
      // One GPU per rank instead of an EP group's: the ops shrink with it.
      CHECK(mirrored.ops * (c.folded_gpus / c.mirrored_gpus) <= folded.ops * 11 / 10);
      CHECK(mirrored.ops * 4 <= folded.ops);
    }
}

TEST_CASE("mirrored fidelity: with DeepEP's internode pace a whole step agrees with full", "[mirrored]") {
  // The calibrated H800 profile paces the all-to-alls of EP groups over two nodes: full fidelity
  // runs them as all-to-all-vs, mirrored as puts of one GPU's row, both at the same pace.
  const std::string rest =
      "  pipeline: {schedule: dualpipe, micro_batches: 8}\n"
      "cost_model: {kind: calibrated, profile: h800}\n";
  const auto paced = [](const std::string& text) {
    const OpWorkload w = build_op_workload(load_scenario_text(text, "m.yaml"));
    int n = 0;
    for (const cs::sim::Collective& c : w.graph.collectives()) n += c.paced_bytes > 0;
    return n;
  };
  const std::string full_text = scenario(8, "{pp: 2, dp: 32, ep: 16}", "full", rest);
  const std::string mirrored_text = scenario(8, "{pp: 2, dp: 32, ep: 16}", "mirrored", rest);
  CHECK(paced(full_text) > 0);
  CHECK(paced(mirrored_text) > 0);
  const Run full = run(full_text), mirrored = run(mirrored_text);
  CHECK(mirrored.makespan_ms == Approx(full.makespan_ms).epsilon(kAgree));
}

TEST_CASE("mirrored and folded fidelity: the simulated GPUs' links stand in for their peers'", "[mirrored]") {
  // pp 2 x dp 32, ep 16 on 8 nodes: stage 0 is GPUs 0-31, stage 1 GPUs 32-63.
  const std::string pipeline = "  pipeline: {schedule: dualpipe, micro_batches: 8}\n";
  const auto load = [&](const char* fidelity) {
    return load_scenario_text(scenario(8, "{pp: 2, dp: 32, ep: 16}", fidelity, pipeline), "m.yaml");
  };
  const Scenario sfull = load("full"), smirrored = load("mirrored");
  const OpWorkload wfull = build_op_workload(sfull), wm = build_op_workload(smirrored);
  const OpWorkload wf = build_op_workload(load("folded"));
  CHECK(wfull.stand_in.empty());
  REQUIRE(wm.stand_in.size() == 64);
  REQUIRE(wf.stand_in.size() == 64);
  for (int g = 0; g < 64; ++g) {
    CHECK(wm.stand_in[g] == g / 32 * 32);                // data-parallel rank 0 of its stage
    CHECK(wf.stand_in[g] == g / 32 * 32 + g % 32 % 16);  // its EP rank in the stage's first EP group
  }
  // The links into a GPU carry what its peers send it: as busy as in the full run, and as its links
  // out (balanced routing), where they used to carry only what its own puts returned.
  const auto links_used = [](const RunResult& r) {
    std::map<std::string, double> used;
    for (const ResourceBusy& b : r.resources) used[b.resource] = b.mean_used;
    return used;
  };
  const std::map<std::string, double> full = links_used(run_scenario(sfull, wfull)),
                                      mirrored = links_used(run_scenario(smirrored, wm));
  for (const char* kind : {"NVLink in", "NVLink out", "InfiniBand in", "InfiniBand out", "HBM"}) {
    INFO(kind);
    REQUIRE(full.count(kind));
    REQUIRE(mirrored.count(kind));
    CHECK(full.at(kind) > 0);
    CHECK(mirrored.at(kind) == Approx(full.at(kind)).epsilon(kAgree));
  }
  CHECK(mirrored.at("NVLink in") == Approx(mirrored.at("NVLink out")).epsilon(kAgree));
}

TEST_CASE("mirrored fidelity: the MoE all-to-alls become puts of the simulated GPU's own row", "[mirrored]") {
  const std::string pipeline = "  pipeline: {schedule: 1f1b, micro_batches: 2}\n";
  const Scenario full = load_scenario_text(scenario(8, "{pp: 2, dp: 32, ep: 16}", "full", pipeline), "m.yaml");
  const Scenario mirrored = load_scenario_text(scenario(8, "{pp: 2, dp: 32, ep: 16}", "mirrored", pipeline), "m.yaml");
  const OpWorkload wf = build_op_workload(full), wm = build_op_workload(mirrored);
  // Only data-parallel rank 0 of each stage runs: GPUs 0 and 32.
  REQUIRE(wm.engine_streams[0].size() == 2);
  CHECK(wm.graph.streams()[wm.engine_streams[0][0]].gpu == 0);
  CHECK(wm.graph.streams()[wm.engine_streams[0][1]].gpu == 32);
  // The first dispatch of the full graph: an all-to-all-v over GPUs 0-15. The mirrored one: a put
  // from GPU 0 of exactly the transfers whose source is EP rank 0, to the same GPU ids.
  const auto first_dispatch = [](const OpWorkload& w) -> const cs::sim::Collective& {
    for (const auto& op : w.graph.ops())
      if (op.kind == cs::sim::OpKind::kComm && w.graph.label(op).find("moe.dispatch") != std::string::npos)
        return w.graph.collectives()[op.payload];
    FAIL("no dispatch");
    throw;
  };
  const cs::sim::Collective& cf = first_dispatch(wf);
  const cs::sim::Collective& cm = first_dispatch(wm);
  REQUIRE(cf.gpus.size() == 16);
  CHECK(cf.ops.size() == 16);
  REQUIRE(cm.ops.size() == 1);
  REQUIRE(cm.gpus.front() == 0);
  double row_bytes = 0;
  size_t row_transfers = 0;
  for (const auto& t : wf.graph.transfers(cf)) {
    if (cf.gpus[t.src] != 0) continue;
    ++row_transfers;
    row_bytes += t.bytes;
    bool found = false;
    for (const auto& u : wm.graph.transfers(cm))
      if (cm.gpus[u.dst] == cf.gpus[t.dst]) {
        found = true;
        CHECK(u.bytes == Approx(t.bytes));
      }
    CHECK(found);
  }
  CHECK(wm.graph.transfers(cm).size() == row_transfers);
  // GPU 0's row: NVLink to its 7 node-mates (direct and forwarded tokens) and InfiniBand to GPU 8.
  CHECK(row_transfers == 8);
  CHECK(cm.bytes == Approx(row_bytes));
  // The optimizer step still runs, its puts going to unsimulated ring successors.
  REQUIRE(wm.pipeline);
  CHECK(wm.pipeline->optimizer.size() == 2);
  CHECK_FALSE(wm.pipeline->optimizer[0].empty());
}

TEST_CASE("mirrored fidelity: a single stage agrees with full", "[mirrored]") {
  const std::string stage = "  micro_batches: 3\n  stage: 1\n";
  const Run full = run(scenario(8, "{pp: 2, dp: 32, ep: 16}", "full", stage));
  const Run mirrored = run(scenario(8, "{pp: 2, dp: 32, ep: 16}", "mirrored", stage));
  std::printf("mirrored fidelity, single stage: makespan full %.6f ms, mirrored %.6f ms; ops %zu, %zu\n",
              full.makespan_ms, mirrored.makespan_ms, full.ops, mirrored.ops);
  CHECK(mirrored.makespan_ms == Approx(full.makespan_ms).epsilon(kAgree));
  CHECK(mirrored.simulated_gpus == 1);
  CHECK(mirrored.ops * 16 <= full.ops);
}

TEST_CASE("folded fidelity: with skewed routing a whole step agrees with full", "[mirrored]") {
  // Skew makes the EP ranks of a group differ, but every EP group of a stage alike: folded runs
  // one group, and the other groups' GPUs route over its links (0.07% apart before they did).
  const std::string rest =
      "  pipeline: {schedule: dualpipe, micro_batches: 8}\n"
      "  routing: {zipf_exponent: 1}\n";
  const Run full = run(scenario(8, "{pp: 2, dp: 32, ep: 16}", "full", rest));
  const Run folded = run(scenario(8, "{pp: 2, dp: 32, ep: 16}", "folded", rest));
  std::printf("folded fidelity, skewed routing: makespan full %.6f ms, folded %.6f ms\n", full.makespan_ms,
              folded.makespan_ms);
  CHECK(folded.makespan_ms == Approx(full.makespan_ms).epsilon(kAgree));
  CHECK(folded.simulated_gpus * 2 == full.simulated_gpus);
}

TEST_CASE("mirrored fidelity: skewed routing is refused at the fidelity key", "[mirrored]") {
  const std::string pipeline = "  pipeline: {schedule: 1f1b, micro_batches: 2}\n";
  const std::string e =
      error_of(scenario(2, "{pp: 2, dp: 8, ep: 4}", "mirrored", pipeline, "  routing: {zipf_exponent: 1}\n"));
  CHECK(e.find("m.yaml:17:13: mirrored fidelity needs balanced routing") == 0);
  CHECK(e.find("use folded") != std::string::npos);
  // Balanced routing, or folded with skew, load.
  CHECK(error_of(scenario(2, "{pp: 2, dp: 8, ep: 4}", "mirrored", pipeline, "  routing: {zipf_exponent: 0}\n")).empty());
  CHECK(error_of(scenario(2, "{pp: 2, dp: 8, ep: 4}", "folded", pipeline, "  routing: {zipf_exponent: 1}\n")).empty());
  CHECK(error_of(scenario(2, "{pp: 2, dp: 8, ep: 4}", "mirror", pipeline)).find("m.yaml:17:13:") == 0);
}

TEST_CASE("mirrored and folded fidelity on an oversubscribed tree load its uplinks as every GPU would", "[mirrored]") {
  // 64 nodes make two leaves per plane, so the data-parallel rings and the pipeline's sends cross
  // between leaves. At 1:1 the uplinks bind nothing; at 2:1 and 4:1 they do, and each stand-in's
  // flow loads them with the transfers of every GPU it stands in for (its images): the same step
  // as every GPU's run, where the stand-ins' own flows alone came out 8.4% short at 4:1.
  const auto text = [](const std::string& fidelity, int oversubscription, int nodes = 64) {
    std::string t = scenario(nodes, "{pp: 2, dp: " + std::to_string(nodes * 4) + ", ep: 8}", fidelity,
                             "  pipeline: {schedule: dualpipe, micro_batches: 4}\n");
    const std::string at = "  nodes: " + std::to_string(nodes) + "\n";
    return t.insert(t.find(at) + at.size(), "  fabric: {kind: multi_plane_fat_tree, oversubscription: " +
                                                std::to_string(oversubscription) + ", pxn: destination}\n");
  };
  const auto warnings = [](const std::string& t) {
    const Scenario sc = load_scenario_text(t, "m.yaml");
    return summarize_model_workload(*sc.model, sc.cluster).fidelity_warnings;
  };
  const Run full1 = run(text("full", 1)), full4 = run(text("full", 4));
  CHECK(full4.makespan_ms > full1.makespan_ms * 1.05);  // the thin uplinks slow every GPU's run
  for (const int oversubscription : {1, 2, 4}) {
    const Run full = oversubscription == 1 ? full1 : oversubscription == 4 ? full4 : run(text("full", 2));
    for (const char* fidelity : {"mirrored", "folded"}) {
      INFO(fidelity << " at " << oversubscription << ":1");
      CHECK(run(text(fidelity, oversubscription)).makespan_ms == Approx(full.makespan_ms).epsilon(kAgree));
      CHECK(warnings(text(fidelity, oversubscription)).empty());
    }
  }
  // The images make the difference: a put without them loads only its own route's uplinks.
  const Scenario sc = load_scenario_text(text("mirrored", 4), "m.yaml");
  OpWorkload w = build_op_workload(sc);
  size_t with_images = 0;
  for (const cs::sim::Collective& c : w.graph.collectives())
    with_images += cs::sim::OpGraph::one_sided(c) && c.image_list != UINT32_MAX;
  CHECK(with_images > 0);
  // 160 nodes make five leaves per plane: at 1:1 over three spines, two of a leaf's 32 uplinks
  // dark; at 4:1 every uplink lit, but a stage's 80 nodes fill two leaves and half of a third. The
  // GPUs one simulated GPU stands in for then meet unlike uplinks, and the run says it is
  // approximate (0.09% and 0.015% short of full's step).
  const std::vector<FidelityWarning> dark = warnings(text("mirrored", 1, 160));
  REQUIRE(dark.size() == 1);
  CHECK_THAT(dark[0].text, Catch::Contains("partial multi_plane_fat_tree (uplinks left dark)") &&
                               Catch::Contains("approximate") && Catch::Contains("fidelity: full"));
  const std::vector<FidelityWarning> unaligned = warnings(text("folded", 4, 160));
  REQUIRE(unaligned.size() == 1);
  CHECK_THAT(unaligned[0].text, Catch::Contains("4:1 oversubscribed") && Catch::Contains("80 nodes"));
  CHECK(warnings(text("full", 1, 160)).empty());
  // One leaf per plane (32 nodes) has no uplink.
  CHECK(warnings(text("mirrored", 4, 32)).empty());
  // A sweep notes it on the points it concerns.
  cs::test::TempDir dir;
  const std::string path = dir.file("fabric.yaml");
  std::ofstream(path) << text("mirrored", 1, 160) << "sweep:\n  grid:\n    - key: cluster.nodes\n"
                      << "      values: [64, 160]\n  derive:\n    workload.layout.dp: cluster.nodes * 4\n";
  const SweepSpec spec = load_sweep_file(path);
  const std::vector<SweepPoint> points = expand_sweep(spec);
  REQUIRE(points.size() == 2);
  const SweepRecord whole = run_sweep_point(spec, points[0]), partial = run_sweep_point(spec, points[1]);
  CHECK(whole.status == "ok");
  CHECK(whole.message.empty());
  CHECK(partial.status == "ok");
  CHECK_THAT(partial.message, Catch::Contains("approximate") && Catch::Contains("mirrored"));
}

TEST_CASE("mirrored fidelity: a DeepSeek-V3 step of 120 micro-batches fits the loader's limits", "[mirrored]") {
  const std::string text = R"(schema_version: 1
name: ds-step
cluster:
  preset: h800-2048
  sm_partitions: {compute: 112, comm: 20}
workload:
  kind: model
  model: deepseek-v3
  layout: {pp: 16, dp: 128, ep: 64, tp: 1, zero_stage: 1}
  seq_len: 4096
  micro_batch: 1
  precision: deepseek_fp8
  fidelity: FIDELITY
  pipeline: {schedule: dualpipe, micro_batches: 120}
)";
  const auto with = [&](const std::string& f) {
    std::string t = text;
    return t.replace(t.find("FIDELITY"), 8, f);
  };
  CHECK(error_of(with("folded")).find("the stage's graph would hold") != std::string::npos);
  const Scenario sc = load_scenario_text(with("mirrored"), "ds.yaml");
  REQUIRE(sc.model);
  CHECK(sc.model->mirrored());
  CHECK(sc.model->simulated_dp() == 1);
  const WorkloadSize size = model_workload_size(*sc.model);
  CHECK(size.ops < 2'000'000);
  CHECK(size.transfers < 3'000'000);
  // Building the graph is quick; the graph is within what the estimate promised.
  const auto t0 = std::chrono::steady_clock::now();
  const OpWorkload w = build_op_workload(sc);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t deps = w.graph.deps().size();
  size_t transfers = 0;
  for (const auto& c : w.graph.collectives()) transfers += w.graph.transfers(c).size();
  std::printf("mirrored fidelity, DeepSeek-V3 x 120 micro-batches: %zu ops, %zu dependencies, %zu transfers "
              "(estimated %llu and %llu), built in %.2f s\n",
              w.graph.ops().size(), deps, transfers, static_cast<unsigned long long>(size.ops),
              static_cast<unsigned long long>(size.transfers), build_s);
  CHECK(w.engine_streams[0].size() == 16);
  CHECK(w.graph.ops().size() + deps <= size.ops);
  CHECK(transfers <= size.transfers);
}

}  // namespace CS_TEST_FILE
