// `clustersim sweep`'s engine: the scenario run once per communication-partition size.
#include <catch2/catch.hpp>

#include "hw/user_error.h"
#include "models/scenario_loader.h"
#include "models/sm_sweep.h"
#include "test_support.h"
#include "tiny_moe_scenario.h"

using namespace cs::models;

namespace {

Scenario overlap_scenario() {
  return load_scenario_file(cs::test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml");
}

// The tiny MoE model's whole 1F1B step with a training run of 10 steps.
Scenario tiny_training() {
  return load_scenario_text(cs::test::tiny_training_scenario("  phases: [{name: all, steps: 10, global_batch: 8}]\n"),
                            "t.yaml");
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sweep: each point is the scenario run with that split, and the best is the shortest", "[sweep]") {
  const Scenario sc = overlap_scenario();
  SmSweepSpec spec;
  spec.comm_sms = {8, 20, 48};
  spec.jobs = 1;
  const SmSweep s = run_sm_sweep(sc, spec);
  REQUIRE(s.points.size() == 3);
  CHECK(s.comm_partition == "comm");
  CHECK(s.compute_partition == "compute");
  CHECK(s.total_sms == 132);
  for (const SmSweepPoint& p : s.points) {
    INFO(p.comm_sms);
    Scenario by_hand = sc;
    by_hand.cluster.partitions[0].sms = 132 - p.comm_sms;
    by_hand.cluster.partitions[1].sms = p.comm_sms;
    CHECK(p.compute_sms == 132 - p.comm_sms);
    CHECK(p.result.makespan == run_scenario(by_hand).makespan);
    CHECK(p.result.partitions[1].sms == p.comm_sms);
  }
  // 8 SMs starve the all-to-alls, 48 the GEMMs (tests/models/test_sm_split.cc gives the closed forms).
  CHECK(s.best == 1);
  CHECK(s.points[0].result.makespan > s.points[1].result.makespan);
  CHECK(s.points[2].result.makespan > s.points[1].result.makespan);
}

TEST_CASE("sweep: the result does not depend on how many points run at once", "[sweep]") {
  const Scenario sc = overlap_scenario();
  SmSweepSpec spec;
  spec.comm_sms = parse_int_range("0:40:8", "--comm-sms");
  spec.jobs = 1;
  const SmSweep one = run_sm_sweep(sc, spec);
  spec.jobs = 4;
  const SmSweep four = run_sm_sweep(sc, spec);
  REQUIRE(one.points.size() == four.points.size());
  for (size_t i = 0; i < one.points.size(); ++i) {
    CHECK(one.points[i].comm_sms == four.points[i].comm_sms);
    CHECK(one.points[i].result.makespan == four.points[i].result.makespan);
    CHECK(one.points[i].result.events == four.points[i].result.events);
  }
  CHECK(one.best == four.best);
}

TEST_CASE("sweep: 0 SMs runs communication on the compute partition's SMs", "[sweep]") {
  const Scenario sc = overlap_scenario();
  SmSweepSpec spec;
  spec.comm_sms = {0};
  const SmSweep s = run_sm_sweep(sc, spec);
  const SmSweepPoint& p = s.points[0];
  CHECK(p.shared);
  CHECK(p.compute_sms == 132);
  REQUIRE(p.result.streams.size() == 2);
  for (const StreamResult& st : p.result.streams) CHECK(st.partition == "compute");
  // The GEMMs alone on 132 SMs take 40 x 16 waves of a tile; sharing the SMs with the all-to-alls
  // (each kernel asks for the whole partition, so they split it while both run) can only add.
  const double tile_s = 2.0 * 128 * 128 * 7168 / (1979e12 / 132);
  CHECK(p.result.makespan.to_seconds() > 40 * 16 * tile_s);
  // A model workload too: the MoE all-to-alls and pipeline sends move onto the compute partition.
  const Scenario tiny = tiny_training();
  const SmSweep t = run_sm_sweep(tiny, spec);
  REQUIRE(t.points[0].result.streams.size() >= 2);
  for (const StreamResult& st : t.points[0].result.streams) CHECK(st.partition == "compute");
}

TEST_CASE("sweep: a scenario with a training run gets its GPU-hours at every point", "[sweep]") {
  SmSweepSpec spec;
  spec.comm_sms = {10, 20};
  spec.jobs = 2;
  const SmSweep s = run_sm_sweep(tiny_training(), spec);
  for (const SmSweepPoint& p : s.points) {
    REQUIRE(p.result.training);
    CHECK(p.result.training->phases.at(0).steps == 10);
    CHECK(p.result.training->gpu_hours == Approx(10 * 8 * p.result.makespan.to_seconds() / 3600).epsilon(1e-9));
  }
  spec.training = false;
  CHECK_FALSE(run_sm_sweep(tiny_training(), spec).points[0].result.training);
}

TEST_CASE("sweep: sizes and partitions it cannot use are refused before anything runs", "[sweep]") {
  const Scenario sc = overlap_scenario();
  SmSweepSpec spec;
  spec.comm_sms = {20, 132};
  CHECK(error_of([&] { run_sm_sweep(sc, spec); }) ==
        sc.file + ": cannot give partition 'comm' 132 SMs: it and 'compute' hold 132, and the compute partition "
                  "needs at least one");
  spec.comm_sms = {20};
  spec.comm_partition = "nccl";
  CHECK(error_of([&] { run_sm_sweep(sc, spec); }) ==
        sc.file + ": the cluster has no SM partition 'nccl' (it has compute, comm); name one with --comm-partition");
  spec.comm_partition = "compute";
  CHECK(error_of([&] { run_sm_sweep(sc, spec); }) == sc.file + ": the communication and compute partitions must differ");
}

TEST_CASE("sweep: SM counts read as a range or a list", "[sweep]") {
  CHECK(parse_int_range("0:48:8", "x") == std::vector<int>{0, 8, 16, 24, 32, 40, 48});
  CHECK(parse_int_range("4:10:4", "x") == std::vector<int>{4, 8});
  CHECK(parse_int_range("20", "x") == std::vector<int>{20});
  CHECK(parse_int_range("0,8,20", "x") == std::vector<int>{0, 8, 20});
  CHECK(parse_int_range("2147483000:2147483647:100", "x").back() == 2147483600);  // no overflow past TO
  const std::string hint = " (write FROM:TO:STEP, e.g. 0:48:4, or a list, e.g. 0,8,20)";
  CHECK(error_of([] { parse_int_range("0:48", "--comm-sms"); }) == "--comm-sms: '0:48' is not a range" + hint);
  CHECK(error_of([] { parse_int_range("8:0:4", "--comm-sms"); }) ==
        "--comm-sms: '8:0:4' needs 0 <= FROM <= TO and STEP >= 1" + hint);
  CHECK(error_of([] { parse_int_range("0:8:0", "--comm-sms"); }) ==
        "--comm-sms: '0:8:0' needs 0 <= FROM <= TO and STEP >= 1" + hint);
  CHECK(error_of([] { parse_int_range("8,-4", "--comm-sms"); }) ==
        "--comm-sms: '8,-4' is not a list of whole numbers >= 0" + hint);
  CHECK(error_of([] { parse_int_range("8,,4", "--comm-sms"); }) ==
        "--comm-sms: '8,,4' is not a list of whole numbers >= 0" + hint);
  CHECK(error_of([] { parse_int_range("8,8", "--comm-sms"); }) == "--comm-sms: '8,8' names 8 twice" + hint);
  CHECK(error_of([] { parse_int_range("0:5000:1", "--comm-sms"); }) == "--comm-sms: '0:5000:1' has more than 1000 points" + hint);
}
