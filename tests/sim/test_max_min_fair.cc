#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "sim/max_min_fair.h"
#include "sim/max_min_memo.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::sim::MaxMinProblem;
using cs::sim::MaxMinSolver;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

MaxMinProblem problem(std::vector<double> link_capacity, const std::vector<std::vector<uint32_t>>& paths,
                      const std::vector<double>& flow_cap) {
  MaxMinProblem p;
  p.link_capacity = std::move(link_capacity);
  for (size_t f = 0; f < paths.size(); ++f) p.add_flow(paths[f], flow_cap[f]);
  return p;
}
}  // namespace

TEST_CASE("two flows on one link get half each") {
  MaxMinProblem p = problem({100.0}, {{0}, {0}}, {kInf, kInf});
  MaxMinSolver s;
  const auto& r = s.solve(p);
  CHECK(r[0] == Approx(50.0));
  CHECK(r[1] == Approx(50.0));
}

TEST_CASE("parking lot: the long flow and each short flow share every link equally") {
  // Links 0..3 of capacity 1; flow 0 crosses all of them, flow i+1 uses link i only.
  MaxMinProblem p = problem({1, 1, 1, 1}, {{0, 1, 2, 3}, {0}, {1}, {2}, {3}}, std::vector<double>(5, kInf));
  MaxMinSolver s;
  const auto& r = s.solve(p);
  for (double x : r) CHECK(x == Approx(0.5));
}

TEST_CASE("parking lot with unequal links: spare capacity goes to the flows that can use it") {
  // Link 0 cap 1, link 1 cap 3. Long flow on both; one short flow on each.
  // Max-min: link 0 is the bottleneck at 1/2 for the long flow and short flow 0; the short flow
  // on link 1 then gets 3 - 1/2 = 2.5.
  MaxMinProblem p = problem({1.0, 3.0}, {{0, 1}, {0}, {1}}, {kInf, kInf, kInf});
  MaxMinSolver s;
  const auto& r = s.solve(p);
  CHECK(r[0] == Approx(0.5));
  CHECK(r[1] == Approx(0.5));
  CHECK(r[2] == Approx(2.5));
}

TEST_CASE("a flow capped by its SMs leaves the rest to the others") {
  MaxMinProblem p = problem({100.0}, {{0}, {0}, {0}}, {10.0, kInf, kInf});
  MaxMinSolver s;
  const auto& r = s.solve(p);
  CHECK(r[0] == Approx(10.0));
  CHECK(r[1] == Approx(45.0));
  CHECK(r[2] == Approx(45.0));
}

TEST_CASE("a cap above the fair share does not bind") {
  MaxMinProblem p = problem({100.0}, {{0}, {0}}, {80.0, kInf});
  MaxMinSolver s;
  const auto& r = s.solve(p);
  CHECK(r[0] == Approx(50.0));
  CHECK(r[1] == Approx(50.0));
}

TEST_CASE("a path-less flow runs at its cap and a zero cap stalls a flow") {
  MaxMinProblem p = problem({100.0}, {{}, {0}, {0}}, {7.0, 0.0, kInf});
  MaxMinSolver s;
  const auto& r = s.solve(p);
  CHECK(r[0] == Approx(7.0));
  CHECK(r[1] == 0.0);
  CHECK(r[2] == Approx(100.0));
}

TEST_CASE("max-min is the textbook answer on a triangle of shared links") {
  // Links a=10, b=4, c=10. f0: a,b  f1: b,c  f2: a  f3: c.
  // b is the bottleneck: f0 = f1 = 2; then a and c give f2 = f3 = 8.
  MaxMinProblem p = problem({10, 4, 10}, {{0, 1}, {1, 2}, {0}, {2}}, {kInf, kInf, kInf, kInf});
  MaxMinSolver s;
  const auto& r = s.solve(p);
  CHECK(r[0] == Approx(2));
  CHECK(r[1] == Approx(2));
  CHECK(r[2] == Approx(8));
  CHECK(r[3] == Approx(8));
  // No link is over capacity and every flow is limited by a saturated link (max-min property).
  CHECK(r[0] + r[2] <= 10 + 1e-9);
  CHECK(r[0] + r[1] <= 4 + 1e-9);
}

TEST_CASE("the memo answers a repeated problem with the solver's rates, bit for bit") {
  const MaxMinProblem a = problem({10, 4, 10}, {{0, 1}, {1, 2}, {0}, {2}}, {kInf, kInf, 3.0, kInf});
  const MaxMinProblem b = problem({10, 4, 10}, {{0, 1}, {1, 2}, {0}, {2}}, {kInf, kInf, 3.5, kInf});
  MaxMinSolver s;
  const std::vector<double> want_a = s.solve(a);
  const std::vector<double> want_b = s.solve(b);
  cs::sim::MaxMinMemo memo;
  for (int round = 0; round < 3; ++round) {
    CHECK(memo.solve(a) == want_a);
    CHECK(memo.solve(b) == want_b);  // a problem differing in one cap is not the stored one
  }
}

TEST_CASE("the memo keeps answering bit for bit as its table grows past its first size") {
  // 3000 distinct problems (the table starts with 1024 slots and stays at most half full, so it
  // grows three times), each asked again after all the others: every answer is the solver's.
  MaxMinSolver s;
  cs::sim::MaxMinMemo memo;
  std::vector<MaxMinProblem> problems;
  std::vector<std::vector<double>> want;
  for (int i = 0; i < 3000; ++i) {
    const double c = 1.0 + i;
    problems.push_back(problem({c, 4, 10}, {{0, 1}, {1, 2}, {0}, {2}}, {kInf, 0.5 + (i % 7), kInf, 3.0}));
    want.push_back(s.solve(problems.back()));
  }
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < problems.size(); ++i) REQUIRE(memo.solve(problems[i]) == want[i]);
    CHECK(memo.size() == problems.size());  // the second round found every problem: none stored again
  }
}

TEST_CASE("the memo forgets everything past its byte budget and keeps answering bit for bit", "[sim]") {
  // A budget of a few problems: storing the 3000 forgets many times over; every answer is still
  // the solver's, and what is remembered stays within the budget.
  MaxMinSolver s;
  cs::sim::MaxMinMemo memo(4096);
  size_t most = 0;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 3000; ++i) {
      const MaxMinProblem p = problem({1.0 + i, 4, 10}, {{0, 1}, {1, 2}, {0}, {2}}, {kInf, 0.5 + (i % 7), kInf, 3.0});
      REQUIRE(memo.solve(p) == s.solve(p));
      REQUIRE(memo.solve(p) == s.solve(p));  // asked again at once: remembered, unless just forgotten
      most = std::max(most, memo.size());
    }
  CHECK(most > 1);
  CHECK(most < 40);
}

}  // namespace CS_TEST_FILE
