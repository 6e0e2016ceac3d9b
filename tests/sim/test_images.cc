// A stand-in's transfers and the transfers they stand for (sim::OpGraph::add_images): the switch
// links those cross are loaded by the stand-in's flow, once per crossing.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "four_gpus.h"
#include "sim/executor.h"
#include "sim/op_graph.h"
#include "sim/stand_in_routing.h"
#include "sim_fixture.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Bandwidth;
using cs::sim::GpuPair;
using cs::sim::LinkId;
using cs::sim::OpGraph;
using cs::sim::Time;

// The port carries one GPU's link out at full rate.
struct Port : cs::test::FourGpus {
  explicit Port(cs::sim::FlowNetwork& net) : FourGpus(net, 100, Time::us(1), Time::us(2)) {}
};

const std::vector<cs::sim::PartitionSpec> kSplit = {{"compute", 112}, {"comm", 20}};

// The makespan of `graph` with every GPU simulated, or with GPU 0 standing in for GPU 1 and 2 for 3.
double run_ms(const OpGraph& graph, bool stand_in) {
  cs::sim::Engine e;
  cs::sim::FlowNetwork net(e);
  const Port base(net);
  const cs::sim::StandInRouting stood(base, net, {0, 0, 2, 2});
  const cs::sim::Routing& routing = stand_in ? static_cast<const cs::sim::Routing&>(stood) : base;
  cs::test::TestCost cost;
  cost.copy_per_sm = 1e12;  // the links bound the copies, not the kernels
  std::vector<cs::sim::SmPool> pools(4, cs::sim::SmPool(132, kSplit));
  cs::sim::Executor exec(e, net, routing, cost, pools, graph);
  const cs::sim::ExecResult r = exec.run();
  REQUIRE(r.stuck_ops.empty());
  return r.makespan.to_ms();
}

// 1 GB put from GPU 0 into GPU 2 (and, with `both`, from GPU 1 into GPU 3 at once), with `images`
// on GPU 0's put.
double put_ms(bool stand_in, bool both, std::vector<uint32_t> (*images)(OpGraph&)) {
  OpGraph g;
  g.add_put(g.add_stream(0, 1, "comm"), {2}, {1e9}, "put", 0, images(g));
  if (both) g.add_put(g.add_stream(1, 1, "comm"), {3}, {1e9}, "put");
  return run_ms(g, stand_in);
}

std::vector<uint32_t> none(OpGraph&) { return {}; }
std::vector<uint32_t> with_peer(OpGraph& g) { return {g.add_images({{1, 3}, {0, 2}})}; }

TEST_CASE("a stand-in's put loads the switch port as the put it stands for would", "[sim][stand-in][images]") {
  // Every GPU: the two puts share the port, 50 GB/s each, so 20 ms (and 3 us of latency).
  const double full = put_ms(false, true, none);
  CHECK(full == Approx(20.003).epsilon(1e-6));
  // GPU 0 alone, without its images: the port is its own, 10 ms.
  CHECK(put_ms(true, false, none) == Approx(10.003).epsilon(1e-6));
  // With them, its flow crosses the port twice, as two puts would: full's time, and its latency
  // is still its own route's, not the images' summed.
  CHECK(put_ms(true, false, with_peer) == Approx(full).epsilon(1e-9));
  // Every GPU simulated, the images change nothing: the base routing adds no link for them.
  CHECK(put_ms(false, false, with_peer) == Approx(10.003).epsilon(1e-6));
}

TEST_CASE("image links are the switch links the other transfers cross, once per crossing", "[sim][stand-in][images]") {
  cs::sim::Engine e;
  cs::sim::FlowNetwork net(e);
  const Port base(net);
  const cs::sim::StandInRouting r(base, net, {0, 0, 2, 2});
  std::vector<LinkId> out;
  const std::vector<GpuPair> images = {{0, 2}, {1, 3}, {1, 2}, {3, 3}};
  r.image_links(0, 2, images, out);
  // (0, 2) is the put's own route; (1, 3) and (1, 2) cross the port; a local copy crosses nothing.
  CHECK(out == std::vector<LinkId>{base.port, base.port});
  out.clear();
  base.image_links(0, 2, images, out);
  CHECK(out.empty());
}

