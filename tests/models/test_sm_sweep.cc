// The SM split as a sweep axis (comm_sms), and the sweep's engine running points on threads.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "hw/user_error.h"
#include "models/moe_routing.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "models/sm_sweep.h"
#include "models/sweep_run.h"
#include "models/sweep_spec.h"
#include "test_support.h"
#include "tiny_moe_scenario.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

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

// The overlap scenario swept over `sizes` of its communication partition.
SweepSpec overlap_sweep(const std::vector<int>& sizes) {
  SweepSpec spec = load_sweep_file(cs::test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml");
  add_comm_sms_axis(spec, sizes);
  return spec;
}

// Every point's record, run on `jobs` threads, in index order.
std::vector<SweepRecord> run_all(const SweepSpec& spec, int jobs) {
  const auto points = expand_sweep(spec);
  std::vector<int> todo;
  for (const auto& p : points) todo.push_back(p.index);
  std::vector<SweepRecord> out(points.size());
  run_sweep_points(spec, points, todo, jobs, [&](SweepRecord r) { out[static_cast<size_t>(r.index)] = std::move(r); });
  return out;
}

double step_ms(const SweepRecord& r) { return std::stod(r.metric("step_ms")); }

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sweep: each comm_sms point is the scenario run with that split", "[sweep]") {
  const Scenario sc = overlap_scenario();
  const auto records = run_all(overlap_sweep({8, 20, 48}), 1);
  REQUIRE(records.size() == 3);
  const auto [comm, compute] = sm_split_partitions(sc, "", "");
  CHECK(sc.cluster.partitions[static_cast<size_t>(comm)].name == "comm");
  CHECK(sc.cluster.partitions[static_cast<size_t>(compute)].name == "compute");
  for (int i = 0; i < 3; ++i) {
    const int sms = std::vector<int>{8, 20, 48}[static_cast<size_t>(i)];
    INFO(sms);
    Scenario by_hand = sc;
    by_hand.cluster.partitions[0].sms = 132 - sms;
    by_hand.cluster.partitions[1].sms = sms;
    CHECK(records[static_cast<size_t>(i)].status == "ok");
    CHECK(records[static_cast<size_t>(i)].values[0] == std::to_string(sms));
    CHECK(records[static_cast<size_t>(i)].metric("step_ms") == fmt::format("{:.3f}", run_scenario(by_hand).makespan.to_ms()));
  }
  // 8 SMs starve the all-to-alls, 48 the GEMMs (tests/models/test_sm_split.cc gives the closed forms).
  CHECK(step_ms(records[0]) > step_ms(records[1]));
  CHECK(step_ms(records[2]) > step_ms(records[1]));
}

TEST_CASE("sweep: the records do not depend on how many points run at once", "[sweep]") {
  const SweepSpec spec = overlap_sweep(parse_int_range("0:40:8", "--comm-sms"));
  const auto one = run_all(spec, 1), four = run_all(spec, 4);
  REQUIRE(one.size() == four.size());
  for (size_t i = 0; i < one.size(); ++i) {
    CHECK(one[i].values == four[i].values);
    CHECK(one[i].metrics == four[i].metrics);
  }
}

TEST_CASE("sweep: 0 SMs runs communication on the compute partition's SMs", "[sweep]") {
  const Scenario sc = with_comm_sms(overlap_scenario(), 1, 0, 0);
  CHECK(sc.cluster.partitions[0].sms == 132);
  CHECK(sc.cluster.partitions[1].sms == 0);
  const RunResult r = run_scenario(sc);
  REQUIRE(r.streams.size() == 2);
  for (const StreamResult& st : r.streams) CHECK(st.partition == "compute");
  // The GEMMs alone on 132 SMs take 40 x 16 waves of a tile; sharing the SMs with the all-to-alls
  // (each kernel asks for the whole partition, so they split it while both run) can only add.
  const double tile_s = 2.0 * 128 * 128 * 7168 / (1979e12 / 132);
  CHECK(r.makespan.to_seconds() > 40 * 16 * tile_s);
  // A model workload too: the MoE all-to-alls and pipeline sends move onto the compute partition.
  const Scenario tiny = tiny_training();
  const auto [comm, compute] = sm_split_partitions(tiny, "", "");
  const RunResult t = run_scenario(with_comm_sms(tiny, comm, compute, 0));
  REQUIRE(t.streams.size() >= 2);
  for (const StreamResult& st : t.streams) CHECK(st.partition == "compute");
  // SMs taken from a partition other than the model's compute one: its communication follows them.
  std::string text = cs::test::tiny_training_scenario("  phases: [{name: all, steps: 10, global_batch: 8}]\n");
  const std::string parts = "sm_partitions: {compute: 112, comm: 20}";
  REQUIRE(text.find(parts) != std::string::npos);
  text.replace(text.find(parts), parts.size(), "sm_partitions: {compute: 100, comm: 20, spare: 12}");
  const Scenario three = load_scenario_text(text, "t.yaml");
  const auto [comm3, spare] = sm_split_partitions(three, "", "spare");
  const RunResult s = run_scenario(with_comm_sms(three, comm3, spare, 0));
  REQUIRE(s.streams.size() >= 2);
  CHECK(s.streams[0].partition == "compute");
  for (size_t i = 1; i < s.streams.size(); ++i) CHECK(s.streams[i].partition == "spare");
}

