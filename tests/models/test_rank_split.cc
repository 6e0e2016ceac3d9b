// The split that evens out ranks holding several model stages (models/rank_split.h): what it
// moves, what it may not, and DeepSeek-V3's DualPipe split at PP16, which it keeps.
#include <algorithm>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "models/model_zoo.h"
#include "models/rank_split.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

// Interleaved over `pp` ranks with two chunks: rank r holds stages r and r + pp.
std::vector<std::vector<int>> interleaved(int pp) {
  std::vector<std::vector<int>> held(pp);
  for (int r = 0; r < pp; ++r) held[r] = {r, r + pp};
  return held;
}

double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

const auto anything = [](const std::vector<int>&) { return true; };

}  // namespace

TEST_CASE("balancing ranks spreads layers that a stage-balanced split piles on some ranks") {
  // 13 equal layers, a tail worth 3 of them on the last stage, 4 ranks of two stages each. The
  // stage-balanced split caps stages at 4 layers: 1 1 1 1 1 1 3 1+tail puts rank 2 at 1 + 3.
  LayerCosts c;
  c.layer.assign(13, 1.0);
  c.tail = 3;
  const std::vector<int> start = {1, 1, 1, 1, 1, 1, 3, 4};
  REQUIRE(std::accumulate(start.begin(), start.end(), 0) == 13);
  const std::vector<int> out = balance_rank_loads(start, interleaved(4), c, anything);
  CHECK(std::accumulate(out.begin(), out.end(), 0) == 13);
  CHECK(std::all_of(out.begin(), out.end(), [](int n) { return n >= 1; }));
  const std::vector<double> loads = rank_loads(out, interleaved(4), c);
  // Rank 3 holds the tail's stage and one more: 1 + 1 + 3 at least; the other 11 layers spread
  // over ranks 0 to 2 as 4, 4, 3 or better.
  CHECK(loads[3] == Approx(5));
  CHECK(max_of({loads[0], loads[1], loads[2]}) <= 4);
  CHECK(max_of(loads) < max_of(rank_loads(start, interleaved(4), c)));
}

TEST_CASE("balancing ranks keeps a split no move improves, and takes no move it is refused") {
  LayerCosts c;
  c.layer.assign(8, 1.0);
  const std::vector<int> even = {2, 2, 2, 2};
  CHECK(balance_rank_loads(even, interleaved(2), c, anything) == even);
  const std::vector<int> uneven = {1, 1, 1, 5};
  CHECK(balance_rank_loads(uneven, interleaved(2), c, [](const std::vector<int>&) { return false; }) == uneven);
  // Refusing splits whose first stage grows: the layers go elsewhere.
  const auto first_stays = [](const std::vector<int>& s) { return s[0] == 1; };
  const std::vector<int> out = balance_rank_loads(uneven, interleaved(2), c, first_stays);
  CHECK(out[0] == 1);
  CHECK(max_of(rank_loads(out, interleaved(2), c)) == Approx(4));
}

TEST_CASE("DeepSeek-V3's DualPipe split at PP16 is already balanced over its ranks") {
  const ModelSpec v3 = load_model("deepseek-v3");
  ParallelLayout l;
  l.pp = 16;
  const std::vector<int> plain = stage_layers(l, v3, 4096);
  std::vector<std::vector<int>> held(16);
  for (int r = 0; r < 16; ++r) held[r] = {r, 15 - r};
  CHECK(balance_rank_loads(plain, held, forward_layer_costs(v3, 4096), anything) == plain);
}

}  // namespace CS_TEST_FILE
