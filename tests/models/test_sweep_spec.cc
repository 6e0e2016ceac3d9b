// A sweep file read into points: the grid's order, the list, derived keys, constraints, errors.
#include <catch2/catch.hpp>

#include <fstream>

#include "hw/user_error.h"
#include "models/model_workload.h"
#include "models/scenario_loader.h"
#include "models/sweep_point.h"
#include "models/sweep_spec.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

std::string tiny_sweep() { return cs::test::source_dir() + "/tests/cli/data/tiny-sweep.yaml"; }

std::string set_of(const SweepPoint& p) {
  std::string s;
  for (const auto& [k, v] : p.set) s += (s.empty() ? "" : " ") + k + "=" + v.text();
  return s;
}

// A sweep file over the tiny sweep's scenario, its `sweep:` section replaced by `sweep`.
std::string write_sweep(const cs::test::TempDir& dir, const std::string& sweep) {
  const std::string base = cs::test::read_file(tiny_sweep());
  const std::string path = dir.file("s.yaml");
  std::ofstream(path) << base.substr(0, base.find("sweep:")) << sweep;
  return path;
}

std::string error_of(const std::string& path) {
  try {
    expand_sweep(load_sweep_file(path));
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sweep: the grid runs the last axis fastest, then derives and constrains each point", "[sweep]") {
  const SweepSpec spec = load_sweep_file(tiny_sweep());
  CHECK(spec.name == "tiny-moe-sweep");
  CHECK(spec.objective == SweepObjective::kDays);
  CHECK(spec.columns == std::vector<std::string>{"comm_sms", "workload.layout.pp", "workload.pipeline.schedule",
                                                 "cluster.gpus", "workload.layout.dp"});
  const auto points = expand_sweep(spec);
  REQUIRE(points.size() == 18);
  CHECK(set_of(points[0]) == "comm_sms=0 workload.layout.pp=4 workload.pipeline.schedule=1f1b cluster.gpus=8 workload.layout.dp=2");
  CHECK(set_of(points[1]) == "comm_sms=0 workload.layout.pp=4 workload.pipeline.schedule=1f1b cluster.gpus=16 workload.layout.dp=4");
  CHECK(set_of(points[2]) == "comm_sms=0 workload.layout.pp=2 workload.pipeline.schedule=dualpipe cluster.gpus=8 workload.layout.dp=4");
  CHECK(set_of(points[17]).rfind("comm_sms=200 workload.layout.pp=3", 0) == 0);
  for (const auto& p : points) {
    CHECK(p.index == &p - &points[0]);
    const bool pp3 = p.set[1].second.text() == "3";
    CHECK(p.skip == (pp3 ? "the pipeline stages must divide the GPUs" : ""));
  }
}

TEST_CASE("sweep: a point is the base scenario with its keys set, loaded as a file would be", "[sweep]") {
  const SweepSpec spec = load_sweep_file(tiny_sweep());
  const auto points = expand_sweep(spec);
  const Scenario p7 = sweep_point_scenario(spec, points[7]);  // 20 SMs, pp 4, 1f1b, 16 GPUs, dp 4
  CHECK(p7.cluster.gpus == 16);
  CHECK(p7.model->layout.pp == 4);
  CHECK(p7.model->layout.dp == 4);
  CHECK(p7.cluster.partitions[0].sms == 112);
  CHECK(p7.cluster.partitions[1].sms == 20);
  const Scenario p1 = sweep_point_scenario(spec, points[1]);  // 0 SMs: no reserved partition
  CHECK(p1.cluster.partitions[0].sms == 132);
  CHECK(p1.cluster.partitions[1].sms == 0);
  CHECK(p1.model->comm_kernel_partition(p1.cluster) == p1.model->compute_partition);  // its kernels share the compute SMs
  // The loader's errors keep their place in the base file where the value is the base's own.
  try {
    sweep_point_scenario(spec, points[3]);
    FAIL("dualpipe at pp 2 over 16 GPUs has 2 micro-batches: too few");
  } catch (const cs::hw::UserError& e) {
    CHECK(std::string(e.what()).rfind(tiny_sweep() + ":22:51: at the full batch of 16 sequences", 0) == 0);
  }
  // The base scenario itself still loads: `run` ignores the sweep section.
  CHECK(load_scenario_file(tiny_sweep()).cluster.gpus == 8);
}

TEST_CASE("sweep: listed points follow the grid, and derived keys read the base where a point sets nothing", "[sweep]") {
  cs::test::TempDir dir;
  const std::string path = write_sweep(dir, R"(sweep:
  grid:
    - {key: cluster.gpus, values: [8, 16]}
  points:
    - {workload.layout.pp: 2}
    - {training.usd_per_gpu_hour: 3.5}
  derive:
    workload.layout.dp: cluster.gpus / workload.layout.pp
)");
  const auto points = expand_sweep(load_sweep_file(path));
  REQUIRE(points.size() == 4);
  CHECK(set_of(points[0]) == "cluster.gpus=8 workload.layout.dp=2");
  CHECK(set_of(points[1]) == "cluster.gpus=16 workload.layout.dp=4");
  CHECK(set_of(points[2]) == "workload.layout.pp=2 workload.layout.dp=4");
  CHECK(set_of(points[3]) == "training.usd_per_gpu_hour=3.5 workload.layout.dp=2");
  CHECK(load_sweep_file(path).objective_set == false);
}

TEST_CASE("sweep: an expression that fails for a point skips it with the reason", "[sweep]") {
  cs::test::TempDir dir;
  const std::string path = write_sweep(dir, R"(sweep:
  grid:
    - {key: cluster.gpus, values: [8, 0]}
  derive:
    workload.layout.dp: cluster.gpus / (cluster.gpus - 8)
)");
  const auto points = expand_sweep(load_sweep_file(path));
  CHECK(points[0].skip == "division by zero in 'cluster.gpus / (cluster.gpus - 8)'");
  CHECK(points[1].skip.empty());
}

TEST_CASE("sweep: mistakes in the sweep section are refused at their place before anything runs", "[sweep]") {
  cs::test::TempDir dir;
  const std::string f = dir.file("s.yaml");
  const int line = 23;  // where the tiny scenario's `sweep:` starts
  auto err = [&](const std::string& sweep) { return error_of(write_sweep(dir, sweep)); };
  CHECK(err("sweep:\n  grd: []\n") ==
        f + ":" + std::to_string(line + 1) + ":3: unknown key 'grd' in 'sweep'; did you mean 'grid'?");
  CHECK(err("sweep:\n  grid:\n    - {key: comm_sms, values: [0]}\n    - {key: comm_sms, values: [4]}\n") ==
        f + ":" + std::to_string(line + 3) + ":7: 'comm_sms' is already swept by another axis");
  CHECK(err("sweep:\n  grid:\n    - {key: x, range: {from: 4, to: 0, step: 1}}\n") ==
        f + ":" + std::to_string(line + 2) + ":37: 'to' must not be below 'from'");
  CHECK(err("sweep:\n  grid:\n    - {key: x, values: [1]}\n  points:\n    - {x: 2}\n") ==
        f + ":" + std::to_string(line + 4) + ":11: 'x' is swept by the grid; a point cannot set it too");
  CHECK(err("sweep:\n  grid:\n    - {key: 'a..b', values: [1]}\n") ==
        f + ":" + std::to_string(line + 2) + ":13: 'a..b' is not a scenario key (write a dotted path such as workload.layout.pp)");
  CHECK(err("sweep:\n  grid:\n    - {key: sweep.grid, values: [1]}\n") ==
        f + ":" + std::to_string(line + 2) + ":13: a sweep cannot set its own keys");
  CHECK(err("sweep:\n  grid:\n    - {keys: [a, b], values: [[1, 2], [3]]}\n") ==
        f + ":" + std::to_string(line + 2) + ":39: each value of this axis is a list of 2 values, one per key");
  CHECK(err("sweep:\n  derive: {x: 1 +}\n") ==
        f + ":" + std::to_string(line + 1) + ":15: in the expression '1 +', at character 4: the expression ends where a value is expected");
  CHECK(err("sweep:\n  grid:\n    - {key: a, range: {from: 0, to: 1000, step: 1}}\n    - {key: b, range: {from: 0, to: 1000, step: 1}}\n") ==
        f + ":" + std::to_string(line + 2) + ":7: the sweep has more than 100000 points");
  const std::string based = dir.file("based.yaml");
  std::ofstream(based) << "schema_version: 1\nname: b\ncluster: {}\nsweep:\n  base: " << tiny_sweep() << "\n";
  CHECK(error_of(based) == based + ":3:10: a sweep with a 'base' scenario holds no scenario keys ('cluster' belongs in " +
                               tiny_sweep() + ")");
  // A key through a YAML anchor would change every place that uses it.
  const std::string aliased = dir.file("aliased.yaml");
  std::ofstream(aliased) << cs::test::read_file(cs::test::source_dir() + "/tests/broken/alias_reused_op.yaml")
                         << "sweep:\n  points:\n    - {workload.streams.2.ops.0.send.size_MiB: 64}\n";
  CHECK(error_of(aliased).find("runs through a YAML anchor that other places of the base scenario use") != std::string::npos);
}

TEST_CASE("sweep: `phases` keeps the named training phases of the base", "[sweep]") {
  cs::test::TempDir dir;
  const std::string base = cs::test::read_file(tiny_sweep());
  const std::string two = "  phases: [{name: all, tokens: 1e9, global_batch: 16},\n"
                          "           {name: long, steps: 10, global_batch: 8, workload: {seq_len: 2048}}]\n";
  const auto write = [&](const std::string& sweep) {
    std::string text = base.substr(0, base.find("sweep:"));
    text.replace(text.find("  phases: ["), text.size() - text.find("  phases: ["), two);
    const std::string path = dir.file("p.yaml");
    std::ofstream(path) << text << sweep;
    return path;
  };
  const std::string points = "  points: [{workload.layout.pp: 2, workload.layout.dp: 4}]\n";
  const SweepSpec all = load_sweep_file(write("sweep:\n" + points));
  REQUIRE(sweep_point_scenario(all, expand_sweep(all).at(0)).training->phases.size() == 2);
  const SweepSpec one = load_sweep_file(write("sweep:\n  phases: [long]\n" + points));
  CHECK(one.phases == std::vector<std::string>{"long"});
  const Scenario sc = sweep_point_scenario(one, expand_sweep(one).at(0));
  REQUIRE(sc.training->phases.size() == 1);
  CHECK(sc.training->phases[0].name == "long");
  CHECK(sc.training->phases[0].workload->seq_len == 2048);
  CHECK(sc.training->phases[0].workload->layout.pp == 2);  // the point's keys, then the phase's own
  // Picking phases changes what each point means: results on file for all phases are not reused.
  const auto pts = expand_sweep(one);
  CHECK(sweep_fingerprint(one, pts, "v") != sweep_fingerprint(all, pts, "v"));
  const std::string path = write("sweep:\n  phases: [lng]\n" + points);
  const std::string unknown = error_of(path);
  INFO(unknown);
  CHECK(unknown.find(path + ":25:12:") == 0);
  CHECK(unknown.find("'lng'") != std::string::npos);
  CHECK(unknown.find("long") != std::string::npos);
  CHECK(error_of(write("sweep:\n  phases: [long, long]\n" + points)).find("phase 'long' is listed twice") != std::string::npos);
  CHECK(error_of(write("sweep:\n  phases: []\n" + points)).find("'phases' lists no phase") != std::string::npos);
}

}  // namespace CS_TEST_FILE