TEST_CASE("sweep: 0 SMs launches DeepEP's all-to-alls on its default grid, a reserved partition whole", "[sweep]") {
  const Scenario stage = load_scenario_file(cs::test::source_dir() + "/scenarios/deepseek-v3-stage-h800.yaml");
  const auto [comm, compute] = sm_split_partitions(stage, "", "");
  const auto grids = [](const OpWorkload& w) {
    std::vector<int> out;
    for (const cs::sim::Collective& c : w.graph.collectives())
      if (c.paced_bytes > 0) out.push_back(c.grid_sms);
    return out;
  };
  const std::vector<int> reserved = grids(build_op_workload(stage));
  const std::vector<int> shared = grids(build_op_workload(with_comm_sms(stage, comm, compute, 0)));
  REQUIRE(!reserved.empty());
  REQUIRE(shared.size() == reserved.size());
  for (int g : reserved) CHECK(g == 0);  // the 20-SM partition, whole
  for (int g : shared) CHECK(g == kDeepEpDefaultSms);
  // On 20 of the 132 shared SMs the kernels keep the pace they have on a partition of 20.
  const double reserved_ms = run_scenario(stage).streams[1].busy_mean.to_ms();
  const double shared_ms = run_scenario(with_comm_sms(stage, comm, compute, 0)).streams[1].busy_mean.to_ms();
  CHECK(shared_ms == Approx(reserved_ms).epsilon(0.02));
}

TEST_CASE("sweep: a scenario with a training run gets its GPU-hours at every point", "[sweep]") {
  cs::test::TempDir dir;
  const std::string path = dir.file("t.yaml");
  std::ofstream(path) << cs::test::tiny_training_scenario("  phases: [{name: all, steps: 10, global_batch: 8}]\n");
  SweepSpec spec = load_sweep_file(path);
  add_comm_sms_axis(spec, {10, 20});
  for (const SweepRecord& r : run_all(spec, 2)) {
    REQUIRE(r.status == "ok");
    CHECK(std::stod(r.metric("gpu_hours")) == Approx(10 * 8 * step_ms(r) / 1000 / 3600).epsilon(1e-3));
  }
  spec.training = false;
  CHECK(run_all(spec, 1)[0].metric("gpu_hours").empty());
}

TEST_CASE("sweep: a point that fails is recorded with its error, and the others run", "[sweep]") {
  const SweepSpec spec = overlap_sweep({20, 132, 200, 24});
  const auto records = run_all(spec, 2);
  CHECK(records[0].status == "ok");
  CHECK(records[1].status == "failed");
  CHECK(records[1].message == spec.base_file + ": cannot give partition 'comm' 132 SMs: it and 'compute' hold 132, and the "
                                               "compute partition needs at least one");
  CHECK(records[1].metric("step_ms").empty());
  CHECK(records[2].status == "failed");
  CHECK(records[3].status == "ok");
  SweepSpec named = overlap_sweep({20});
  named.comm_partition = "nccl";
  CHECK(run_all(named, 1)[0].message ==
        named.base_file + ": the cluster has no SM partition 'nccl' (it has compute, comm); name one with --comm-partition");
  named.comm_partition = "compute";
  CHECK(run_all(named, 1)[0].message == named.base_file + ": the communication and compute partitions must differ");
  CHECK_THROWS_AS(add_comm_sms_axis(named, {4}), cs::hw::UserError);  // it already sweeps comm_sms
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

}  // namespace CS_TEST_FILE
