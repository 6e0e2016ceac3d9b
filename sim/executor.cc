#include "sim/executor.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace cs::sim {

Executor::Executor(Engine& engine, FlowNetwork& net, const Routing& routing, const CostModel& cost,
                   std::vector<SmPool>& pools, const OpGraph& graph)
    : engine_(engine), net_(net), routing_(routing), cost_(cost), pools_(pools), graph_(graph) {
  // The dependents' lists first: building them takes two counts per op for a while, which had
  // better not come on top of the timings (the largest per-op list, 16 bytes an op).
  dependents_ = graph_.dependents_of_each();
  const size_t n = graph_.ops().size();
  pending_.assign(n, 0);
  coll_.resize(graph_.collectives().size());
  gemm_sms_.assign(pools_.size(), 0);
  live_comm_.resize(pools_.size());
  ran_in_stream_.assign(graph_.streams().size(), 0);
  for (const Stream& s : graph_.streams())
    for (size_t i = 1; i < s.ops.size(); ++i) ++pending_[s.ops[i]];
  for (const DepEdge& d : graph_.deps()) ++pending_[d.later];
  timing_.resize(n);
  if (cost_.power_capped()) {
    power_.resize(routing_.gpu_count());
    for (int g = 0; g < routing_.gpu_count(); ++g) {
      power_[g].window = PowerWindow(cost_.power_window(g));
      power_[g].idle_MHz = power_[g].MHz = cost_.power_clock_MHz(g, {});
      power_[g].stretch = cost_.gemm_stretch(g, power_[g].MHz);
    }
  }
  // HBM is shared the way the cost model measured it saturating.
  if (const double p = cost_.hbm_saturation_exponent(); p > 0)
    for (int g = 0; g < routing_.gpu_count(); ++g) net_.set_saturation(routing_.hbm(g), p);
}

ExecResult Executor::run() {
  for (uint32_t o = 0; o < pending_.size(); ++o)
    if (pending_[o] == 0) ready_.push_back(o);
  if (observer_)  // the clock every GPU starts at, so that a trace's counter has a first value
    for (int g = 0; g < static_cast<int>(power_.size()); ++g) observer_->on_clock(g, engine_.now(), power_[g].MHz);
  drain();
  engine_.run();
  // The per-op counts and dependents' lists are done with: given back before the caller reads the
  // result (fresh objects, since `= {}` would keep their capacity).
  pending_ = std::vector<uint32_t>();
  dependents_ = OpLists();
  ExecResult r;
  for (uint32_t o = 0; o < timing_.size(); ++o) {
    if (!timing_[o].done())
      r.stuck_ops.push_back(o);
    else r.makespan = std::max(r.makespan, timing_[o].end);
  }
  r.ops = std::move(timing_);
  for (GpuPower& g : power_) {
    accrue_clock(g);
    r.gemm_mean_MHz.push_back(g.gemm_s > 0 ? g.gemm_MHz_s / g.gemm_s : 0.0);
  }
  return r;
}

void Executor::make_ready(uint32_t op) {
  assert(pending_[op] > 0);
  if (--pending_[op] == 0) ready_.push_back(op);
}

// Launching can finish ops at once (a collective over one rank); a queue keeps that iterative.
void Executor::drain() {
  if (draining_) return;
  draining_ = true;
  for (size_t i = 0; i < ready_.size(); ++i) launch(ready_[i]);
  ready_.clear();
  draining_ = false;
}

void Executor::launch(uint32_t op) {
  const Op& o = graph_.ops()[op];
  if (o.kind == OpKind::kCompute) {
    const Time gap = cost_.compute_launch_gap(graph_.streams()[o.stream].gpu, graph_.computes()[o.payload]);
    if (gap > Time()) {
      engine_.after(gap, [this, op] { start(op); });
      return;
    }
  }
  start(op);
}

void Executor::start(uint32_t op) {
  timing_[op].start = engine_.now();
  if (observer_) observer_->on_op_start(op, engine_.now());
  if (graph_.by_copy_engine(graph_.ops()[op])) launch_copy_engine(op);
  else if (graph_.ops()[op].kind == OpKind::kComm) launch_comm(op);
  else launch_compute(op);
}

