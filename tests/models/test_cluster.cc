// The `cluster` section: presets, explicit clusters, overrides, and the errors users make.
#include <catch2/catch.hpp>

#include "hw/user_error.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::models::load_scenario_text;

namespace {

std::string scenario(const std::string& cluster) {
  return "schema_version: 1\nname: c\ncluster:\n" + cluster +
         "workload:\n  kind: ops\n  streams:\n    - {name: s, gpus: \"0-15\", partition: comm, ops: [{all_to_all: {size_MiB: 64}}]}\n";
}

cs::hw::UserError error_of(const std::string& text) {
  try {
    load_scenario_text(text, "c.yaml");
  } catch (const cs::hw::UserError& e) {
    return e;
  }
  FAIL("loaded without an error");
  throw;
}

}  // namespace

TEST_CASE("a preset gives the whole cluster", "[cluster]") {
  const auto sc = load_scenario_text(scenario("  preset: h800-2048\n  sm_partitions: {compute: 112, comm: 20}\n"), "c.yaml");
  CHECK(sc.cluster.gpus == 2048);
  CHECK(sc.cluster.nodes == 256);
  CHECK(sc.cluster.fabric.kind == "multi_plane_fat_tree");
  CHECK(sc.cluster.figures.nic_bw_GBps == 50);
  CHECK(sc.cluster.figures.nvlink_bw_GBps == 200);
}

TEST_CASE("explicit keys and overrides change a preset's cluster", "[cluster]") {
  const auto sc = load_scenario_text(
      scenario("  preset: h800-2048\n  nodes: 64\n  fabric: {oversubscription: 2}\n"
               "  overrides: {nic_bw_GBps: 40, nvlink_bw_GBps: 160}\n  sm_partitions: {compute: 112, comm: 20}\n"),
      "c.yaml");
  CHECK(sc.cluster.gpus == 512);
  CHECK(sc.cluster.fabric.oversubscription == 2);
  CHECK(sc.cluster.figures.nic_bw_GBps == 40);
  CHECK(sc.cluster.figures.nvlink_bw_GBps == 160);
}

TEST_CASE("a cluster named by GPU, node type, node count and fabric", "[cluster]") {
  const auto sc = load_scenario_text(
      scenario("  gpu: h100\n  node: hgx-8gpu\n  nodes: 4\n  fabric: {kind: multi_rail_fat_tree, pxn: none}\n"
               "  sm_partitions: {compute: 112, comm: 20}\n"),
      "c.yaml");
  CHECK(sc.cluster.gpus == 32);
  CHECK(sc.cluster.gpu.name == "h100");
  CHECK(sc.cluster.fabric.pxn == "none");
}

TEST_CASE("an overridden NIC figure changes what the engine predicts", "[cluster]") {
  const std::string base = "  preset: h800-2048\n  nodes: 2\n  sm_partitions: {compute: 100, comm: 32}\n";
  const auto fast = cs::models::run_scenario(load_scenario_text(scenario(base), "c.yaml"));
  const auto slow = cs::models::run_scenario(load_scenario_text(scenario(base + "  overrides: {nic_bw_GBps: 25}\n"), "c.yaml"));
  // 16 GPUs on 2 nodes: the IB half of the all-to-all binds, so halving the NIC doubles it.
  CHECK(slow.makespan.to_seconds() == Approx(2 * fast.makespan.to_seconds()).epsilon(0.02));
  // The run says which figure it used.
  CHECK_THAT(fast.fabric, Catch::Contains("InfiniBand 50 GB/s per NIC and direction"));
  CHECK_THAT(slow.fabric, Catch::Contains("InfiniBand 25 GB/s per NIC and direction"));
}

TEST_CASE("cluster mistakes are reported at their keys", "[cluster]") {
  auto e = error_of(scenario("  preset: h800-2048\n  gpus: 16\n  sm_partitions: {comm: 20}\n"));
  CHECK(e.line() == 5);
  CHECK_THAT(e.message(), Catch::Contains("'gpus' follows from 'nodes'"));
  e = error_of(scenario("  gpu: h800\n  gpus: 16\n  fabric: {kind: switch, oversubscription: 2}\n  sm_partitions: {comm: 20}\n"));
  CHECK(e.line() == 6);
  CHECK_THAT(e.message(), Catch::Contains("applies to the fat-tree fabrics"));
  e = error_of(scenario("  preset: h800-2048\n  fabric: {link_bw_GBps: 100}\n  sm_partitions: {comm: 20}\n"));
  CHECK_THAT(e.message(), Catch::Contains("applies to the 'switch' fabric"));
  e = error_of(scenario("  preset: h800-2048\n  nodes: 4096\n  sm_partitions: {comm: 20}\n"));
  CHECK(e.line() == 5);
  CHECK_THAT(e.message(), Catch::Contains("this fabric cannot be built"));
  e = error_of(scenario("  preset: h800-4096\n  sm_partitions: {comm: 20}\n"));
  CHECK_THAT(e.message(), Catch::Contains("did you mean 'h800-2048'?"));
  e = error_of(scenario("  gpu: h800\n  fabric: {kind: multi_plane_fat_tree}\n  sm_partitions: {comm: 20}\n"));
  CHECK(e.line() == 4);
  CHECK_THAT(e.message(), Catch::Contains("missing required key 'nodes'"));
}

TEST_CASE("a three-layer fat-tree cluster loads and runs, and 1:2 oversubscription slows it", "[cluster]") {
  auto make = [](int over) {
    return scenario("  gpu: h100\n  nodes: 16\n  fabric: {kind: three_layer_fat_tree, oversubscription: " +
                    std::to_string(over) + ", pxn: none}\n  overrides: {switch_ports: 8}\n  sm_partitions: {compute: 100, comm: 32}\n");
  };
  const auto full = load_scenario_text(make(1), "c.yaml");
  CHECK(full.cluster.fabric.kind == "three_layer_fat_tree");
  CHECK(full.cluster.gpus == 128);
  const auto t1 = cs::models::run_scenario(full).makespan;
  const auto t2 = cs::models::run_scenario(load_scenario_text(make(2), "c.yaml")).makespan;
  CHECK(t2 > t1);
}

}  // namespace CS_TEST_FILE
