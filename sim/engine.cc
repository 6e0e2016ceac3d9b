#include "sim/engine.h"

#include <cassert>
#include <utility>

namespace cs::sim {

EventId Engine::at(Time t, Callback cb) {
  assert(t >= now_ && "events cannot be scheduled in the past");
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
