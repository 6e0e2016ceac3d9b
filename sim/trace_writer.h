// Streams a Perfetto / Chrome trace-event JSON file while the simulation runs.
// Layout: one process per GPU with one track per stream (op slices), an HBM utilisation counter
// and, under a power limit, an SM clock counter; one "network" process with one track per link that was ever busy (busy-period slices)
// and a utilisation counter per link. Slices on a track never overlap, so they nest strictly.
// Timestamps are printed from integer picoseconds (exact, deterministic), in microseconds.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/executor.h"
#include "sim/flow_network.h"
#include "sim/op_graph.h"
#include "sim/routing.h"

namespace cs::sim {

class TraceWriter : public ExecObserver, public LinkObserver {
 public:
  // Writes the header and track names at once; call finish() after the run.
  TraceWriter(std::ostream& out, const OpGraph& graph, FlowNetwork& net, const Routing& routing);
  void on_op_start(uint32_t op, Time now) override;
  void on_op_end(uint32_t op, Time now) override;
  void on_clock(int gpu, Time now, double MHz) override;
  void on_link_load(LinkId link, Time now, Bandwidth load) override;
  // Closes open busy periods at `end` and the JSON document.
  void finish(Time end);

 private:
  void begin_event();
  void link_track(uint32_t link);
  void counter(int pid, const std::string& name, Time t, double value);

  std::ostream& out_;
  const OpGraph& graph_;
  FlowNetwork& net_;
  int network_pid_;
  std::vector<int> hbm_gpu_;       // per link slot: GPU whose HBM it is, or -1
  std::vector<int> link_tid_;      // per link slot: track id once named, or -1
  std::vector<Time> busy_since_;   // per link slot: start of the current busy period
  std::vector<char> busy_;
  std::vector<Time> op_start_;
  int next_link_tid_ = 1;
  bool first_ = true;
};

// JSON string escaping for names that come from users.
std::string json_escape(const std::string& s);
// Microseconds with six decimals from integer picoseconds (exact).
std::string format_us(Time t);

}  // namespace cs::sim
