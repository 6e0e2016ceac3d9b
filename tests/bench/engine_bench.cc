// clustersim-bench: engine speed, run by hand (never a timed test). Prints a table to stdout.
//
//   events   plain events per second: P self-rescheduling processes with pseudo-random delays
//            (P events pending at all times), one core.
//   flows    cost per flow event (a completion, or the start it triggers, with their reallocation)
//            with F concurrent flows kept constant (each completion starts a new flow):
//            local  - flows in small independent groups (4 flows on 2 links): the incremental
//                     solver touches one group per event;
//            global - every flow crosses one shared core link (one connected component): each
//                     event re-solves all F flows, the worst case.
//   replicas cost per flow gathered when R identical replicas act at the same instants, the shape
//            of a step that simulates every GPU: each replica an all-to-all among 8 GPUs (56 flows
//            over their HBM, NVLink out and NVLink in), sizes distinct within a replica and equal
//            across replicas, so each completion instant re-rates every replica's flows at once.
//   fabric   building the 2048-GPU and 16,384-GPU multi-plane fabrics and the 65,536-GPU
//            three-layer fat-tree (Boost.Graph), their sim links, and one route per GPU.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hw/fabric/fabric_routing.h"
#include "sim/engine.h"
#include "sim/flow_network.h"

using namespace cs::sim;

namespace {

using Clock = std::chrono::steady_clock;

struct Rng {  // xorshift64*: deterministic and cheap
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ULL;
  }
};

void bench_events(int processes, uint64_t total) {
  Engine e;
  Rng rng{88172645463325252ULL};
  uint64_t fired = 0;
  std::vector<std::function<void()>> proc(processes);
  for (int p = 0; p < processes; ++p) {
    proc[p] = [&, p] {
      if (++fired >= total) return;
      e.after(Time::ps(static_cast<int64_t>(1 + rng.next() % 1000)), proc[p]);
    };
    e.at(Time::ps(p), proc[p]);
  }
  const auto t0 = Clock::now();
  e.run();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("events  pending=%-8d events=%-10llu %8.2f M events/s  (%.1f ns/event)\n", processes,
              static_cast<unsigned long long>(e.events_processed()), e.events_processed() / s / 1e6,
              s / e.events_processed() * 1e9);
}

