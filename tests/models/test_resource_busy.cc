// Busy shares by kind of resource: SM partitions as the union of their streams' op intervals,
// links as their busy time, over the GPUs that ran ops.
#include <catch2/catch.hpp>

#include <string>

#include "models/scenario_loader.h"
#include "models/scenario_runner.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

const ResourceBusy& find(const RunResult& r, const std::string& name) {
  for (const ResourceBusy& b : r.resources)
    if (b.resource == name) return b;
  FAIL("no resource " << name);
  return r.resources.front();
}

}  // namespace

TEST_CASE("resource busy shares: partitions count overlapping streams once, links per GPU", "[run][resources]") {
  // GPU 0 sends 1 GiB to GPU 1 at 100 GB/s (10.74 ms) while a pure-memory kernel of 0.5 GiB
  // keeps its compute partition busy; GPU 1 runs two kernels of the same size on one partition in
  // two streams, which run side by side (each with half the partition), so they count once.
  const Scenario sc = load_scenario_text(R"(schema_version: 1
name: busy
cluster:
  gpu: h800
  gpus: 2
  sm_partitions: {compute: 112, comm: 20}
  fabric: {kind: switch, link_bw_GBps: 100, link_lat_ns: 0}
workload:
  kind: ops
  streams:
    - {name: send, gpus: [0], partition: comm, ops: [{send: {size_MiB: 1024, to: 1}}]}
    - {name: a, gpus: [0, 1], partition: compute, ops: [{compute: {gflop: 0, hbm_MiB: 512}}]}
    - {name: b, gpus: [1], partition: compute, ops: [{compute: {gflop: 0, hbm_MiB: 512}}]}
)", "busy.yaml");
  const RunResult r = run_scenario(sc);
  REQUIRE(r.resources.size() == 5);
  CHECK(r.resources[0].resource == "compute SMs");
  CHECK(r.resources[1].resource == "comm SMs");
  const double span = r.makespan.to_seconds();
  const double send_s = 1024.0 * 1048576 / 100e9;
  CHECK(span == Approx(send_s).epsilon(0.01));  // the send is the longest op
  // comm SMs: only GPU 0 ran a comm op, busy for the whole send.
  CHECK(find(r, "comm SMs").gpus == 1);
  CHECK(find(r, "comm SMs").max_share == Approx(1).epsilon(0.01));
  // compute SMs on both GPUs; GPU 1's two kernels overlap, so its share is their span, not their sum.
  const ResourceBusy& compute = find(r, "compute SMs");
  CHECK(compute.gpus == 2);
  const StreamResult& b = r.streams.at(2);
  REQUIRE(b.name == "b");
  CHECK(compute.max_share == Approx(b.busy_max.to_seconds() / span).epsilon(1e-6));
  CHECK(compute.max_share < 1);
  // The switch links: GPU 0 sends for the whole run, GPU 1 sends nothing.
  const ResourceBusy& out = find(r, "switch out");
  CHECK(out.gpus == 2);
  CHECK(out.max_share == Approx(1).epsilon(0.01));
  CHECK(out.mean_share == Approx(0.5).epsilon(0.01));
  CHECK(out.mean_used == Approx(0.5).epsilon(0.01));  // GPU 0's link full for the whole run, GPU 1's idle
  CHECK(find(r, "comm SMs").mean_used == -1);         // SMs have no bandwidth
  const ResourceBusy& in = find(r, "switch in");
  CHECK(in.max_share == Approx(1).epsilon(0.01));
  CHECK(find(r, "HBM").max_share > 0.99);  // GPU 0's HBM feeds the send throughout
  for (const ResourceBusy& res : r.resources) {
    CHECK(res.mean_share <= res.max_share + 1e-12);
    CHECK(res.max_share <= 1);
  }
}

}  // namespace CS_TEST_FILE
