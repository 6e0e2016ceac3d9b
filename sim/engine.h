// The discrete-event engine: a clock and the one event loop (Engine::run).
// Components schedule callbacks; nothing here knows about GPUs, links or models.
#pragma once

#include <cstdint>

#include "sim/event_queue.h"
#include "sim/time.h"

namespace cs::sim {

class Engine {
 public:
  using Callback = EventQueue::Callback;

  Time now() const { return now_; }
  // Schedules `cb` at absolute time t (now() <= t <= 2^62 ps; beyond, std::overflow_error).
  EventId at(Time t, Callback cb);
  // Schedules `cb` after delay d (0 <= d < 2^62 ps) from now().
  EventId after(Time d, Callback cb) { return at(now_ + d, std::move(cb)); }
  void cancel(EventId id) { queue_.cancel(id); }
  // Moves a pending event to absolute time t (now() <= t <= 2^62 ps), as cancel(id) and at(t, its
  // callback) would; false when it already fired or was cancelled.
  bool reschedule(EventId id, Time t);
  // Runs events in (time, insertion) order until none is left or stop() is called.
  void run();
  // Makes run() return after the current event; pending events stay queued.
  void stop() { stop_ = true; }
  uint64_t events_processed() const { return processed_; }
  size_t pending() const { return queue_.size(); }

 private:
  EventQueue queue_;
  Time now_;
  uint64_t processed_ = 0;
  bool stop_ = false;
};

}  // namespace cs::sim
