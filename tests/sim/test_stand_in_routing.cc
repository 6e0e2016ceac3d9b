#include <catch2/catch.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "four_gpus.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/op_graph.h"
#include "sim/stand_in_routing.h"
#include "sim/trace_writer.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Bandwidth;
using cs::sim::Engine;
using cs::sim::FlowNetwork;
using cs::sim::LinkId;
using cs::sim::Routing;
using cs::sim::StandInRouting;
using cs::sim::Time;

using cs::test::FourGpus;

TEST_CASE("a stand-in's links take the place of its peers' in every route", "[sim][stand-in]") {
  Engine e;
  FlowNetwork net(e);
  const FourGpus base(net);
  // GPU 0 simulated for 1, GPU 2 for 3.
  const StandInRouting r(base, net, {0, 0, 2, 2});
  CHECK(r.gpu_count() == 4);
  CHECK(r.stand_in(1) == 0);
  CHECK(r.stand_in(2) == 2);
  CHECK(r.hbm(1) == base.hbm_[0]);
  CHECK(r.hbm(3) == base.hbm_[2]);
  std::vector<LinkId> path;
  r.route(0, 1, path);  // into its own peer: its own link in, as the peer's bytes into it would
  CHECK(path == std::vector<LinkId>{base.out_[0], base.port, base.in_[0]});
  path.clear();
  r.route(0, 3, path);  // into the other stand-in's peer: that stand-in's link in
  CHECK(path == std::vector<LinkId>{base.out_[0], base.port, base.in_[2]});
  path = {base.hbm_[1]};
  r.route(2, 0, path);  // appends, and leaves what was there before
  CHECK(path == std::vector<LinkId>{base.hbm_[1], base.out_[2], base.port, base.in_[0]});
  // Results still name each GPU's own links.
  CHECK(r.gpu_links(1).front().link == base.hbm_[1]);
  CHECK_THROWS_AS(StandInRouting(base, net, {0, 0, 2}), std::invalid_argument);
  CHECK_THROWS_AS(StandInRouting(base, net, {0, 0, 2, 4}), std::invalid_argument);
  // A stand-in runs, so it stands for itself: GPU 1 stands in for 0 but is stood in for by 2.
  CHECK_THROWS_AS(StandInRouting(base, net, {1, 2, 2, 3}), std::invalid_argument);
  CHECK_NOTHROW(StandInRouting(base, net, {1, 1, 2, 3}));
}

TEST_CASE("a trace draws a stand-in's HBM under the stand-in, not under a GPU it stands in for", "[sim][stand-in]") {
  Engine e;
  FlowNetwork net(e);
  const FourGpus base(net);
  const StandInRouting r(base, net, {0, 0, 0, 3});
  const cs::sim::OpGraph graph;
  std::ostringstream out;
  cs::sim::TraceWriter trace(out, graph, net, r);
  trace.on_link_load(base.hbm_[0], Time::us(1), Bandwidth::gbytes_per_s(500));
  trace.finish(Time::us(2));
  const std::string text = out.str();
  CHECK(text.find("\"name\":\"HBM util\",\"pid\":0,") != std::string::npos);
  CHECK(text.find("\"name\":\"HBM util\",\"pid\":2,") == std::string::npos);
}

TEST_CASE("a put to a stand-in's own peer shares the stand-in's link in with what it receives", "[sim][stand-in]") {
  // GPU 0 stands in for GPU 1. GPU 2 sends 1 GB to GPU 0 while GPU 0 puts 1 GB into GPU 1: in the
  // full run GPU 1's link in would carry the put and GPU 0's link in the send, 100 GB/s each, both
  // done at 10 ms. With GPU 0's links standing in for GPU 1's, GPU 0's link in carries both: 50 GB/s
  // each, 20 ms, as it would if GPU 1 also put into GPU 0 what GPU 0 puts into GPU 1.
  Engine e;
  FlowNetwork net(e);
  const FourGpus base(net);
  const StandInRouting r(base, net, {0, 0, 2, 3});
  std::vector<LinkId> put, send;
  r.route(0, 1, put);
  r.route(2, 0, send);
  Time put_done, send_done;
  net.start_flow(put, 1e9, FlowNetwork::kUncapped, [&] { put_done = e.now(); });
  net.start_flow(send, 1e9, FlowNetwork::kUncapped, [&] { send_done = e.now(); });
  e.run();
  CHECK(put_done == Time::ms(20));
  CHECK(send_done == Time::ms(20));
}

}  // namespace CS_TEST_FILE
