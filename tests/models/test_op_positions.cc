#include <catch2/catch.hpp>

#include "models/op_workload.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::models::OpPositions;

TEST_CASE("op positions come back per op from runs of equal ones") {
  OpPositions p;
  CHECK(p.size() == 0);
  p.push_back({3, 5});
  p.push_back({3, 5});
  p.push_back({7, 1});
  p.push_back({3, 5});  // a position seen before starts a run of its own
  p.push_back({3, 6});
  REQUIRE(p.size() == 5);
  const int lines[] = {3, 3, 7, 3, 3}, cols[] = {5, 5, 1, 5, 6};
  for (uint32_t op = 0; op < 5; ++op) {
    CHECK(p[op].line == lines[op]);
    CHECK(p[op].col == cols[op]);
  }
  p.assign(40'000'000, {12, 3});  // a model workload: every op at its `workload:` entry
  CHECK(p.size() == 40'000'000);
  CHECK(p[0].line == 12);
  CHECK(p[39'999'999].col == 3);
  p.assign(0, {1, 1});
  CHECK(p.size() == 0);
}

}  // namespace CS_TEST_FILE
