#include <catch2/catch.hpp>

#include <vector>

#include "sim/sm_pool.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::SmPool;

TEST_CASE("partitions are named and sized") {
  SmPool pool(132, {{"compute", 112}, {"comm", 20}});
  CHECK(pool.partition_count() == 2);
  CHECK(pool.find("comm") == 1);
  CHECK(pool.find("nope") == -1);
  CHECK(pool.partition(0).sms == 112);
}

TEST_CASE("one kernel gets its whole partition, capped at what it can use") {
  SmPool pool(132, {{"compute", 112}, {"comm", 20}});
  int got = -1;
  auto k = pool.start(0, 500, [&](int sms) { got = sms; });
  CHECK(got == 112);
  pool.end(k);
  auto small = pool.start(0, 16, [&](int sms) { got = sms; });
  CHECK(got == 16);
  pool.end(small);
}

TEST_CASE("kernels sharing a partition split it evenly, the remainder goes to the earliest") {
  SmPool pool(132, {{"compute", 112}, {"comm", 20}});
  std::vector<int> got(3, -1);
  auto a = pool.start(1, 100, [&](int s) { got[0] = s; });
  auto b = pool.start(1, 100, [&](int s) { got[1] = s; });
  CHECK(got[0] == 10);
  CHECK(got[1] == 10);
  auto c = pool.start(1, 100, [&](int s) { got[2] = s; });
  // 20 / 3: 6 each, the 2 left over go to a and b (started first).
  CHECK(got == std::vector<int>{7, 7, 6});
  pool.end(a);
  CHECK(got[1] == 10);
  CHECK(got[2] == 10);
  pool.end(b);
  CHECK(got[2] == 20);
  pool.end(c);
}

TEST_CASE("a small kernel keeps its demand, the large one takes the rest (max-min in whole SMs)") {
  SmPool pool(132, {{"compute", 112}});
  int big = -1, small = -1;
  auto b = pool.start(0, 1000, [&](int s) { big = s; });
  auto s = pool.start(0, 12, [&](int x) { small = x; });
  CHECK(small == 12);
  CHECK(big == 100);
  pool.end(s);
  CHECK(big == 112);
  pool.end(b);
}

TEST_CASE("more kernels than SMs: the late ones get none until SMs free up") {
  SmPool pool(4, {{"p", 2}});
  std::vector<int> got(3, -1);
  std::vector<SmPool::KernelSlot> k;
  for (int i = 0; i < 3; ++i) k.push_back(pool.start(0, 1, [&, i](int s) { got[i] = s; }));
  CHECK(got == std::vector<int>{1, 1, 0});
  pool.end(k[0]);
  CHECK(got[2] == 1);
  pool.end(k[1]);
  pool.end(k[2]);
}

}  // namespace CS_TEST_FILE
