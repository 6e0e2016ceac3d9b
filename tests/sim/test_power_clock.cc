// The SM clock under a power limit (Executor with a power-capped cost model): the controller sets
// each GPU's clock from its draw averaged over a window, and running GEMMs follow it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "sim/op_graph.h"
#include "sim/power_window.h"
#include "sim_fixture.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Bandwidth;
using cs::sim::DType;
using cs::sim::GemmShape;
using cs::sim::OpGraph;
using cs::sim::PowerLoad;
using cs::sim::Time;
using cs::test::World;

namespace {

// A GEMM on all 132 SMs draws 1000 W; the limit allows 500. The controller averages over 40 ms
// (blocks of 5 ms) and clocks down in proportion to the excess; a GEMM's whole time follows the
// clock (2000 MHz at most).
class PowerCost : public cs::test::TestCost {
 public:
  double gemm_W = 1000;  // on all 132 SMs
  double J_per_byte = 0;  // HBM
  bool power_capped() const override { return true; }
  PowerLoad gemm_power(int, const GemmShape&, int sms) const override { return {gemm_W * sms / 132, 0, 0}; }
  double hbm_J_per_byte(int) const override { return J_per_byte; }
  Time power_window(int) const override { return Time::ms(40); }
  double power_clock_MHz(int, const PowerLoad& avg) const override {
    const double w = avg.gemm_W + avg.hbm_W;
    return w <= 500 ? 2000 : 2000 * 500 / w;
  }
  double gemm_stretch(int, double MHz) const override { return 2000 / MHz; }
};

struct Clocks : cs::sim::ExecObserver {
  void on_op_start(uint32_t, Time) override {}
  void on_op_end(uint32_t, Time) override {}
  void on_clock(int gpu, Time now, double MHz) override { seen.push_back({gpu, now, MHz}); }
  struct Seen {
    int gpu;
    Time t;
    double MHz;
  };
  std::vector<Seen> seen;
};

// 2048 x 2048 tiles on every SM; k sets the GEMM's time at 1 TFLOP/s per SM.
GemmShape gemm_of_ms(double ms) {
  const double flops = ms * 1e-3 * 132 * 1e12;
  return {2048, 2048, static_cast<int64_t>(flops / (2.0 * 2048 * 2048)), DType::kBf16, 1};
}
double ms_of(const GemmShape& g) { return 2.0 * g.m * g.n * g.k / (132 * 1e12) * 1e3; }

struct Run {
  cs::sim::ExecResult r;
  Clocks clocks;
  Time engine_end;
};

// GEMMs of `gemm_ms` on GPU 0, each after a `gap_ms` kernel that draws nothing.
void run(Run& out, int n, double gemm_ms, double gap_ms) {
  World w(1, {{"compute", 132}}, Bandwidth::gbytes_per_s(100), Time());
  PowerCost cost;
  OpGraph g;
  const auto s = g.add_stream(0, 0, "compute");
  for (int i = 0; i < n; ++i) {
    if (gap_ms > 0) g.add_compute(s, {gap_ms * 1e-3 * 132 * 1e12, 0}, "gap");
    g.add_gemm(s, gemm_of_ms(gemm_ms), "gemm");
  }
  cs::sim::Executor exec(w.engine, w.net, w.routing, cost, w.pools, g);
  exec.set_observer(&out.clocks);
  out.r = exec.run();
  out.engine_end = w.engine.now();
}

}  // namespace

