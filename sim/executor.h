// Runs an op graph on the engine.
//
// An op starts when its stream predecessor and its dependencies have finished. A compute op is a
// kernel on its stream's SM partition: its progress is a flow of its HBM bytes over the GPU's HBM
// link, capped at bytes / compute_time(SMs it holds), so a compute-bound kernel follows its SMs and
// a memory-bound one its share of HBM (contention with other kernels comes from the flow network).
// A send by the copy engine (Mover::kCopyEngine) is no kernel: it holds no SMs and starts at once,
// one flow over the source HBM, the route and the destination HBM, capped at the cost model's
// copy_engine_rate. Any other communication op is a kernel that holds SMs of its partition and
// owns a virtual "copy" link whose capacity is the cost model's copy rate for those SMs; every
// flow it sends crosses that link, the source HBM, the route, and the destination HBM (a local
// copy crosses its HBM twice: it reads and writes there). A collective's flows start once every
// participant's kernel has launched, phase by phase (collective_plan.h), and all its ops finish
// together when the last phase ends. An all-to-all-v's transfer leaves through its source rank's
// copy link, so a relay GPU's kernel carries the bytes it forwards. Every GPU's HBM link saturates
// as the cost model says (hbm_saturation_exponent; set on the network when the executor is made);
// a compute kernel then offers the rate that HBM turns into its time alone (offered_alone).
// Under a power-capped cost model each GPU's SM clock follows its power limit: a controller ticks
// every eighth of the cost model's window, averages what the GPU drew over the window (its
// kernels' tensor-core draw and the bytes its HBM link carried) and sets the clock the cost model
// gives for it; running GEMMs are re-rated to it (power_tick).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "sim/collective_plan.h"
#include "sim/cost_model.h"
#include "sim/engine.h"
#include "sim/flow_network.h"
#include "sim/op_graph.h"
#include "sim/power_window.h"
#include "sim/routing.h"
#include "sim/sm_pool.h"

namespace cs::sim {

struct OpTiming {
  Time start;
  Time end = Time::max();  // Time::max(): it never finished
  bool done() const { return end != Time::max(); }
};

class ExecObserver {
 public:
  virtual ~ExecObserver() = default;
  virtual void on_op_start(uint32_t op, Time now) = 0;
  virtual void on_op_end(uint32_t op, Time now) = 0;
  // Under a power-capped cost model: the GPU's SM clock from `now` on.
  virtual void on_clock(int /*gpu*/, Time /*now*/, double /*MHz*/) {}
};

struct ExecResult {
  Time makespan;
  std::vector<OpTiming> ops;        // indexed like OpGraph::ops()
  std::vector<uint32_t> stuck_ops;  // ops that never finished (a dependency cycle or deadlock)
  // Under a power-capped cost model, per GPU: its SM clock averaged over the time GEMMs ran on it
  // (0 where none ran); empty otherwise.
  std::vector<double> gemm_mean_MHz;
};

class Executor {
 public:
  // `pools` holds one SM pool per GPU of `routing`.
  Executor(Engine& engine, FlowNetwork& net, const Routing& routing, const CostModel& cost,
           std::vector<SmPool>& pools, const OpGraph& graph);
  void set_observer(ExecObserver* observer) { observer_ = observer; }
  // Launches the ready ops, runs the engine until no event is left, and reports.
  ExecResult run();

 private:
  // What a kernel holds while it runs: only running ops have one (slots are reused), since a
  // step's ops are tens of millions and a few thousand run at once.
  struct OpState {
    SmPool::KernelSlot kernel;
    FlowId flow;
    LinkId copy_link;
    double work = 0;  // compute: bytes (or work units) the progress flow moves
    bool flow_started = false;
    bool on_hbm = false;  // compute progress flows over the GPU's HBM link
    int sms = 0;          // the SMs it holds now
  };
  struct PacedFlow {
    FlowId flow;
    uint32_t op = 0;  // the sender's communication op
    double bytes = 0;
    bool live = true;
  };
  struct CollectiveState {
    uint32_t arrived = 0;
    uint32_t phase = 0;
    uint32_t outstanding = 0;
    CollectivePlan plan;
    std::vector<PacedFlow> paced;  // a paced collective's flows of the phase running
  };

