#include "sim/engine.h"

#include <cassert>
#include <stdexcept>
#include <utility>

namespace cs::sim {

EventId Engine::at(Time t, Callback cb) {
  assert(t >= now_ && "events cannot be scheduled in the past");
  if (t > Time::ps(int64_t{1} << 62)) throw std::overflow_error("simulated time beyond the simulator's range (53 days)");
  return queue_.push(t, std::move(cb));
}

void Engine::run() {
  Callback cb;
  stop_ = false;
  while (!queue_.empty() && !stop_) {
    now_ = queue_.pop(cb);
    ++processed_;
    cb();
  }
}

}  // namespace cs::sim