void bench_flows(const std::string& kind, int flows, uint64_t measured) {
  Engine e;
  FlowNetwork net(e);
  Rng rng{0x9E3779B97F4A7C15ULL};
  const bool global = kind == "global";
  const int groups = global ? 1 : (flows + 3) / 4;
  std::vector<LinkId> a, b;
  for (int g = 0; g < groups; ++g) {
    a.push_back(net.add_link(std::string("a").append(std::to_string(g)), Bandwidth::gbytes_per_s(100), Time()));
    b.push_back(net.add_link(std::string("b").append(std::to_string(g)), Bandwidth::gbytes_per_s(100), Time()));
  }
  // Global: every flow crosses the core link plus one of many edge links.
  std::vector<LinkId> edge;
  if (global)
    for (int i = 0; i < 1024; ++i)
      edge.push_back(net.add_link(std::string("e").append(std::to_string(i)), Bandwidth::gbytes_per_s(1e4), Time()));
  // Steady state: each completion starts a new flow, so `flows` stay in flight. The clock runs
  // over `measured` completions after the first allocation, then the engine stops (no drain).
  uint64_t done = 0;
  Clock::time_point t0;
  uint64_t realloc0 = 0;
  std::function<void(int)> start = [&](int slot) {
    std::vector<LinkId> path;
    if (global) {
      path = {a[0], edge[rng.next() % edge.size()]};
    } else {
      const int g = slot / 4;
      path = (slot % 2) ? std::vector<LinkId>{a[g], b[g]} : std::vector<LinkId>{a[g]};
    }
    // Distinct sizes, so that completions rarely coincide and each pays its own reallocation.
    const double bytes = 1e6 + static_cast<double>(rng.next() % 1'000'000'000);
    net.start_flow(path, bytes, FlowNetwork::kUncapped, [&, slot] {
      if (done == 0) {
        t0 = Clock::now();
        realloc0 = net.reallocations();
      }
      if (++done > measured) {
        e.stop();
        return;
      }
      start(slot);
    });
  };
  for (int f = 0; f < flows; ++f) start(f);
  e.run();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const uint64_t events = 2 * measured;  // each completion and the start it triggers
  std::printf("flows   %-6s concurrent=%-8d flow events=%-9llu %10.2f us/flow event  (%llu reallocations)\n",
              kind.c_str(), flows, static_cast<unsigned long long>(events), s / events * 1e6,
              static_cast<unsigned long long>(net.reallocations() - realloc0));
}

void bench_replicas(int replicas, int rounds) {
  Engine e;
  FlowNetwork net(e);
  constexpr int kGpus = 8;
  // Round figures near the H800's (REFERENCE.md: HBM 3.35 TB/s, NVLink about 160 GB/s); the shape
  // of the reallocations, not the rates, is what is measured.
  std::vector<LinkId> hbm, out, in;
  for (int g = 0; g < replicas * kGpus; ++g) {
    hbm.push_back(net.add_link("hbm", Bandwidth::gbytes_per_s(3000), Time()));
    out.push_back(net.add_link("out", Bandwidth::gbytes_per_s(160), Time()));
    in.push_back(net.add_link("in", Bandwidth::gbytes_per_s(160), Time()));
  }
  int left = 0, round = 0;
  std::function<void()> start_round = [&] {
    if (round++ == rounds) return;
    for (int r = 0; r < replicas; ++r)
      for (int s = 0; s < kGpus; ++s)
        for (int d = 0; d < kGpus; ++d) {
          if (s == d) continue;
          const int a = r * kGpus + s, b = r * kGpus + d;
          ++left;
          const double bytes = 1e6 * (1 + s * kGpus + d);
          net.start_flow({hbm[a], out[a], in[b], hbm[b]}, bytes, FlowNetwork::kUncapped, [&] {
            if (--left == 0) start_round();
          });
        }
  };
  start_round();
  const auto t0 = Clock::now();
  e.run();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double gathered = static_cast<double>(net.flows_reallocated());
  const auto reallocations = static_cast<double>(net.reallocations());
  std::printf("replicas %-4d flows=%-6d reallocations=%-6.0f flows gathered=%-9.0f %6.1f ns/flow gathered  "
              "(%.0f%% re-rated; %.2f us/reallocation)\n",
              replicas, replicas * kGpus * (kGpus - 1), reallocations, gathered, s / gathered * 1e9,
              100.0 * static_cast<double>(net.rate_changes()) / gathered, s / reallocations * 1e6);
}

// Builds a fabric of `nodes` HGX nodes, its sim links, and one route per GPU pair of a shift
// permutation (every GPU to the GPU half the cluster away).
void bench_fabric(int nodes, cs::hw::FabricKind kind = cs::hw::FabricKind::kMultiPlane) {
  const auto t0 = Clock::now();
  cs::hw::FabricSpec spec;
  spec.kind = kind;
  spec.nodes = nodes;
  spec.nvlink_GBps = 200;
  spec.pcie_GBps = 64;
  spec.nic_GBps = 50;
  spec.hbm_GBps = 3350;
  const cs::hw::BuiltFabric f = cs::hw::build_fabric(spec);
  const auto t1 = Clock::now();
  Engine e;
  FlowNetwork net(e);
  cs::hw::FabricRouting routing(net, f, cs::hw::PxnMode::kAtDestination);
  const auto t2 = Clock::now();
  const int gpus = static_cast<int>(f.gpu.size());
  std::vector<LinkId> path;
  size_t hops = 0;
  for (int a = 0; a < gpus; ++a) {
    path.clear();
    routing.route(a, (a + gpus / 2) % gpus, path);
    hops += path.size();
  }
  const auto t3 = Clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  const bool three = kind == cs::hw::FabricKind::kThreeLayer;
  std::printf("fabric  %-11s gpus=%-6d graph %7.1f ms  links %7.1f ms (%zu links)  %d routes %6.2f ms\n",
              three ? "three-layer" : "multi-plane", gpus, ms(t0, t1), ms(t1, t2), net.link_slots(), gpus, ms(t2, t3));
  (void)hops;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines appear as they are measured
  const std::string arg = argc > 1 ? argv[1] : "";
  const bool quick = arg == "--quick";
  const uint64_t n_events = quick ? 2'000'000 : 20'000'000;
  // 128 replicas gather 8 times 16's flows at each reallocation: an eighth of the rounds.
  const auto replicas_lines = [&] {
    for (int r : {1, 16, 128}) bench_replicas(r, (quick ? 200 : 2'000) / (r >= 128 ? 8 : 1));
  };
  if (arg == "--replicas") {  // the replicas lines alone, for profiling the every-GPU shape
    replicas_lines();
    return 0;
  }
  std::printf("# clustersim-bench%s (one core; wall-clock timings)\n", quick ? " --quick" : "");
  for (int nodes : {256, 2048}) bench_fabric(nodes);
  bench_fabric(8192, cs::hw::FabricKind::kThreeLayer);
  for (int p : {1'000, 100'000}) bench_events(p, n_events);
  for (int f : {1'000, 10'000, 100'000, 1'000'000}) bench_flows("local", f, quick ? 20'000 : 200'000);
  // A global event re-solves all F flows: fewer events at the large sizes keep the run short.
  for (int f : {1'000, 10'000, 100'000, 1'000'000})
    bench_flows("global", f, f >= 1'000'000 ? 20 : f >= 100'000 ? 200 : 2'000);
  replicas_lines();
  return 0;
}