TEST_CASE("a GEMM that outlasts the power window slows down as the controller sees its draw", "[sim][power]") {
  Run run1;
  run(run1, 1, 100, 0);
  const GemmShape g = gemm_of_ms(100);
  const double ref = ms_of(g);
  // The window fills 1000 W x t / 40 ms: within the limit up to 20 ms; the ticks at 25, 30 and
  // 35 ms see 625, 750 and 875 W (1600, 1333 and 1143 MHz), from 40 ms on 1000 W (1000 MHz: half
  // speed). Work done by 40 ms: 25 + 5/1.25 + 5/1.5 + 5/1.75 reference ms; the rest at half speed.
  const double by40 = 25 + 5 / 1.25 + 5 / 1.5 + 5 / 1.75;
  const double end_ms = 40 + (ref - by40) * 2;
  CHECK(run1.r.makespan.to_ms() == Approx(end_ms).epsilon(1e-6));
  const double mean = (2000 * 25 + 1600 * 5 + 2000 * 500 / 750.0 * 5 + 2000 * 500 / 875.0 * 5 + 1000 * (end_ms - 40)) / end_ms;
  REQUIRE(run1.r.gemm_mean_MHz.size() == 1);
  CHECK(run1.r.gemm_mean_MHz[0] == Approx(mean).epsilon(1e-6));
  // The observer saw the starting clock at 0, then each change from the first one at 25 ms; the
  // last is the idle clock, once the window has emptied. Then the ticks stop: the run ends (no
  // event left) within a window and a block of the GEMM's end.
  REQUIRE(run1.clocks.seen.size() >= 6);
  CHECK(run1.clocks.seen[0].t == Time());
  CHECK(run1.clocks.seen[0].MHz == 2000);
  CHECK(run1.clocks.seen[1].t == Time::ms(25));
  CHECK(run1.clocks.seen[1].MHz == 1600);
  CHECK(run1.clocks.seen.back().MHz == 2000);
  CHECK(run1.engine_end > run1.r.makespan);
  CHECK(run1.engine_end <= run1.r.makespan + Time::ms(45));
}

TEST_CASE("GEMM bursts with gaps stay at the full clock where back-to-back ones are clocked down", "[sim][power]") {
  // 5 ms GEMMs after 15 ms gaps: a quarter of 1000 W on average, within the limit.
  Run bursts;
  run(bursts, 20, 5, 15);
  const double ref = ms_of(gemm_of_ms(5));
  CHECK(bursts.r.makespan.to_ms() == Approx(20 * (ref + 15)).epsilon(1e-6));
  CHECK(bursts.r.gemm_mean_MHz[0] == Approx(2000));
  CHECK(bursts.clocks.seen.size() == 1);  // the starting clock only
  // Back to back, the same GEMMs run at 1000 MHz once the window is full: far longer.
  Run packed;
  run(packed, 20, 5, 0);
  CHECK(packed.r.makespan.to_ms() > 20 * ref * 1.6);
  CHECK(packed.r.gemm_mean_MHz[0] < 1300);
  // The same input gives the same answer.
  Run again;
  run(again, 20, 5, 0);
  CHECK(again.r.makespan == packed.r.makespan);
}

TEST_CASE("the bytes a GPU's HBM moves draw power too: a copy beside a GEMM clocks it down", "[sim][power]") {
  // A 100 ms GEMM drawing 400 W alone stays within the limit; beside it, a copy-engine send of
  // 8 GB at 100 GB/s (80 ms) reads 100 GB/s from its HBM at 5 nJ a byte: 500 W more.
  const auto gemm_end = [](bool send) {
    World w(2, {{"compute", 132}}, Bandwidth::gbytes_per_s(100), Time());
    PowerCost cost;
    cost.gemm_W = 400;
    cost.J_per_byte = 5e-9;
    OpGraph g;
    const auto gemm = g.add_gemm(g.add_stream(0, 0, "compute"), gemm_of_ms(100), "gemm");
    if (send) g.add_send(g.add_stream(0, 0, "p2p"), 1, 8e9, "send", cs::sim::Mover::kCopyEngine);
    cs::sim::Executor exec(w.engine, w.net, w.routing, cost, w.pools, g);
    const auto r = exec.run();
    REQUIRE(r.stuck_ops.empty());
    return std::make_pair(r.ops[gemm.v].end, r.gemm_mean_MHz[0]);
  };
  const auto [alone, alone_MHz] = gemm_end(false);
  CHECK(alone.to_ms() == Approx(ms_of(gemm_of_ms(100))).epsilon(1e-9));
  CHECK(alone_MHz == Approx(2000));
  const auto [beside, beside_MHz] = gemm_end(true);
  // 900 W once the window is full (from 40 to 80 ms): 1111 MHz, the GEMM at 0.56 of its speed;
  // the full clock before the window passes the limit (22 ms) and once the send has left it.
  CHECK(beside.to_ms() > alone.to_ms() * 1.3);
  CHECK(beside_MHz < 1600);
}

