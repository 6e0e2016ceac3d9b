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
  return EventId{slot, s.generation};
}

void EventQueue::cancel(EventId id) {
  if (!pending(id)) return;
  // Captured state is released now, but only once the queue is consistent again: a capture's
  // destructor may schedule or cancel events itself.
  Callback dropped = std::move(slots_[id.slot].cb);
  remove_at(slots_[id.slot].pos);
  release(id.slot);
}

bool EventQueue::reschedule(EventId id, Time t) {
  if (!pending(id)) return false;
  const size_t i = slots_[id.slot].pos;
  const Entry moved{t, next_seq_++, id.slot};
  // The fresh sequence number is the largest yet: the entry can only move up if its time fell.
  const bool up = t < heap_[i].t;
  heap_[i] = moved;
  if (up) sift_up(i);
  else sift_down(i);
  return true;
}

void EventQueue::release(uint32_t slot) {
  Slot& s = slots_[slot];
  s.cb = nullptr;
  s.live = false;
  ++s.generation;  // invalidates outstanding EventIds for this slot
  free_slots_.push_back(slot);
}

void EventQueue::remove_at(size_t i) {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  // The last entry takes the hole; it may belong above or below it.
  const bool up = before(last, heap_[i]);
  heap_[i] = last;
  if (up) sift_up(i);
  else sift_down(i);
}

Time EventQueue::pop(Callback& out) {
  assert(!heap_.empty());
  const Entry top = heap_.front();
  remove_at(0);
  out = std::move(slots_[top.slot].cb);
  release(top.slot);
  return top.t;
}

void EventQueue::sift_up(size_t i) {
  Entry e = heap_[i];
  while (i > 0) {
    size_t parent = (i - 1) / kArity;
    if (!before(e, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, e);
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
    place(i, heap_[best]);
    i = best;
  }
  place(i, e);
}

}  // namespace cs::sim