void Executor::launch_compute(uint32_t op) {
  const Op& o = graph_.ops()[op];
  const Stream& s = graph_.streams()[o.stream];
  ComputeCost c = o.kind == OpKind::kGemm ? cost_.gemm_cost(s.gpu, graph_.gemms()[o.payload])
                                          : cost_.compute_cost(s.gpu, graph_.computes()[o.payload]);
  SmPool& pool = pools_[s.gpu];
  const int max_sms = std::max(1, std::min(c.max_sms, pool.partition(s.partition).sms));
  if (o.kind == OpKind::kGemm && c.hbm_bytes > 0) {
    // Its waves are as wide as the SMs it can get; the other kernels' traffic is the HBM load
    // as the last reallocation left it, less the kernels that ended at this instant (its own
    // stream's predecessor among them); traffic starting at the same instant is not yet in it.
    // The order of same-instant events is fixed, so the answer is too.
    const double others = net_.load_now(routing_.hbm(s.gpu)).bytes_per_s();
    c.hbm_bytes = cost_.gemm_hbm_bytes(s.gpu, graph_.gemms()[o.payload], max_sms, others);
  }
  hold_state(op);
  state(op).work = c.hbm_bytes;
  state(op).kernel = pool.start(s.partition, max_sms, [this, op](int sms) { on_compute_share(op, sms); });
}

void Executor::on_compute_share(uint32_t op, int sms) {
  const Op& o = graph_.ops()[op];
  const Stream& s = graph_.streams()[o.stream];
  OpState& st = state(op);
  const bool gemm = o.kind == OpKind::kGemm;
  Time t;
  if (sms > 0)
    t = gemm ? cost_.gemm_time(s.gpu, graph_.gemms()[o.payload], sms)
             : cost_.compute_time(s.gpu, graph_.computes()[o.payload], sms);
  if (gemm) add_gemm_sms(s.gpu, sms - st.sms);
  st.sms = sms;
  // Under a power limit a kernel runs at the clock its GPU's controller set last; `ref` keeps its
  // time at the reference clock, to re-rate it when the clock moves.
  const bool follows = !power_.empty() && (gemm || cost_.compute_follows_clock(s.gpu, graph_.computes()[o.payload]));
  const Time ref = follows ? t : Time();
  if (follows && sms > 0) t = Time::from_seconds_ceil(t.to_seconds() * clock_stretch(op));
  if (!st.flow_started) {
    // A kernel without HBM traffic progresses through one unit of work on no link.
    st.flow_started = true;
    st.on_hbm = st.work > 0;
    if (!st.on_hbm) st.work = (sms > 0 && t == Time()) ? 0.0 : 1.0;
  }
  const Bandwidth bw = Bandwidth::bytes_per_s(compute_cap(op, t));
  if (st.flow.v != UINT32_MAX) {
    net_.set_cap(st.flow, bw);
  } else {
    path_.clear();
    if (st.on_hbm) path_.push_back(routing_.hbm(s.gpu));
    st.flow = net_.start_flow(path_, st.work, bw, [this, op] {
      const int gpu = graph_.streams()[graph_.ops()[op].stream].gpu;
      if (graph_.ops()[op].kind == OpKind::kGemm) add_gemm_sms(gpu, -state(op).sms);
      pools_[gpu].end(state(op).kernel);
      if (!power_.empty()) set_draw(gpu, op, {}, Time(), false);
      finish(op);
    });
  }
  if (!power_.empty()) {
    if (st.on_hbm && sms > 0) wake_power(s.gpu);  // its bytes draw through its HBM
    const PowerLoad draw = sms == 0 ? PowerLoad{}
                           : gemm   ? cost_.gemm_power(s.gpu, graph_.gemms()[o.payload], sms)
                                    : cost_.compute_power(s.gpu, graph_.computes()[o.payload], sms);
    set_draw(s.gpu, op, draw, ref, gemm);
  }
}

double Executor::clock_stretch(uint32_t op) const {
  const Op& o = graph_.ops()[op];
  const int gpu = graph_.streams()[o.stream].gpu;
  return o.kind == OpKind::kGemm ? power_[gpu].stretch : cost_.compute_stretch(gpu, power_[gpu].MHz, graph_.computes()[o.payload]);
}

double Executor::compute_cap(uint32_t op, Time t) const {
  const OpState& st = state(op);
  if (st.sms == 0) return 0;  // no SMs: the kernel waits for some
  // A kernel with no compute time is done as soon as it runs: at once over HBM, or within one
  // picosecond for a path-less unit of work (a path-less flow needs a finite rate).
  double cap = t > Time() ? st.work / t.to_seconds() : st.on_hbm ? FlowNetwork::kUncapped.bytes_per_s() : st.work * 1e12;
  if (st.on_hbm && std::isfinite(cap)) cap = offered_alone(graph_.streams()[graph_.ops()[op].stream].gpu, cap);
  return cap;
}

