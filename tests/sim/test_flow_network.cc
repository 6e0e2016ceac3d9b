#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/engine.h"
#include "sim/flow_network.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Bandwidth;
using cs::sim::Engine;
using cs::sim::FlowId;
using cs::sim::FlowNetwork;
using cs::sim::LinkId;
using cs::sim::Time;

TEST_CASE("a transfer of S bytes over latency L and bandwidth B takes L + S/B") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(100), Time::us(3));
  Time done;
  net.start_flow({l}, 1e9, FlowNetwork::kUncapped, [&] { done = e.now(); });
  e.run();
  CHECK(done == Time::us(3) + Time::ms(10));
}

TEST_CASE("latencies add along a path, bandwidth is the slowest link's") {
  Engine e;
  FlowNetwork net(e);
  const LinkId a = net.add_link("a", Bandwidth::gbytes_per_s(100), Time::us(1));
  const LinkId b = net.add_link("b", Bandwidth::gbytes_per_s(50), Time::us(2));
  Time done;
  net.start_flow({a, b}, 5e8, FlowNetwork::kUncapped, [&] { done = e.now(); });
  e.run();
  CHECK(done == Time::us(3) + Time::ms(10));
}

TEST_CASE("two flows on one link get half each, then the survivor speeds up") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(100), Time());
  Time small_done, big_done;
  // 1 GB and 3 GB: both at 50 GB/s until the small one ends at 20 ms (1 GB moved by each);
  // the big one then has 2 GB left at 100 GB/s: 20 ms more, 40 ms in all.
  net.start_flow({l}, 1e9, FlowNetwork::kUncapped, [&] { small_done = e.now(); });
  net.start_flow({l}, 3e9, FlowNetwork::kUncapped, [&] { big_done = e.now(); });
  e.run();
  CHECK(small_done == Time::ms(20));
  CHECK(big_done == Time::ms(40));
}

TEST_CASE("a flow that joins later slows the running one from that moment") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(100), Time());
  Time first_done, second_done;
  net.start_flow({l}, 2e9, FlowNetwork::kUncapped, [&] { first_done = e.now(); });
  e.at(Time::ms(10), [&] {
    // At 10 ms the first has 1 GB left; both now move at 50 GB/s: first ends at 30 ms having
    // moved 1 GB; the second moved 1 GB by then and needs 0.5 GB more at 100 GB/s: 35 ms.
    net.start_flow({l}, 1.5e9, FlowNetwork::kUncapped, [&] { second_done = e.now(); });
  });
  e.run();
  CHECK(first_done == Time::ms(30));
  CHECK(second_done == Time::ms(35));
}

TEST_CASE("a rate cap binds and can be raised mid-flight") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(100), Time());
  Time done;
  const auto f = net.start_flow({l}, 2e9, Bandwidth::gbytes_per_s(10), [&] { done = e.now(); });
  // 100 ms at 10 GB/s moves 1 GB; the rest at the link's 100 GB/s takes 10 ms.
  e.at(Time::ms(100), [&] { net.set_cap(f, FlowNetwork::kUncapped); });
  e.run();
  CHECK(done == Time::ms(110));
}

TEST_CASE("link capacity changes apply to the flows crossing it") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(10), Time());
  Time done;
  net.start_flow({l}, 2e9, FlowNetwork::kUncapped, [&] { done = e.now(); });
  e.at(Time::ms(100), [&] { net.set_capacity(l, Bandwidth::gbytes_per_s(20)); });
  e.run();
  CHECK(done == Time::ms(150));
}

TEST_CASE("flows on disjoint links do not disturb each other, and reallocation stays local") {
  Engine e;
  FlowNetwork net(e);
  const LinkId a = net.add_link("a", Bandwidth::gbytes_per_s(10), Time());
  const LinkId b = net.add_link("b", Bandwidth::gbytes_per_s(10), Time());
  Time a_done;
  const auto fa = net.start_flow({a}, 1e9, FlowNetwork::kUncapped, [&] { a_done = e.now(); });
  for (int i = 0; i < 5; ++i)
    e.at(Time::ms(10 * i + 1), [&] { net.start_flow({b}, 1e7, FlowNetwork::kUncapped, [] {}); });
  e.at(Time::ms(50), [&] { CHECK(net.rate(fa).gbytes_per_s() == Approx(10.0)); });
  e.run();
  CHECK(a_done == Time::ms(100));
  // The flow on `a` keeps its rate: its completion event was never moved.
  CHECK(net.stats(a).busy == Time::ms(100));
}

