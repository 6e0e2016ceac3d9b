#include "sim/engine.h"

#include <cassert>
#include <stdexcept>
#include <utility>

namespace cs::sim {

namespace {
void check_in_range(Time now, Time t) {
  assert(t >= now && "events cannot be scheduled in the past");
  (void)now;
  if (t > Time::ps(int64_t{1} << 62)) throw std::overflow_error("simulated time beyond the simulator's range (53 days)");
}
}  // namespace

EventId Engine::at(Time t, Callback cb) {
  check_in_range(now_, t);
  return queue_.push(t, std::move(cb));
}

bool Engine::reschedule(EventId id, Time t) {
  check_in_range(now_, t);
  return queue_.reschedule(id, t);
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
