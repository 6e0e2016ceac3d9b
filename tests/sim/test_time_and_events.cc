#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/engine.h"
#include "sim/event_queue.h"
#include "sim/time.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::Engine;
using cs::sim::EventQueue;
using cs::sim::Time;

TEST_CASE("time units are exact picoseconds") {
  CHECK(Time::ns(1).ps_count() == 1000);
  CHECK(Time::us(3).ps_count() == 3'000'000);
  CHECK(Time::ms(2) == Time::us(2000));
  CHECK(Time::s(1) == Time::ms(1000));
  CHECK((Time::us(5) - Time::us(2)) == Time::us(3));
  CHECK(Time::us(1).to_us() == 1.0);
}

TEST_CASE("from_seconds_ceil never rounds a positive duration down to zero") {
  CHECK(Time::from_seconds_ceil(1e-15).ps_count() == 1);
  CHECK(Time::from_seconds_ceil(0.0).ps_count() == 0);
  CHECK(Time::from_seconds_ceil(2.5e-12).ps_count() == 3);
  CHECK(cs::sim::transfer_time(1e9, cs::sim::Bandwidth::gbytes_per_s(100)) == Time::ms(10));
}

TEST_CASE("events fire in time order, ties in insertion order") {
  Engine e;
  std::vector<int> order;
  e.at(Time::us(5), [&] { order.push_back(3); });
  e.at(Time::us(1), [&] { order.push_back(1); });
  e.at(Time::us(5), [&] { order.push_back(4); });
  e.at(Time::us(2), [&] { order.push_back(2); });
  e.at(Time::us(5), [&] { order.push_back(5); });
  e.run();
  CHECK(order == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(e.now() == Time::us(5));
  CHECK(e.events_processed() == 5);
}

TEST_CASE("an event scheduled at the current time runs after those already queued for it") {
  Engine e;
  std::vector<int> order;
  e.at(Time::us(1), [&] {
    order.push_back(1);
    e.after(Time(), [&] { order.push_back(3); });
  });
  e.at(Time::us(1), [&] { order.push_back(2); });
  e.run();
  CHECK(order == std::vector<int>{1, 2, 3});
}

TEST_CASE("cancelled events never fire, cancelling a fired event is harmless") {
  Engine e;
  int fired = 0;
  auto a = e.at(Time::us(1), [&] { fired += 1; });
  auto b = e.at(Time::us(2), [&] { fired += 10; });
  e.at(Time::us(3), [&] { fired += 100; });
  e.cancel(b);
  e.cancel(b);  // twice: no effect
  CHECK(e.pending() == 2);
  e.run();
  CHECK(fired == 101);
  e.cancel(a);  // already fired, its slot reused or not: no effect
  int later = 0;
  auto c = e.after(Time::us(1), [&] { later = 1; });
  e.cancel(a);  // a stale id must not cancel the event now in its slot
  e.run();
  CHECK(later == 1);
  (void)c;
}

TEST_CASE("the 4-ary heap pops a random schedule in sorted (time, sequence) order") {
  // Every 7th event cancelled, or 6 of 7: each leaves the heap at once, from wherever it sits, and
  // the order must be the same sorted order either way.
  const int keep_every = GENERATE(0, 1);
  std::mt19937_64 rng(42);
  EventQueue q;
  struct Item {
    int64_t t;
    int seq;
  };
  std::vector<Item> items;
  std::vector<cs::sim::EventId> ids;
  std::vector<int> popped;
  for (int i = 0; i < 5000; ++i) {
    const int64_t t = static_cast<int64_t>(rng() % 200);  // many ties
    items.push_back({t, i});
    ids.push_back(q.push(Time::ps(t), [&popped, i] { popped.push_back(i); }));
  }
  std::vector<char> cancelled(items.size(), 0);
  for (int i = 0; i < 5000; ++i) {
    const bool cancel = keep_every == 0 ? i % 7 == 0 : i % 7 != 0;
    if (!cancel) continue;
    q.cancel(ids[i]);
    cancelled[i] = 1;
  }
  std::vector<Item> expect;
  for (const auto& it : items)
    if (!cancelled[it.seq]) expect.push_back(it);
  std::stable_sort(expect.begin(), expect.end(), [](const Item& a, const Item& b) { return a.t < b.t; });
  EventQueue::Callback cb;
  std::vector<int64_t> times;
  while (!q.empty()) {
    times.push_back(q.pop(cb).ps_count());
    cb();
  }
  REQUIRE(popped.size() == expect.size());
  for (size_t i = 0; i < expect.size(); ++i) {
    CHECK(popped[i] == expect[i].seq);
    CHECK(times[i] == expect[i].t);
  }
}

TEST_CASE("a rescheduled event fires where a cancel and a push of it would put it") {
  // Two queues fed the same random schedule: one moves events by cancel + push (the way flows
  // were moved before reschedule existed), the other by reschedule. Many ties, moves earlier and
  // later, cancels and pops interleaved: the pop orders and times must be identical. The second
  // schedule only ever moves events later, as slowed flows are: their heap entries stay where
  // they were, behind keys that pop must restore, and cancels find them there.
  const bool only_later = GENERATE(false, true);
  std::mt19937_64 rng(7);
  EventQueue moved, pushed;
  struct Pending {
    cs::sim::EventId in_moved, in_pushed;
    int label;
    int64_t t;
  };
  std::vector<Pending> live;
  std::vector<int> order_moved, order_pushed;
  std::vector<int64_t> times_moved, times_pushed;
  int64_t now = 0;
  int next_label = 0;
  auto schedule = [&](int label, int64_t t) {
    return Pending{moved.push(Time::ps(t), [&order_moved, label] { order_moved.push_back(label); }),
                   pushed.push(Time::ps(t), [&order_pushed, label] { order_pushed.push_back(label); }), label, t};
  };
  for (int step = 0; step < 20000; ++step) {
    const unsigned op = rng() % 10;
    if (op < 4 || live.empty()) {
      live.push_back(schedule(next_label++, now + static_cast<int64_t>(rng() % 50)));
    } else if (op < 8) {
      Pending& p = live[rng() % live.size()];
      const int64_t t = (only_later ? p.t : now) + static_cast<int64_t>(rng() % 50);
      p.t = t;
      REQUIRE(moved.reschedule(p.in_moved, Time::ps(t)));
      pushed.cancel(p.in_pushed);
      const int label = p.label;
      p.in_pushed = pushed.push(Time::ps(t), [&order_pushed, label] { order_pushed.push_back(label); });
    } else if (op < 9) {
      const size_t i = rng() % live.size();
      moved.cancel(live[i].in_moved);
      pushed.cancel(live[i].in_pushed);
      CHECK_FALSE(moved.reschedule(live[i].in_moved, Time::ps(now)));  // a cancelled event stays cancelled
      live[i] = live.back();
      live.pop_back();
    } else {
      EventQueue::Callback a, b;
      const int64_t ta = moved.pop(a).ps_count(), tb = pushed.pop(b).ps_count();
      a();
      b();
      times_moved.push_back(ta);
      times_pushed.push_back(tb);
      now = ta;
      const int label = order_moved.back();
      live.erase(std::find_if(live.begin(), live.end(), [label](const Pending& p) { return p.label == label; }));
    }
    REQUIRE(moved.size() == live.size());
    REQUIRE(pushed.size() == live.size());
  }
  while (!moved.empty()) {
    EventQueue::Callback a, b;
    times_moved.push_back(moved.pop(a).ps_count());
    times_pushed.push_back(pushed.pop(b).ps_count());
    a();
    b();
  }
  CHECK(order_moved.size() > 5000);
  CHECK(order_moved == order_pushed);
  CHECK(times_moved == times_pushed);
  CHECK(std::is_sorted(times_moved.begin(), times_moved.end()));
}

TEST_CASE("a fired event can no longer be rescheduled, and its slot's next event is not moved") {
  Engine e;
  int fired = 0;
  auto a = e.at(Time::us(1), [&] { ++fired; });
  e.run();
  auto b = e.at(Time::us(5), [&] { fired += 10; });  // may reuse a's slot
  CHECK_FALSE(e.reschedule(a, Time::us(2)));
  CHECK(e.reschedule(b, Time::us(3)));
  e.run();
  CHECK(fired == 11);
  CHECK(e.now() == Time::us(3));
}

TEST_CASE("durations beyond the simulator's range throw instead of wrapping around") {
  CHECK_THROWS_AS(Time::from_seconds_ceil(1e10), std::overflow_error);
  CHECK_THROWS_AS(Time::from_seconds_ceil(std::nan("")), std::overflow_error);
  CHECK(Time::from_seconds_ceil(1e6).ps_count() == 1'000'000'000'000'000'000);  // 11.6 days is fine
  Engine e;
  CHECK_THROWS_AS(e.at(Time::ps(int64_t{1} << 62) + Time::ps(1), [] {}), std::overflow_error);
}

}  // namespace CS_TEST_FILE
