// A minimal world for engine tests: GPUs on one star switch, and a cost model with round numbers.
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost_model.h"
#include "sim/engine.h"
#include "sim/executor.h"
#include "sim/flow_network.h"
#include "sim/routing.h"
#include "sim/sm_pool.h"

namespace cs::test {

// Each SM computes 1 TFLOP/s; GEMM uses 1 tile per SM up to `tiles` = ceil(m/128)*ceil(n/128);
// HBM traffic is what the op says (generic) or zero (GEMM), unless gemm_bytes is set.
class TestCost : public sim::CostModel {
 public:
  double per_sm_flops = 1e12;
  double copy_per_sm = 10e9;  // bytes/s per comm SM
  double gemm_bytes = 0;
  std::string describe() const override { return "test"; }
  bool calibrated() const override { return true; }
  sim::ComputeCost gemm_cost(int, const sim::GemmShape& g) const override {
    return {static_cast<int>(((g.m + 127) / 128) * ((g.n + 127) / 128)), gemm_bytes};
  }
  // Every GEMM launch's question: the SMs its waves span and the other kernels' HBM rate.
  mutable std::vector<std::pair<int, double>> hbm_asked;
  double gemm_hbm_bytes(int, const sim::GemmShape&, int sms, double others_Bps) const override {
    hbm_asked.emplace_back(sms, others_Bps);
    return gemm_bytes;
  }
  sim::Time gemm_time(int, const sim::GemmShape& g, int sms) const override {
    return sim::Time::from_seconds_ceil(2.0 * g.m * g.n * g.k / (per_sm_flops * sms));
  }
  sim::ComputeCost compute_cost(int, const sim::GenericCompute& c) const override { return {1000, c.bytes}; }
  sim::Time compute_time(int, const sim::GenericCompute& c, int sms) const override {
    return sim::Time::from_seconds_ceil(c.flops / (per_sm_flops * sms));
  }
  double launch_gap_s = 0;  // before every generic kernel
  sim::Time compute_launch_gap(int, const sim::GenericCompute&) const override {
    return sim::Time::from_seconds_ceil(launch_gap_s);
  }
  double copy_beside_gemms = 0;  // the copy's rate / (1 + this x GEMM SMs / 132)
  sim::Bandwidth comm_copy_rate(int, int sms, int gemm_sms) const override {
    return sim::Bandwidth::bytes_per_s(copy_per_sm * sms / (1 + copy_beside_gemms * gemm_sms / 132.0));
  }
  double pace_per_sm = std::numeric_limits<double>::infinity();  // paced bytes/s per comm SM; none by default
  sim::Bandwidth comm_kernel_pace(int, int sms) const override {
    return sim::Bandwidth::bytes_per_s(pace_per_sm * sms);
  }
  double copy_engine_Bps = std::numeric_limits<double>::infinity();  // uncapped: route and HBM only
  sim::Bandwidth copy_engine_rate(int) const override { return sim::Bandwidth::bytes_per_s(copy_engine_Bps); }
};

// GPUs on one switch: up and down links per GPU; the latency sits on the up-link.
class StarRouting : public sim::Routing {
 public:
  StarRouting(sim::FlowNetwork& net, int gpus, sim::Bandwidth link, sim::Time lat, sim::Bandwidth hbm) {
    for (int g = 0; g < gpus; ++g) {
      hbm_.push_back(net.add_link("gpu" + std::to_string(g) + ".hbm", hbm, sim::Time()));
      up_.push_back(net.add_link("up" + std::to_string(g), link, lat));
      down_.push_back(net.add_link("down" + std::to_string(g), link, sim::Time()));
    }
  }
  int gpu_count() const override { return static_cast<int>(hbm_.size()); }
  sim::LinkId hbm(int g) const override { return hbm_[g]; }
  void route(int s, int d, std::vector<sim::LinkId>& out) const override {
    out.push_back(up_[s]);
    out.push_back(down_[d]);
  }
  std::vector<sim::LinkId> hbm_, up_, down_;
};

// Everything an executor needs, with `gpus` GPUs of `sms` SMs split as given.
struct World {
  World(int gpus, std::vector<sim::PartitionSpec> parts, sim::Bandwidth link, sim::Time lat,
        sim::Bandwidth hbm = sim::Bandwidth::gbytes_per_s(1e6), int sms = 132)
      : net(engine), routing(net, gpus, link, lat, hbm) {
    for (int g = 0; g < gpus; ++g) pools.emplace_back(sms, parts);
  }
  sim::ExecResult run(const sim::OpGraph& graph) {
    sim::Executor exec(engine, net, routing, cost, pools, graph);
    return exec.run();
  }
  sim::Engine engine;
  sim::FlowNetwork net;
  StarRouting routing;
  TestCost cost;
  std::vector<sim::SmPool> pools;
};

}  // namespace cs::test