  void make_ready(uint32_t op);
  void drain();
  void launch(uint32_t op);
  void start(uint32_t op);  // launch's body, after the kernel's launch gap
  void launch_compute(uint32_t op);
  void on_compute_share(uint32_t op, int sms);
  // The progress rate a compute kernel asks for, given its time on the SMs it holds.
  double compute_cap(uint32_t op, Time t) const;
  // Under a power-capped cost model: `op` draws `draw` from now on (nothing: it ended); `ref` is its
  // time at the reference clock on the SMs it holds, for a GEMM or a kernel the cost model says
  // follows the clock (zero for the others: never re-rated).
  void set_draw(int gpu, uint32_t op, const PowerLoad& draw, Time ref, bool gemm);
  // A running compute op's time over its reference at its GPU's clock now.
  double clock_stretch(uint32_t op) const;
  // The GPU's power controller: adds the energy of the bytes its HBM moved, closes a block of its
  // window, sets the clock from the window's average draw, and re-rates its running GEMMs (and the
  // other kernels that follow the clock) when the clock moved. It stops ticking once the GPU is
  // quiet (nothing drawn over a window, nothing running, no flow on its HBM or started within a
  // block) and back at its idle clock.
  void power_tick(int gpu);
  void launch_comm(uint32_t op);
  // A paced collective's (Collective::paced_bytes) flow of `bytes` sent by communication op `op`:
  // its kernel works through every destination's share in step, so the flow goes no faster than
  // that share of the kernel's pace on the SMs the op holds now.
  Bandwidth paced_cap(uint32_t op, double bytes) const;
  // Re-caps the live flows a paced collective's op `op` sends after its SMs changed.
  void repace(uint32_t op);
  void launch_copy_engine(uint32_t op);  // a send by the copy engine (Mover::kCopyEngine)
  // The HBM rate a compute kernel offers, given the rate it reached alone (its cost-model time).
  double offered_alone(int gpu, double rate) const;
  void start_phase(uint32_t c);
  void finish_collective(uint32_t c);
  // GEMMs on `gpu` hold `delta` SMs more (fewer); its running communication kernels' copy rates
  // follow (CostModel::comm_copy_rate).
  void add_gemm_sms(int gpu, int delta);
  void finish(uint32_t op);

  Engine& engine_;
  FlowNetwork& net_;
  const Routing& routing_;
  const CostModel& cost_;
  std::vector<SmPool>& pools_;
  const OpGraph& graph_;
  ExecObserver* observer_ = nullptr;

  // Per op: its unfinished prerequisites until it is ready; from then on, once it runs as a kernel,
  // its slot in `slots_` (one word for both: an op runs only after its count reached 0).
  std::vector<uint32_t> pending_;
  // A deque: a slot taken while another op's state is held by reference leaves that reference valid.
  std::deque<OpState> slots_;
  std::vector<uint32_t> free_slots_;
  OpState& hold_state(uint32_t op);  // takes a slot for `op`, which starts running
  OpState& state(uint32_t op) { return slots_[pending_[op]]; }  // a running kernel's
  const OpState& state(uint32_t op) const { return slots_[pending_[op]]; }
  std::vector<CollectiveState> coll_;
  OpLists dependents_;  // per op, the ops waiting on it
  // Per stream: its ops finished so far. A stream's ops finish in order (each waits for the one
  // before), so the next to make ready is found there rather than stored for every op.
  std::vector<uint32_t> ran_in_stream_;
  std::vector<OpTiming> timing_;
  std::vector<uint32_t> ready_;
  std::vector<int> gemm_sms_;                     // per GPU: SMs its GEMMs hold now
  std::vector<std::vector<uint32_t>> live_comm_;  // per GPU: its communication kernels running now
  struct RunningDraw {
    uint32_t op;
    PowerLoad draw;
    Time ref;           // a compute kernel's time at the reference clock (zero: none to re-rate)
    bool gemm = false;  // GEMMs alone count toward the clock GEMMs ran at
  };
  struct GpuPower {
    std::vector<RunningDraw> running;
    PowerWindow window;
    double MHz = 0, idle_MHz = 0;  // the SM clock now, and with nothing run
    double stretch = 1;            // GEMM time over its reference at MHz
    bool ticking = false;
    int gemms = 0;                 // GEMMs running
    Time since;                    // when `MHz` or `gemms` last changed
    double gemm_MHz_s = 0, gemm_s = 0;  // the clock integrated over the time GEMMs ran
    double hbm_bytes = 0;               // its HBM link's bytes at the last tick
    Time last_wake;                     // the last flow start over its HBM (or draw) that woke it
  };
  // Starts the GPU's controller ticking if it is not.
  void wake_power(int gpu);
  // Adds the time since the last change to the GPU's clock integral.
  void accrue_clock(GpuPower& g);
  std::vector<GpuPower> power_;  // per GPU, under a power-capped cost model; empty otherwise
  bool draining_ = false;
  std::vector<LinkId> path_;
  // Appends to path_ the links that the images of collective c's transfer from rank `src` to rank
  // `dst` load (OpGraph::add_images, Routing::image_links), and returns how many links path_ had
  // before them: the flow's own route, whose latency it waits.
  size_t add_image_links(const Collective& c, uint32_t src, uint32_t dst);
  // The links each image set's images load, found on first use: a set recurs at every micro-batch.
  // Per set of a put or send (a set holds one simulated GPU's transfers, so one source and
  // destination ask for it), and per relabeling set and pair of ranks of a collective.
  struct ImageLinks {
    bool found = false;
    int src = 0, dst = 0;
    std::vector<LinkId> links;
  };
  std::vector<ImageLinks> image_links_;
  std::vector<std::vector<ImageLinks>> relabeled_links_;  // per relabeling set, ranks src x dst
};

}  // namespace cs::sim
