// Errors that only running reveals: they are still the user's, reported at a file position.
#include <catch2/catch.hpp>

#include "hw/user_error.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"

using cs::models::load_scenario_text;
using cs::models::run_scenario;

namespace {
// GPU 0 reaches all-reduce a first, GPU 1 reaches b first.
std::string opposite_order(int comm_sms) {
  return R"(schema_version: 1
name: opposite-order
cluster: {gpu: h800, gpus: 2, sm_partitions: {compute: 100, comm: )" +
         std::to_string(comm_sms) + R"(}}
workload:
  kind: ops
  streams:
    - {name: d0, gpus: [0], partition: compute, ops: [{compute: {gflop: 1}, id: d}, {compute: {gflop: 1000}, id: e}]}
    - {name: d1, gpus: [1], partition: compute, ops: [{compute: {gflop: 1}, id: e}, {compute: {gflop: 1000}, id: d}]}
    - {name: a, gpus: all, partition: comm, ops: [{all_reduce: {size_MiB: 16}, after: [d]}]}
    - {name: b, gpus: all, partition: comm, ops: [{all_reduce: {size_MiB: 16}, after: [e]}]}
)";
}
}  // namespace

TEST_CASE("collectives issued in opposite orders on a one-SM partition deadlock: a user error", "[run]") {
  // With one comm SM, each GPU's first kernel holds the SM and waits for the other GPU, which
  // waits for its own SM.
  const auto sc = load_scenario_text(opposite_order(1), "deadlock.yaml");
  try {
    run_scenario(sc);
    FAIL("the deadlock was not reported");
  } catch (const cs::hw::UserError& e) {
    CHECK(e.line() == 9);
    CHECK(e.col() == 51);  // the op map of stream a: its `{`
    CHECK_THAT(e.message(), Catch::Contains("deadlock: 4 ops never ran"));
    CHECK_THAT(e.message(), Catch::Contains("partition 'comm' more SMs"));
  }
}

TEST_CASE("the same opposite order runs when the partition holds both kernels", "[run]") {
  const auto r = run_scenario(load_scenario_text(opposite_order(2), "ok.yaml"));
  CHECK(r.makespan.ps_count() > 0);
}
