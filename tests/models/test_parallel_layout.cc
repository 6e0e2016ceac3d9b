// Parallel layouts: rank numbering and placement, layout checks, and the FLOP-balanced pipeline
// split against an exhaustive search.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>

#include "models/layer_ops.h"
#include "models/model_zoo.h"
#include "models/parallel_layout.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

double forward_flops(const std::vector<LayerOp>& ops) {
  double f = 0;
  for (const LayerOp& o : ops)
    if (o.pass == Pass::kForward) f += o.model_flops;
  return f;
}

// The largest stage's forward FLOPs of a split, computed from the ops directly.
double largest_stage(const ModelSpec& m, const std::vector<int>& split, int64_t seq) {
  LayerContext c;
  c.tokens = c.seq_len = seq;
  double worst = 0;
  int layer = 0;
  for (size_t s = 0; s < split.size(); ++s) {
    double f = 0;
    for (int i = 0; i < split[s]; ++i) f += forward_flops(layer_ops(m, layer++, c));
    if (s + 1 == split.size()) {
      f += forward_flops(head_ops(m, c));
      for (int d = 0; d < m.mtp_depth; ++d) f += forward_flops(mtp_ops(m, c));
    }
    worst = std::max(worst, f);
  }
  return worst;
}

// Every split of `layers` into `pp` stages of at least one layer.
void all_splits(int layers, int pp, std::vector<int>& cur, const std::function<void(const std::vector<int>&)>& f) {
  if (static_cast<int>(cur.size()) == pp - 1) {
    cur.push_back(layers);
    f(cur);
    cur.pop_back();
    return;
  }
  for (int k = 1; k <= layers - (pp - 1 - static_cast<int>(cur.size())); ++k) {
    cur.push_back(k);
    all_splits(layers - k, pp, cur, f);
    cur.pop_back();
  }
}

}  // namespace

TEST_CASE("parallel layout: ranks are numbered tp fastest, then dp, then pp", "[layout]") {
  ParallelLayout l;
  l.tp = 2;
  l.dp = 8;
  l.pp = 4;
  l.ep = 4;
  for (int g = 0; g < l.gpus(); ++g) {
    const RankCoords c = rank_coords(l, g, 8);
    CHECK(gpu_of(l, c.tp, c.dp, c.pp) == g);
    CHECK(c.ep == c.dp % 4);
    CHECK(c.edp == c.dp / 4);
    CHECK(c.node == g / 8);
  }
  CHECK(rank_coords(l, 17, 8).pp == 1);  // stage = 16 consecutive GPUs
}

TEST_CASE("parallel layout: DeepSeek's layout places an EP group on 8 nodes and a stage on 16", "[layout]") {
  const ModelSpec& v3 = *find_zoo_model("deepseek-v3");
  ParallelLayout l;
  l.dp = 128;
  l.pp = 16;
  l.ep = 64;
  CHECK(layout_problem(l, v3, 2048, 8).empty());
  const std::vector<std::string> lines = explain_placement(l, v3, 8);
  const auto has = [&](const std::string& s) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& x) { return x.find(s) != std::string::npos; });
  };
  CHECK(has("EP group: 64 ranks = 64 GPUs on 8 node(s)"));
  CHECK(has("4 routed experts per GPU"));
  CHECK(has("pipeline stage: 128 GPUs on 16 node(s)"));
  CHECK(has("2 EP group(s) per stage"));
  l.tp = 2;
  l.dp = 64;
  CHECK(layout_problem(l, v3, 2048, 8).find("tp > 1 with MoE layers is not modelled") == 0);
  l.tp = 1;
  l.dp = 128;
  l.ep = 256;
  CHECK(layout_problem(l, v3, 2048, 8).find("ep (256) must divide dp (128)") == 0);
}

TEST_CASE("parallel layout: the default split minimises the largest stage (exhaustive check)", "[layout]") {
  for (const char* name : {"deepseek-v3", "llama3-70b", "gpt3-175b"}) {
    ModelSpec m = *find_zoo_model(name);
    m.layers = 9;  // small enough to try every split
    if (m.moe) m.moe->first_dense_layers = 2;
    for (int pp = 1; pp <= 5; ++pp) {
      INFO(name << " pp " << pp);
      ParallelLayout l;
      l.pp = pp;
      const std::vector<int> got = stage_layers(l, m, 4096);
      REQUIRE(static_cast<int>(got.size()) == pp);
      CHECK(std::all_of(got.begin(), got.end(), [](int v) { return v >= 1; }));
      double best = 1e300;
      std::vector<int> cur;
      all_splits(9, pp, cur, [&](const std::vector<int>& s) { best = std::min(best, largest_stage(m, s, 4096)); });
      CHECK(largest_stage(m, got, 4096) == Approx(best).epsilon(1e-9));
    }
  }
}

TEST_CASE("parallel layout: a given split is kept and checked", "[layout]") {
  const ModelSpec& v3 = *find_zoo_model("deepseek-v3");
  ParallelLayout l;
  l.dp = 128;
  l.pp = 16;
  l.ep = 64;
  l.layers_per_stage = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3};
  CHECK(layout_problem(l, v3, 2048, 8).empty());
  CHECK(stage_layers(l, v3) == l.layers_per_stage);
  l.layers_per_stage.back() = 2;
  CHECK(layout_problem(l, v3, 2048, 8) == "layers_per_stage adds up to 60 layers, but the model has 61");
  l.layers_per_stage.pop_back();
  CHECK(layout_problem(l, v3, 2048, 8) == "layers_per_stage lists 15 stages, but pp is 16");
}

}  // namespace CS_TEST_FILE
