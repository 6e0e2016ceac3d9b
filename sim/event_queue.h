// The one event queue: a 4-ary min-heap keyed by (time, insertion sequence).
// Ties at equal time fire in insertion order, so runs are bit-for-bit deterministic.
// Every slot knows its heap position, so a cancelled event leaves the heap at once and a moved
// one (reschedule) is re-keyed in place. A flow's completion moves at every change of its rate
// (16.5 M times in DeepSeek-V3's run, with about 500 events pending at most): a lazy cancel and a
// push left a dead entry per move for pop to sift out, and cost a callback each.
// A move to a later key only records the key in the slot: the heap entry keeps the earlier one,
// a lower bound, and takes the slot's key when it reaches the top (pop re-keys it and sifts it
// down). Flows sharing links slow down far more often than they finish, so most moves cost no
// sift, and a flow slowed down k times costs one sift, not k. Events still fire in the order of
// their true keys: an entry whose heap key is its true key and is the least of the heap is least
// among the true keys too, each true key being at or after its heap key.
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
  // Moves a pending event to time t with a fresh sequence number, keeping its callback: it then
  // fires exactly where cancel(id) followed by push(t, same callback) would put it. False (and no
  // effect) when the event already fired or was cancelled.
  bool reschedule(EventId id, Time t);
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // Pops the earliest event; requires !empty(). Returns its time and moves its callback out.
  Time pop(Callback& out);

 private:
  // 16 bytes, so that a node's four children span one or two cache lines, not three: the
  // sequence number and the slot share a word, the sequence in the high bits, which therefore
  // still orders ties. 2^24 slots (events pending at once) and 2^40 sequence numbers (pushes and
  // moves) bound a run; past either, push throws.
  static constexpr int kSlotBits = 24;
  static constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
  struct Entry {
    Time t;
    uint64_t order;  // seq << kSlotBits | slot
    uint32_t slot() const { return static_cast<uint32_t>(order & kSlotMask); }
  };
  struct alignas(64) Slot {  // one cache line: a move reads and writes nothing else of the queue
    Callback cb;
    Entry key;  // the event's true key; its heap entry's may be earlier (see the header)
    uint32_t generation = 0;
    bool live = false;
  };
  static bool before(const Entry& a, const Entry& b) { return a.t < b.t || (a.t == b.t && a.order < b.order); }
  bool pending(EventId id) const {
    return id.valid() && id.slot < slots_.size() && slots_[id.slot].generation == id.generation &&
           slots_[id.slot].live;
  }
  void place(size_t i, const Entry& e) {
    heap_[i] = e;
    pos_[e.slot()] = static_cast<uint32_t>(i);
  }
  void sift_up(size_t i);
  void sift_down(size_t i);
  void remove_at(size_t i);
  void release(uint32_t slot);

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> pos_;  // per slot, its index in heap_ while pending (apart: every sift step writes one)
  std::vector<uint32_t> free_slots_;
  uint64_t next_seq_ = 0;
  uint64_t next_order(uint32_t slot);
};

}  // namespace cs::sim
