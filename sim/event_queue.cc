#include "sim/event_queue.h"

#include <cassert>
#include <stdexcept>
#include <utility>

namespace cs::sim {

namespace {
// 4-ary: shallower than binary; a node's four 16-byte children span one or two cache lines.
constexpr size_t kArity = 4;
}

uint64_t EventQueue::next_order(uint32_t slot) {
  if (next_seq_ >> (64 - kSlotBits) != 0) throw std::length_error("event queue: 2^40 events pushed or moved");
  return next_seq_++ << kSlotBits | slot;
}

EventId EventQueue::push(Time t, Callback cb) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (slots_.size() > kSlotMask) throw std::length_error("event queue: 2^24 events pending at once");
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
    pos_.push_back(0);
  }
  Slot& s = slots_[slot];
  s.cb = std::move(cb);
  s.live = true;
  s.key = Entry{t, next_order(slot)};
  heap_.push_back(s.key);
  sift_up(heap_.size() - 1);
  return EventId{slot, s.generation};
}

void EventQueue::cancel(EventId id) {
  if (!pending(id)) return;
  // Captured state is released now, but only once the queue is consistent again: a capture's
  // destructor may schedule or cancel events itself.
  Callback dropped = std::move(slots_[id.slot].cb);
  remove_at(pos_[id.slot]);
  release(id.slot);
}

bool EventQueue::reschedule(EventId id, Time t) {
  if (!pending(id)) return false;
  Entry& key = slots_[id.slot].key;
  const bool earlier = t < key.t;
  key = Entry{t, next_order(id.slot)};
  // The fresh sequence number is the largest yet: the new key is before the old one, and maybe
  // before the heap's, only if its time is. Else the heap entry stays as it is, a lower bound that
  // pop re-keys (and neither its position nor the heap is read).
  if (!earlier) return true;
  const size_t i = pos_[id.slot];
  if (t < heap_[i].t) {
    heap_[i] = key;
    sift_up(i);
  }
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
  // Entries moved later since they were placed take their true keys on reaching the top.
  while (heap_.front().order != slots_[heap_.front().slot()].key.order) {
    heap_.front() = slots_[heap_.front().slot()].key;
    sift_down(0);
  }
  const Entry top = heap_.front();
  remove_at(0);
  out = std::move(slots_[top.slot()].cb);
  release(top.slot());
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