void Executor::set_draw(int gpu, uint32_t op, const PowerLoad& draw, Time ref, bool gemm) {
  GpuPower& g = power_[gpu];
  accrue_clock(g);
  auto it = std::find_if(g.running.begin(), g.running.end(), [op](const RunningDraw& r) { return r.op == op; });
  if (it != g.running.end()) {
    g.gemms -= it->gemm;
    g.running.erase(it);
  }
  if (draw.any() || ref > Time()) {
    g.running.push_back({op, draw, ref, gemm});
    g.gemms += gemm;
  }
  PowerLoad sum;
  for (const RunningDraw& r : g.running) sum += r.draw;
  g.window.set(engine_.now(), sum);
  if (sum.any()) wake_power(gpu);
}

void Executor::wake_power(int gpu) {
  GpuPower& g = power_[gpu];
  g.last_wake = engine_.now();
  if (g.ticking) return;
  g.ticking = true;
  // Every flow over its HBM wakes it (a compute kernel moving bytes, each transfer of a
  // collective at both ends, a copy-engine send at both ends), and it stops only with none on it:
  // no byte moves while it sleeps, and its count goes on from its last tick.
  engine_.after(g.window.block(), [this, gpu] { power_tick(gpu); });
}

void Executor::power_tick(int gpu) {
  GpuPower& g = power_[gpu];
  // The bytes its HBM moved since the last tick, at their energy.
  const Time now = engine_.now();
  const double bytes = net_.stats(routing_.hbm(gpu)).bytes;
  g.window.add_energy({0, 0, (bytes - g.hbm_bytes) * cost_.hbm_J_per_byte(gpu)});
  g.hbm_bytes = bytes;
  const double MHz = cost_.power_clock_MHz(gpu, g.window.close_block(now));
  if (MHz != g.MHz) {
    accrue_clock(g);
    g.MHz = MHz;
    g.stretch = cost_.gemm_stretch(gpu, MHz);
    if (observer_) observer_->on_clock(gpu, engine_.now(), MHz);
    for (const RunningDraw& r : g.running) {
      if (r.ref == Time() || state(r.op).sms == 0) continue;
      net_.set_cap(state(r.op).flow, Bandwidth::bytes_per_s(compute_cap(
                                         r.op, Time::from_seconds_ceil(r.ref.to_seconds() * clock_stretch(r.op)))));
    }
  }
  // Ticks stop once the GPU has drawn nothing for a whole window and is back at its idle clock, so
  // that a finished run leaves no events behind; not while a flow woken for within the last block
  // may still wait out its path's latency (microseconds) off the HBM link.
  if (g.window.idle() && g.MHz == g.idle_MHz && g.running.empty() && net_.load_now(routing_.hbm(gpu)) == Bandwidth() &&
      now - g.last_wake >= g.window.block())
    g.ticking = false;
  else engine_.after(g.window.block(), [this, gpu] { power_tick(gpu); });
}

void Executor::accrue_clock(GpuPower& g) {
  const Time now = engine_.now();
  if (g.gemms > 0) {
    const double dt = (now - g.since).to_seconds();
    g.gemm_MHz_s += g.MHz * dt;
    g.gemm_s += dt;
  }
  g.since = now;
}

double Executor::offered_alone(int gpu, double rate) const {
  const double p = cost_.hbm_saturation_exponent();
  if (p <= 0) return rate;
  // A kernel's time comes from measuring it alone, so its HBM traffic then already waited in the
  // queue: it offers the rate D that a saturating HBM turns into `rate` (D^-p = rate^-p - C^-p),
  // and runs exactly as measured when alone. At or above the capacity it offers everything.
  // In units of C, so that no power of bytes/s under- or overflows.
  const double c = net_.capacity(routing_.hbm(gpu)).bytes_per_s();
  const double left = std::pow(rate / c, -p) - 1;
  return left > 0 ? c * std::pow(left, -1 / p) : FlowNetwork::kUncapped.bytes_per_s();
}

void Executor::launch_comm(uint32_t op) {
  const Op& o = graph_.ops()[op];
  const Stream& s = graph_.streams()[o.stream];
  OpState& st = hold_state(op);
  st.copy_link = net_.add_link("", Bandwidth(), Time());
  SmPool& pool = pools_[s.gpu];
  const int gpu = s.gpu;
  live_comm_[gpu].push_back(op);
  const uint32_t c = o.payload;
  const Collective& col = graph_.collectives()[c];
  const int partition_sms = pool.partition(s.partition).sms;
  const int max_sms = col.grid_sms > 0 ? std::min(col.grid_sms, partition_sms) : partition_sms;
  st.kernel = pool.start(s.partition, max_sms, [this, op, gpu](int sms) {
    state(op).sms = sms;
    net_.set_capacity(state(op).copy_link, cost_.comm_copy_rate(gpu, sms, gemm_sms_[gpu]));
    repace(op);
  });
  CollectiveState& cs = coll_[c];
  if (cs.arrived == 0)
    cs.plan = plan_collective(graph_, col);
  if (++cs.arrived < col.ops.size()) return;
  const Time launch = cost_.comm_launch(gpu);
  if (launch > Time()) engine_.after(launch, [this, c] { start_phase(c); });
  else start_phase(c);
}