TEST_CASE("a reallocation counts the flows it gathered and those whose rate changed", "[sim][flow]") {
  Engine e;
  FlowNetwork net(e);
  const LinkId a = net.add_link("a", Bandwidth::gbytes_per_s(10), Time());
  const LinkId b = net.add_link("b", Bandwidth::gbytes_per_s(10), Time());
  // One instant: two flows share `a`, one is alone on `b`: one reallocation of three flows, all
  // new (from no rate to one).
  net.start_flow({a}, 1e8, FlowNetwork::kUncapped, [] {});
  net.start_flow({a}, 2e8, FlowNetwork::kUncapped, [] {});
  net.start_flow({b}, 1e9, FlowNetwork::kUncapped, [] {});
  const auto counts = [&](uint64_t reallocations, uint64_t gathered, uint64_t changed) {
    CHECK(net.reallocations() == reallocations);
    CHECK(net.flows_reallocated() == gathered);
    CHECK(net.rate_changes() == changed);
  };
  e.at(Time::ms(1), [&] { counts(1, 3, 3); });
  // At 20 ms the first flow on `a` ends: only a's component is gathered; its survivor doubles.
  e.at(Time::ms(21), [&] { counts(2, 4, 4); });
  // A flow capped at 5 GB/s joins `b`: both gathered, both change (the old one 10 to 5 GB/s).
  FlowId c;
  e.at(Time::ms(25), [&] { c = net.start_flow({b}, 1e9, Bandwidth::gbytes_per_s(5), [] {}); });
  e.at(Time::ms(25) + Time::us(1), [&] { counts(3, 6, 6); });
  // A cap raised above the fair share gathers both again and moves neither rate.
  e.at(Time::ms(26), [&] { net.set_cap(c, Bandwidth::gbytes_per_s(6)); });
  e.at(Time::ms(26) + Time::us(1), [&] { counts(4, 8, 6); });
  e.run();
}

TEST_CASE("a zero-byte flow completes after the path latency") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(10), Time::us(7));
  Time done = Time::max();
  net.start_flow({l}, 0, FlowNetwork::kUncapped, [&] { done = e.now(); });
  e.run();
  CHECK(done == Time::us(7));
  CHECK(net.active_flows() == 0);
}

TEST_CASE("link statistics integrate carried bytes and busy time") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(100), Time());
  net.start_flow({l}, 1e9, FlowNetwork::kUncapped, [] {});
  e.at(Time::ms(50), [&] { net.start_flow({l}, 5e8, FlowNetwork::kUncapped, [] {}); });
  e.run();
  const auto st = net.stats(l);
  CHECK(st.bytes == Approx(1.5e9));
  CHECK(st.busy == Time::ms(15));  // busy 0-10 ms, idle until 50 ms, busy 50-55 ms
}

TEST_CASE("a flow crossing a link twice (a local copy: read and write) uses it at twice its rate") {
  Engine e;
  FlowNetwork net(e);
  const LinkId hbm = net.add_link("hbm", Bandwidth::gbytes_per_s(300), Time());
  Time copy_done, kernel_done;
  // Alone the copy moves at 150 GB/s (300 of traffic). Beside a kernel crossing once, max-min
  // gives both 100 GB/s (100 + 2 x 100 = 300) until the kernel's 1 GB ends at 10 ms; the copy's
  // remaining 2 GB then go at 150 GB/s.
  net.start_flow({hbm, hbm}, 3e9, FlowNetwork::kUncapped, [&] { copy_done = e.now(); });
  net.start_flow({hbm}, 1e9, FlowNetwork::kUncapped, [&] { kernel_done = e.now(); });
  e.run();
  CHECK(kernel_done == Time::ms(10));
  CHECK(copy_done.to_seconds() == Approx(0.010 + 2e9 / 150e9).epsilon(1e-9));
}

TEST_CASE("a saturating link carries less than it is offered, smoothly, and never more than its capacity",
          "[sim][flow][saturation]") {
  // One flow asking D = C on a queue of exponent 4 gets D (1 + 1)^(-1/4).
  for (double asked : {10.0, 100.0, 400.0}) {
    Engine e;
    FlowNetwork net(e);
    const LinkId hbm = net.add_link("hbm", Bandwidth::gbytes_per_s(100), Time());
    net.set_saturation(hbm, 4);
    const auto f = net.start_flow({hbm}, 1e9, Bandwidth::gbytes_per_s(asked), [] {});
    double rate = 0;
    e.at(Time::us(1), [&] { rate = net.rate(f).bytes_per_s(); });
    e.run();
    const double expect = asked * std::pow(1 + std::pow(asked / 100, 4), -0.25);
    CHECK(rate == Approx(expect * 1e9).epsilon(1e-9));
    CHECK(rate < 100e9);
  }
}

