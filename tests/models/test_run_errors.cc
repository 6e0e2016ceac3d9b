// Errors that only running reveals: they are still the user's, reported at a file position.
#include <catch2/catch.hpp>

#include "hw/user_error.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

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

TEST_CASE("a transfer that would take longer than the simulator's range is a user error", "[run]") {
  const char* text = R"(schema_version: 1
name: glacial
cluster: {gpu: h800, gpus: 2, sm_partitions: {comm: 20}, fabric: {kind: switch, link_bw_GBps: 1e-8}}
workload:
  kind: ops
  streams:
    - {name: s, gpus: [0], partition: comm, ops: [{send: {to: 1, size_MiB: 1024}}]}
)";
  try {
    run_scenario(load_scenario_text(text, "glacial.yaml"));
    FAIL("no error");
  } catch (const cs::hw::UserError& e) {
    CHECK(e.file() == "glacial.yaml");
    CHECK_THAT(e.message(), Catch::Contains("outside the simulator's range"));
  }
}

TEST_CASE("collectives that would make too many transfers are refused when loading", "[run]") {
  const char* text = R"(schema_version: 1
name: huge
cluster: {gpu: h800, gpus: 65536, sm_partitions: {comm: 20}}
workload:
  kind: ops
  streams:
    - {name: s, gpus: all, partition: comm, ops: [{all_to_all: {size_MiB: 1}}]}
)";
  try {
    load_scenario_text(text, "huge.yaml");
    FAIL("no error");
  } catch (const cs::hw::UserError& e) {
    CHECK(e.line() == 7);
    CHECK_THAT(e.message(), Catch::Contains("point-to-point transfers"));
  }
}

}  // namespace CS_TEST_FILE