TEST_CASE("image sets are stored once and checked where a put or send takes them", "[sim][images]") {
  OpGraph g;
  const uint32_t a = g.add_images({{1, 3}, {0, 2}, {1, 3}});
  CHECK(g.add_images({{0, 2}, {1, 3}}) == a);  // sorted, repeats dropped: the same set
  CHECK(g.images(a).size() == 2);
  const uint32_t b = g.add_images({{0, 3}, {1, 2}});
  const auto s0 = g.add_stream(0, 1, "comm");
  // A set must hold the transfer itself; ids must be known; one per destination.
  CHECK_THROWS_AS(g.add_put(s0, {3}, {1.0}, "put", 0, {a}), std::invalid_argument);
  CHECK_THROWS_AS(g.add_put(s0, {2}, {1.0}, "put", 0, {b + 1}), std::invalid_argument);
  CHECK_THROWS_AS(g.add_put(s0, {2, 3}, {1.0, 1.0}, "put", 0, {a}), std::invalid_argument);
  CHECK(g.collectives().empty());  // nothing was added by the refused puts
  // A destination listed twice is one transfer, whose images are both entries' joined.
  const uint32_t c = g.add_images({{0, 2}, {1, 2}});
  const auto put = g.add_put(s0, {2, 3, 2}, {1.0, 1.0, 1.0}, "put", 0, {a, b, c});
  const cs::sim::Collective& col = g.collectives()[g.ops()[put.v].payload];
  REQUIRE(col.gpus == std::vector<int>{0, 2, 3});
  CHECK(g.images(g.image_set(col, 1)).size() == 3);  // (0, 2), (1, 2), (1, 3)
  CHECK(g.image_set(col, 2) == b);
  const auto send = g.add_send(s0, 3, 1.0, "send", cs::sim::Mover::kSms, b);
  CHECK(g.image_set(g.collectives()[g.ops()[send.v].payload], 1) == b);
  CHECK_THROWS_AS(g.add_send(s0, 2, 1.0, "send", cs::sim::Mover::kSms, b), std::invalid_argument);
  // A collective's images are relabelings of its GPUs; a put takes none of those.
  const auto ops = g.add_collective(cs::sim::CollectiveKind::kAllReduce, 1.0, {s0, g.add_stream(2, 1, "comm")}, "ar");
  CHECK_THROWS_AS(g.set_image_relabelings(ops[0], {{1}}), std::invalid_argument);
  CHECK_THROWS_AS(g.set_image_relabelings(put, {{1, 3, 2}}), std::invalid_argument);
  g.set_image_relabelings(ops[1], {{1, 3}});
  const cs::sim::Collective& ar = g.collectives()[g.ops()[ops[0].v].payload];
  CHECK(std::vector<int>(g.image_relabelings(ar).begin(), g.image_relabelings(ar).end()) == std::vector<int>{1, 3});
  CHECK(g.image_set(ar, 1) == OpGraph::kNoImages);
}

TEST_CASE("a stand-in's all-reduce loads the switch port as the one it stands for would", "[sim][stand-in][images]") {
  // A ring all-reduce between GPUs 0 and 2 stands for the same between 1 and 3.
  const auto ring_ms = [](bool stand_in, bool relabel) {
    OpGraph g;
    const auto ops = g.add_collective(cs::sim::CollectiveKind::kAllReduce, 1e9,
                                      {g.add_stream(0, 1, "comm"), g.add_stream(2, 1, "comm")}, "ar");
    if (relabel) g.set_image_relabelings(ops[0], {{1, 3}});
    if (!stand_in)
      g.add_collective(cs::sim::CollectiveKind::kAllReduce, 1e9,
                       {g.add_stream(1, 1, "comm"), g.add_stream(3, 1, "comm")}, "ar");
    return run_ms(g, stand_in);
  };
  const double full = ring_ms(false, false);
  CHECK(ring_ms(true, false) < full * 0.6);  // alone on the port
  CHECK(ring_ms(true, true) == Approx(full).epsilon(1e-9));
}

}  // namespace CS_TEST_FILE