TEST_CASE("a saturating link shares in proportion to what flows ask, an ordinary one max-min",
          "[sim][flow][saturation]") {
  for (const bool queue : {true, false}) {
    Engine e;
    FlowNetwork net(e);
    const LinkId hbm = net.add_link("hbm", Bandwidth::gbytes_per_s(100), Time());
    if (queue) net.set_saturation(hbm, 4);
    const auto small = net.start_flow({hbm}, 1e9, Bandwidth::gbytes_per_s(20), [] {});
    const auto big = net.start_flow({hbm}, 1e9, Bandwidth::gbytes_per_s(120), [] {});
    double r_small = 0, r_big = 0;
    e.at(Time::us(1), [&] { r_small = net.rate(small).bytes_per_s(), r_big = net.rate(big).bytes_per_s(); });
    e.run();
    if (queue) {
      const double s = std::pow(1 + std::pow(140.0 / 100, 4), -0.25);  // X / D at D = 140
      CHECK(r_small == Approx(20e9 * s));
      CHECK(r_big == Approx(120e9 * s));
    } else {
      CHECK(r_small == Approx(20e9));  // under its fair share: all it asks
      CHECK(r_big == Approx(80e9));
    }
  }
}

TEST_CASE("a flow only queues bound asks everything: it counts as the capacity, and others are scaled by that",
          "[sim][flow][saturation]") {
  Engine e;
  FlowNetwork net(e);
  const LinkId copy = net.add_link("copy", Bandwidth::gbytes_per_s(50), Time());
  const LinkId hbm = net.add_link("hbm", Bandwidth::gbytes_per_s(100), Time());
  net.set_saturation(hbm, 4);
  // A copy asking 50 through its own link, then the queue; and a kernel asking everything.
  const auto c = net.start_flow({copy, hbm}, 1e9, FlowNetwork::kUncapped, [] {});
  const auto k = net.start_flow({hbm}, 1e9, FlowNetwork::kUncapped, [] {});
  double r_c = 0, r_k = 0;
  e.at(Time::us(1), [&] { r_c = net.rate(c).bytes_per_s(), r_k = net.rate(k).bytes_per_s(); });
  e.run();
  const double s = cs::sim::queue_share(150, 100, 4);  // offered: 50 + the capacity
  CHECK(r_c == Approx(50e9 * s));
  CHECK(r_k == Approx(100e9 - 50e9 * s));  // what the capacity leaves
}

TEST_CASE("the queue's share is (1 + (D/C)^p)^(-1/p) without overflow at any exponent", "[sim][flow][saturation]") {
  using cs::sim::queue_share;
  CHECK(queue_share(100, 100, 4) == Approx(std::pow(2.0, -0.25)));
  CHECK(queue_share(50, 100, 4) == Approx(std::pow(1 + std::pow(0.5, 4), -0.25)));
  CHECK(queue_share(300, 100, 4) == Approx(std::pow(1 + std::pow(3.0, 4), -0.25)));
  // Large exponents are a hard ceiling, not 0 or NaN: min(D, C) / D.
  CHECK(queue_share(4e12, 4.2e12, 500) == Approx(1).epsilon(1e-9));
  CHECK(queue_share(8.4e12, 4.2e12, 500) == Approx(0.5).epsilon(1e-3));
  CHECK(queue_share(1e300, 1, 64) == Approx(1e-300).epsilon(1e-3));
  CHECK(queue_share(0, 100, 4) == 1);
  CHECK(queue_share(100, 0, 4) == 0);
}

TEST_CASE("two flows only queues bound, on different queues, both move", "[sim][flow][saturation]") {
  Engine e;
  FlowNetwork net(e);
  const LinkId a = net.add_link("a", Bandwidth::gbytes_per_s(100), Time());
  const LinkId b = net.add_link("b", Bandwidth::gbytes_per_s(100), Time());
  net.set_saturation(a, 4);
  net.set_saturation(b, 4);
  Time done1, done2, done3;
  net.start_flow({a}, 1e9, FlowNetwork::kUncapped, [&] { done1 = e.now(); });
  net.start_flow({a, b}, 1e9, FlowNetwork::kUncapped, [&] { done2 = e.now(); });
  net.start_flow({b}, 1e9, FlowNetwork::kUncapped, [&] { done3 = e.now(); });
  e.run();
  // Each queue's capacity, shared max-min: 50 each, then 100 for the last.
  CHECK(done1 == Time::ms(20));
  CHECK(done2 == Time::ms(20));
  CHECK(done3 == Time::ms(20));
}