TEST_CASE("a memory-bound kernel's bytes and a send's bytes at its destination draw power too", "[sim][power]") {
  // The GEMM: 100 ms at 400 W alone, within the limit. Before it on its stream, a memory-bound
  // kernel of 100 ms moving 20 GB (200 GB/s at 5 nJ a byte: 1000 W): the window still holds its
  // draw when the GEMM starts, so the GEMM starts clocked down.
  const auto gemm_ms = [](bool memory_bound, bool receive) {
    World w(2, {{"compute", 132}, {"comm", 0}}, Bandwidth::gbytes_per_s(100), Time());
    w.cost.copy_per_sm = 1e12;
    PowerCost cost;
    cost.gemm_W = 400;
    cost.J_per_byte = 5e-9;
    cost.copy_per_sm = 1e12;
    OpGraph g;
    const auto s1 = g.add_stream(1, 0, "compute");
    if (memory_bound) g.add_compute(s1, {100e-3 * 132 * 1e12, 20e9}, "memory-bound");
    const auto gemm = g.add_gemm(s1, gemm_of_ms(100), "gemm");
    // GPU 0 sends 8 GB to GPU 1 by an SM kernel: 80 ms at the link's 100 GB/s, written into GPU 1's
    // HBM; GPU 1 runs no communication kernel of its own.
    if (receive) g.add_send(g.add_stream(0, 0, "p2p"), 1, 8e9, "send");
    cs::sim::Executor exec(w.engine, w.net, w.routing, cost, w.pools, g);
    const auto r = exec.run();
    REQUIRE(r.stuck_ops.empty());
    return (r.ops[gemm.v].end - r.ops[gemm.v].start).to_ms();
  };
  const double alone = gemm_ms(false, false);
  CHECK(alone == Approx(ms_of(gemm_of_ms(100))).epsilon(1e-9));
  CHECK(gemm_ms(true, false) > alone * 1.05);
  CHECK(gemm_ms(false, true) > alone * 1.3);
}

TEST_CASE("without a power limit nothing is clocked and no clock is reported", "[sim][power]") {
  World w(1, {{"compute", 132}}, Bandwidth::gbytes_per_s(100), Time());
  OpGraph g;
  g.add_gemm(g.add_stream(0, 0, "compute"), gemm_of_ms(100), "gemm");
  const auto r = w.run(g);
  CHECK(r.gemm_mean_MHz.empty());
  CHECK(r.makespan.to_ms() == Approx(ms_of(gemm_of_ms(100))).epsilon(1e-9));
}

TEST_CASE("a power window averages the draw over its blocks", "[sim][power]") {
  cs::sim::PowerWindow w(Time::ms(8));  // 8 blocks of 1 ms
  CHECK(w.block() == Time::ms(1));
  CHECK(w.idle());
  w.set(Time(), {100, 0, 20});
  CHECK(w.close_block(Time::ms(1)).gemm_W == Approx(100.0 / 8));
  w.set(Time::us(1500), {});
  const PowerLoad two = w.close_block(Time::ms(2));  // 1.5 ms of 100 W (and 20 W of HBM) over 8 ms
  CHECK(two.gemm_W == Approx(150.0 / 8));
  CHECK(two.hbm_W == Approx(30.0 / 8));
  CHECK_FALSE(w.idle());
  for (int k = 3; k <= 9; ++k) w.close_block(Time::ms(k));
  CHECK(w.close_block(Time::ms(10)).gemm_W == 0);  // both busy blocks have left the window
  CHECK(w.idle());
}

