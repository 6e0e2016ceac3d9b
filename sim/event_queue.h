// The one event queue: a 4-ary min-heap keyed by (time, insertion sequence).
// Ties at equal time fire in insertion order, so runs are bit-for-bit deterministic.
// Cancellation is lazy: a cancelled event stays in the heap and is skipped when popped. When dead
// entries outnumber live ones the heap is compacted, so memory stays within twice the live events
// even when every flow of a large component is rescheduled at each change.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/time.h"

namespace cs::sim {

// Identifies a scheduled event; stays valid (and harmless to cancel) after the event fired.
struct EventId {
  uint32_t slot = UINT32_MAX;
  uint32_t generation = 0;
  bool valid() const { return slot != UINT32_MAX; }
};

class EventQueue {
 public:
  using Callback = std::function<void()>;

  EventId push(Time t, Callback cb);
  // No effect when the event already fired or was cancelled.
  void cancel(EventId id);
  bool empty() const { return live_ == 0; }
  size_t size() const { return live_; }
  // Pops the earliest live event; requires !empty(). Returns its time and moves its callback out.
  Time pop(Callback& out);

 private:
  struct Entry {
    Time t;
    uint64_t seq;
    uint32_t slot;
  };
  struct Slot {
    Callback cb;
    uint32_t generation = 0;
    bool live = false;
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.t < b.t || (a.t == b.t && a.seq < b.seq);
  }
  void sift_up(size_t i);
  void sift_down(size_t i);
  void pop_top();
  void release(uint32_t slot);
  void compact();

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  uint64_t next_seq_ = 0;
  size_t live_ = 0;
  size_t dead_ = 0;  // cancelled entries still in the heap
};

}  // namespace cs::sim