void Executor::start_phase(uint32_t c) {
  const Collective& col = graph_.collectives()[c];
  CollectiveState& cs = coll_[c];
  if (cs.phase == cs.plan.phases) {
    finish_collective(c);
    return;
  }
  const auto& transfers = cs.plan.phase;
  cs.outstanding = static_cast<uint32_t>(transfers.size());
  cs.paced.clear();
  for (const Transfer& t : transfers) {
    const int src = col.gpus[t.src];
    const int dst = col.gpus[t.dst];
    path_.clear();
    path_.push_back(state(col.ops[t.src]).copy_link);
    path_.push_back(routing_.hbm(src));  // read
    if (src != dst) {
      routing_.route(src, dst, path_);
      path_.push_back(routing_.hbm(dst));  // written at the destination
    } else {
      path_.push_back(routing_.hbm(src));  // a local copy reads and writes the same HBM: twice its bytes
    }
    if (!power_.empty()) {  // both HBMs draw for the bytes it moves (a stand-in's for its peer's)
      wake_power(routing_.stand_in(src));
      wake_power(routing_.stand_in(dst));
    }
    // The sender's op: a put's only op (rank 0), else the rank's own.
    const uint32_t sender = col.ops[t.src < col.ops.size() ? t.src : 0];
    const bool paced = col.paced_bytes > 0 && t.src != t.dst;
    // The paced flow's index, or none: with `this` and c, 16 bytes, which std::function keeps in
    // place (a separate flag made the capture 24 bytes, allocated for every transfer).
    const uint32_t paced_index = paced ? static_cast<uint32_t>(cs.paced.size()) : UINT32_MAX;
    const size_t timed = add_image_links(col, t.src, t.dst);
    const FlowId f = net_.start_flow(
        path_, t.bytes, paced ? paced_cap(sender, t.bytes) : FlowNetwork::kUncapped,
        [this, c, paced_index] {
          CollectiveState& st = coll_[c];
          if (paced_index != UINT32_MAX) st.paced[paced_index].live = false;
          if (--st.outstanding == 0) {
            ++st.phase;
            start_phase(c);
          }
        },
        timed);
    if (paced) cs.paced.push_back({f, sender, t.bytes});
  }
  if (transfers.empty()) {
    ++cs.phase;
    start_phase(c);
  }
}

void Executor::finish_collective(uint32_t c) {
  const Collective& col = graph_.collectives()[c];
  coll_[c].plan = CollectivePlan{};  // release the transfer lists
  // A fresh vector, not `= {}`: that picks the initializer-list assignment, which keeps the
  // capacity (28,320 paced collectives' 10.9 MB in DeepSeek-V3's mirrored step).
  coll_[c].paced = std::vector<PacedFlow>();
  for (uint32_t op : col.ops) {
    const Stream& s = graph_.streams()[graph_.ops()[op].stream];
    std::vector<uint32_t>& live = live_comm_[s.gpu];
    const auto it = std::find(live.begin(), live.end(), op);
    assert(it != live.end() && "a communication kernel ended that was not running");
    live.erase(it);
    pools_[s.gpu].end(state(op).kernel);
    net_.remove_link(state(op).copy_link);
  }
  for (uint32_t op : col.ops) finish(op);
}

// No kernel, so no SMs, no copy link and no launch of a communication kernel: one flow from the
// source HBM over the route into the destination HBM, at most at the copy engine's own rate.
void Executor::launch_copy_engine(uint32_t op) {
  const Collective& col = graph_.collectives()[graph_.ops()[op].payload];
  assert(col.kind == CollectiveKind::kSend && col.gpus.size() == 2);
  const int src = col.gpus[0], dst = col.gpus[1];
  path_.clear();
  path_.push_back(routing_.hbm(src));
  if (src != dst) routing_.route(src, dst, path_);
  path_.push_back(routing_.hbm(dst));  // a local copy crosses its HBM twice, as in start_phase
  assert(cost_.copy_engine_rate(src) > Bandwidth() && "a copy-engine rate of 0 never finishes the send");
  if (!power_.empty()) {  // both HBMs draw for the bytes it moves (a stand-in's for its peer's)
    wake_power(routing_.stand_in(src));
    wake_power(routing_.stand_in(dst));
  }
  const size_t timed = add_image_links(col, 0, 1);
  net_.start_flow(
      path_, col.bytes, cost_.copy_engine_rate(src), [this, op] { finish(op); }, timed);
}

