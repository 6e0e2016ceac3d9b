#include "sim/event_queue.h"

#include <cassert>
#include <utility>

namespace cs::sim {

namespace {
constexpr size_t kArity = 4;  // 4-ary: shallower than binary, children share a cache line
}

EventId EventQueue::push(Time t, Callback cb) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[slot];
  s.cb = std::move(cb);
  s.live = true;
  heap_.push_back(Entry{t, next_seq_++, slot});
  sift_up(heap_.size() - 1);
  ++live_;
  return EventId{slot, s.generation};
}

void EventQueue::cancel(EventId id) {
  if (!id.valid() || id.slot >= slots_.size()) return;
  Slot& s = slots_[id.slot];
  if (s.generation != id.generation || !s.live) return;
  s.live = false;
  s.cb = nullptr;  // release captured state now, not when the entry surfaces
  --live_;
  if (++dead_ > live_ && dead_ > 1024) compact();
}

void EventQueue::release(uint32_t slot) {
  Slot& s = slots_[slot];
  s.cb = nullptr;
  s.live = false;
  ++s.generation;  // invalidates outstanding EventIds for this slot
  free_slots_.push_back(slot);
}

void EventQueue::compact() {
  size_t kept = 0;
  for (const Entry& e : heap_) {
    if (slots_[e.slot].live) heap_[kept++] = e;
    else release(e.slot);
  }
  heap_.resize(kept);
  dead_ = 0;
  // Floyd's heap construction; the (time, seq) keys keep the pop order exactly as before.
  if (heap_.size() > 1)
    for (size_t i = (heap_.size() - 2) / kArity + 1; i-- > 0;) sift_down(i);
}

Time EventQueue::pop(Callback& out) {
  assert(live_ > 0);
  for (;;) {
    const Entry top = heap_.front();
    pop_top();
    Slot& s = slots_[top.slot];
    const bool live = s.live;
    if (live) out = std::move(s.cb);
    release(top.slot);
    if (live) {
      --live_;
      return top.t;
    }
    --dead_;
  }
}

void EventQueue::pop_top() {
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

void EventQueue::sift_up(size_t i) {
  Entry e = heap_[i];
  while (i > 0) {
    size_t parent = (i - 1) / kArity;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::sift_down(size_t i) {
  const size_t n = heap_.size();
  Entry e = heap_[i];
  for (;;) {
    size_t first = i * kArity + 1;
    if (first >= n) break;
    size_t best = first;
    size_t last = first + kArity < n ? first + kArity : n;
    for (size_t c = first + 1; c < last; ++c)
      if (before(heap_[c], heap_[best])) best = c;
    if (!before(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

}  // namespace cs::sim