namespace {

// PowerCost whose attention kernels follow the clock by `share` of their time at 2000 MHz
// (t = A + B / f, as the profile's kernel_clock section says), or not at all.
class ShareCost : public PowerCost {
 public:
  bool follows = true;
  double share = 1;
  bool compute_follows_clock(int, const cs::sim::GenericCompute& c) const override {
    return follows && c.kind == cs::sim::ComputeKind::kAttentionForward;
  }
  double compute_stretch(int, double MHz, const cs::sim::GenericCompute& c) const override {
    return compute_follows_clock(0, c) ? (1 - share) + share * 2000 / MHz : 1.0;
  }
};

// An attention kernel of 100 ms at the reference clock on 32 SMs, beside a 200 ms GEMM on the
// other 100 SMs (758 W: the controller clocks the GPU down to 1320 MHz once its window is full).
// Returns the kernel's end and the clocks the observer saw.
std::pair<Time, std::vector<Clocks::Seen>> attention_beside_gemm(bool follows, double share, bool gemm) {
  World w(1, {{"gemm", 100}, {"other", 32}}, Bandwidth::gbytes_per_s(100), Time());
  ShareCost cost;
  cost.follows = follows;
  cost.share = share;
  OpGraph g;
  if (gemm) {
    const double flops = 200e-3 * 100 * 1e12;
    g.add_gemm(g.add_stream(0, 0, "gemm"), {2048, 2048, static_cast<int64_t>(flops / (2.0 * 2048 * 2048)), DType::kBf16, 1},
               "gemm");
  }
  cs::sim::GenericCompute attn{100e-3 * 32 * 1e12, 0};
  attn.kind = cs::sim::ComputeKind::kAttentionForward;
  const auto op = g.add_compute(g.add_stream(0, 1, "attention"), attn, "attention");
  Clocks clocks;
  cs::sim::Executor exec(w.engine, w.net, w.routing, cost, w.pools, g);
  exec.set_observer(&clocks);
  const auto r = exec.run();
  REQUIRE(r.stuck_ops.empty());
  return {r.ops[op.v].end, clocks.seen};
}

// Where a kernel of `ref_ms` at the reference clock ends, re-rated at each clock in `seen` by
// its stretch at that clock: its work progresses at 1 / stretch reference ms per ms.
double end_by_clocks_ms(double ref_ms, double share, const std::vector<Clocks::Seen>& seen) {
  double done = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    const double stretch = (1 - share) + share * 2000 / seen[i].MHz;
    const double from = seen[i].t.to_ms();
    const double to = i + 1 < seen.size() ? seen[i + 1].t.to_ms() : 1e9;
    if (done + (to - from) / stretch >= ref_ms) return from + (ref_ms - done) * stretch;
    done += (to - from) / stretch;
  }
  return -1;
}

}  // namespace

TEST_CASE("a kernel that follows the clock by a share is re-rated at every clock change, one that does not keeps its time",
          "[sim][power]") {
  // Alone the GPU draws nothing: the clock stays at the reference, and so does the kernel's time.
  CHECK(attention_beside_gemm(true, 1, false).first.to_ms() == Approx(100).epsilon(1e-9));
  // Beside the GEMM, a kernel the cost model says does not follow the clock keeps its 100 ms.
  const auto [fixed, fixed_clocks] = attention_beside_gemm(false, 1, true);
  CHECK(fixed.to_ms() == Approx(100).epsilon(1e-9));
  REQUIRE(fixed_clocks.size() >= 3);
  CHECK(std::min_element(fixed_clocks.begin(), fixed_clocks.end(), [](auto& a, auto& b) { return a.MHz < b.MHz; })->MHz <
        1400);
  // Followed wholly, or by half, it ends where its work integrated over the clocks seen ends.
  const auto [whole, whole_clocks] = attention_beside_gemm(true, 1, true);
  CHECK(whole.to_ms() == Approx(end_by_clocks_ms(100, 1, whole_clocks)).epsilon(1e-6));
  const auto [half, half_clocks] = attention_beside_gemm(true, 0.5, true);
  CHECK(half.to_ms() == Approx(end_by_clocks_ms(100, 0.5, half_clocks)).epsilon(1e-6));
  CHECK(whole.to_ms() > half.to_ms());
  CHECK(half.to_ms() > 105);  // the clock is down from 25 ms on: at least a few ms lost by 100 ms
}

}  // namespace CS_TEST_FILE