TEST_CASE("a flow that ends leaves the link's load at once for whoever asks at that instant") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(100), Time());
  // Capped at 30 and 40 GB/s: 1 GB at 30 ends at 33.3 ms, 2 GB at 40 at 50 ms.
  double at_end = -1, reported_at_end = -1, after = -1;
  net.start_flow({l}, 1e9, Bandwidth::gbytes_per_s(30), [&] {
    at_end = net.load_now(l).bytes_per_s();
    reported_at_end = net.load(l).bytes_per_s();  // the last reallocation's, until the next
    e.after(Time(), [&] { e.after(Time(), [&] { after = net.load_now(l).bytes_per_s(); }); });
  });
  net.start_flow({l}, 2e9, Bandwidth::gbytes_per_s(40), [] {});
  e.run();
  CHECK(at_end == Approx(40e9));
  CHECK(reported_at_end == Approx(70e9));
  CHECK(after == Approx(40e9));  // reallocated: the survivor alone, nothing subtracted twice
  CHECK(net.load_now(l).bytes_per_s() == 0);
}

TEST_CASE("a flow that crosses a link twice counts twice, and its end leaves the link's other flows on it",
          "[sim][flow]") {
  // Link l at 100 GB/s. A, B and C cross it once, D twice (as a local copy crosses its HBM), so
  // the link is shared five ways, 20 GB/s each. C (0.2 GB) ends at 10 ms; A, B and D then get
  // 25 GB/s, and A (0.45 GB) ends at 20 ms; B and D 33.3 GB/s, D (0.6 GB) ends at 24.5 ms; B
  // (10 GB, 0.6 moved) takes the whole link for the 9.4 GB left: 118.5 ms. The order of ends
  // leaves D's crossings apart in the link's list with B between them, which is what D's end
  // must unpick without dropping B.
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(100), Time());
  Time a_done, b_done, c_done, d_done;
  net.start_flow({l}, 0.45e9, FlowNetwork::kUncapped, [&] { a_done = e.now(); });
  net.start_flow({l}, 10e9, FlowNetwork::kUncapped, [&] { b_done = e.now(); });
  net.start_flow({l}, 0.2e9, FlowNetwork::kUncapped, [&] { c_done = e.now(); });
  net.start_flow({l, l}, 0.6e9, FlowNetwork::kUncapped, [&] { d_done = e.now(); });
  e.run();
  CHECK(c_done.to_ms() == Approx(10));
  CHECK(a_done.to_ms() == Approx(20));
  CHECK(d_done.to_ms() == Approx(24.5));
  CHECK(b_done.to_ms() == Approx(118.5));
  CHECK(net.active_flows() == 0);
}

TEST_CASE("a flow that crosses a link three times ends without taking another flow off it", "[sim][flow]") {
  // Link l at 840 GB/s. E, A, G, B and C cross it once, F three times: 8 shares of 105 GB/s. C
  // (1.05 GB) ends at 10 ms, A (2.25 GB, then at 120) at 20 ms, B (3.65 GB, then at 140) at
  // 30 ms, F (5.33 GB, then at 168) at 40 ms; E and G then share 420 GB/s each: E (9.53 GB) ends
  // at 50 ms, G (13.73 GB, 4.2 left at 840) at 55 ms. The ends leave F's crossings at slots 1, 3
  // and 4 with G between them; taking F off must not take one detached crossing's old slot for
  // a live one.
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link("l", Bandwidth::gbytes_per_s(840), Time());
  Time a, b, c, ee, f, g;
  net.start_flow({l}, 9.53e9, FlowNetwork::kUncapped, [&] { ee = e.now(); });
  net.start_flow({l}, 2.25e9, FlowNetwork::kUncapped, [&] { a = e.now(); });
  net.start_flow({l}, 13.73e9, FlowNetwork::kUncapped, [&] { g = e.now(); });
  net.start_flow({l}, 3.65e9, FlowNetwork::kUncapped, [&] { b = e.now(); });
  net.start_flow({l}, 1.05e9, FlowNetwork::kUncapped, [&] { c = e.now(); });
  net.start_flow({l, l, l}, 5.33e9, FlowNetwork::kUncapped, [&] { f = e.now(); });
  e.run();
  CHECK(c.to_ms() == Approx(10));
  CHECK(a.to_ms() == Approx(20));
  CHECK(b.to_ms() == Approx(30));
  CHECK(f.to_ms() == Approx(40));
  CHECK(ee.to_ms() == Approx(50));
  CHECK(g.to_ms() == Approx(55));
  CHECK(net.active_flows() == 0);
}

}  // namespace CS_TEST_FILE
