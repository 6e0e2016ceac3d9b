// A routing for stand-in tests: four GPUs, each with an HBM, a link out and a link in (its own),
// and a route from the sender's link out through one switch port (owned by no GPU) into the
// receiver's link in.
#pragma once

#include <string>
#include <vector>

#include "sim/flow_network.h"
#include "sim/routing.h"

namespace cs::test {

class FourGpus : public sim::Routing {
 public:
  // Links out and in carry 100 GB/s; the port `port_GBps`. Latencies: `out_lat` on each link out,
  // `port_lat` on the port.
  explicit FourGpus(sim::FlowNetwork& net, double port_GBps = 400, sim::Time out_lat = sim::Time(),
                    sim::Time port_lat = sim::Time()) {
    for (int g = 0; g < 4; ++g) {
      const std::string n = "gpu" + std::to_string(g);
      hbm_.push_back(net.add_link(n + ".hbm", sim::Bandwidth::gbytes_per_s(1000), sim::Time()));
      out_.push_back(net.add_link(n + ".out", sim::Bandwidth::gbytes_per_s(100), out_lat));
      in_.push_back(net.add_link(n + ".in", sim::Bandwidth::gbytes_per_s(100), sim::Time()));
    }
    port = net.add_link("switch", sim::Bandwidth::gbytes_per_s(port_GBps), port_lat);
  }
  int gpu_count() const override { return 4; }
  sim::LinkId hbm(int gpu) const override { return hbm_[gpu]; }
  void route(int src, int dst, std::vector<sim::LinkId>& out) const override {
    out.push_back(out_[src]);
    out.push_back(port);
    out.push_back(in_[dst]);
  }
  std::vector<KindedLink> gpu_links(int gpu) const override {
    return {{"HBM", hbm_[gpu]}, {"out", out_[gpu]}, {"in", in_[gpu]}};
  }
  std::vector<sim::LinkId> hbm_, out_, in_;
  sim::LinkId port;
};

}  // namespace cs::test