size_t Executor::add_image_links(const Collective& c, uint32_t src, uint32_t dst) {
  const size_t timed = path_.size();
  if (c.image_list == UINT32_MAX || src == dst) return timed;
  const int src_gpu = c.gpus[src], dst_gpu = c.gpus[dst];
  ImageLinks* cached;
  std::vector<GpuPair> pairs;
  if (OpGraph::one_sided(c)) {
    const uint32_t set = graph_.image_set(c, dst);
    if (set == OpGraph::kNoImages) return timed;
    if (image_links_.size() < graph_.image_sets()) image_links_.resize(graph_.image_sets());
    cached = &image_links_[set];
    if (!cached->found || cached->src != src_gpu || cached->dst != dst_gpu) {
      const std::span<const GpuPair> images = graph_.images(set);
      pairs.assign(images.begin(), images.end());
      cached->found = false;
    }
  } else {
    const size_t n = c.gpus.size();
    if (relabeled_links_.size() < graph_.relabeling_sets()) relabeled_links_.resize(graph_.relabeling_sets());
    std::vector<ImageLinks>& table = relabeled_links_[c.image_list];
    if (table.empty()) table.resize(n * n);
    cached = &table[src * n + dst];
    if (!cached->found) {
      const std::span<const int> r = graph_.image_relabelings(c);
      pairs.push_back({src_gpu, dst_gpu});
      for (size_t at = 0; at < r.size(); at += n) pairs.push_back({r[at + src], r[at + dst]});
    }
  }
  if (!cached->found) {
    cached->links.clear();
    routing_.image_links(src_gpu, dst_gpu, pairs, cached->links);
    cached->found = true;
    cached->src = src_gpu;
    cached->dst = dst_gpu;
  }
  path_.insert(path_.end(), cached->links.begin(), cached->links.end());
  return timed;
}

void Executor::add_gemm_sms(int gpu, int delta) {
  if (delta == 0) return;
  gemm_sms_[gpu] += delta;
  assert(gemm_sms_[gpu] >= 0 && "a GEMM gave back SMs it did not hold");
  for (uint32_t op : live_comm_[gpu])
    net_.set_capacity(state(op).copy_link, cost_.comm_copy_rate(gpu, state(op).sms, gemm_sms_[gpu]));
}

Bandwidth Executor::paced_cap(uint32_t op, double bytes) const {
  const Op& o = graph_.ops()[op];
  const Collective& col = graph_.collectives()[o.payload];
  const int gpu = graph_.streams()[o.stream].gpu;
  return Bandwidth::bytes_per_s(cost_.comm_kernel_pace(gpu, state(op).sms).bytes_per_s() * bytes / col.paced_bytes);
}

void Executor::repace(uint32_t op) {
  const uint32_t c = graph_.ops()[op].payload;
  for (const PacedFlow& f : coll_[c].paced)
    if (f.live && f.op == op) net_.set_cap(f.flow, paced_cap(op, f.bytes));
}

Executor::OpState& Executor::hold_state(uint32_t op) {
  assert(pending_[op] == 0 && "only an op that no longer waits runs");
  if (free_slots_.empty()) {
    pending_[op] = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    pending_[op] = free_slots_.back();
    free_slots_.pop_back();
    slots_[pending_[op]] = OpState{};
  }
  return slots_[pending_[op]];
}

void Executor::finish(uint32_t op) {
  timing_[op].end = engine_.now();
  const Op& o = graph_.ops()[op];
  // Every op but a copy-engine send ran as a kernel and held a slot.
  if (!graph_.by_copy_engine(o)) free_slots_.push_back(pending_[op]);
  if (observer_) observer_->on_op_end(op, engine_.now());
  const std::vector<uint32_t>& stream = graph_.streams()[o.stream].ops;
  uint32_t& ran = ran_in_stream_[o.stream];
  assert(stream[ran] == op && "a stream's ops finish in its order: each waits for the one before");
  if (++ran < stream.size()) make_ready(stream[ran]);
  for (uint32_t d : dependents_.of(op)) make_ready(d);
  drain();
}

}  // namespace cs::sim
