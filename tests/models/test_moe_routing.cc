// MoE routing statistics and all-to-all volumes: closed forms against brute-force enumeration of
// tiny layers, against textbook hypergeometric forms at DeepSeek-V3 size, and under skew.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/moe_routing.h"
#include "moe_routing_brute_force.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using cs::models::MoeRoutingSetup;

namespace {

constexpr double kRel = 1e-12;

Approx exact(double x) { return Approx(x).epsilon(kRel).margin(1e-14); }

MoeRoutingSetup setup(int experts, int top_k, int groups, int per_token, int ep, int gpus_per_node,
                      std::vector<double> weight = {}) {
  return {experts, top_k, groups, per_token, ep, gpus_per_node, std::move(weight)};
}

std::string describe(const MoeRoutingSetup& s) {
  return "E=" + std::to_string(s.experts) + " k=" + std::to_string(s.top_k) + " G=" + std::to_string(s.groups) +
         " M=" + std::to_string(s.groups_per_token) + " ep=" + std::to_string(s.ep) +
         " gpn=" + std::to_string(s.gpus_per_node) + (s.expert_weight.empty() ? "" : " weighted");
}

// Tiny layers covering aligned and misaligned groups/ranks, one node, one GPU per node, M = 1, M = G.
std::vector<MoeRoutingSetup> tiny_setups() {
  return {setup(8, 2, 4, 2, 4, 2),  setup(8, 3, 4, 2, 8, 2),  setup(8, 3, 4, 2, 8, 4), setup(8, 3, 4, 4, 4, 4),
          setup(8, 2, 4, 1, 8, 2),  setup(12, 3, 3, 2, 4, 2), setup(12, 4, 6, 3, 6, 3), setup(8, 2, 8, 3, 2, 1),
          setup(8, 3, 4, 2, 8, 8),  setup(8, 2, 4, 2, 8, 1),  setup(8, 4, 4, 2, 4, 2)};
}

std::vector<double> tiny_weights(int experts) {
  const std::vector<double> w{3, 1, 0.5, 2, 0, 4, 0.25, 1.5, 6, 1, 0.2, 2.5};
  return {w.begin(), w.begin() + experts};
}

std::vector<std::vector<double>> as_matrix(int ep, const std::vector<cs::sim::Transfer>& ts) {
  std::vector<std::vector<double>> m(ep, std::vector<double>(ep, 0.0));
  for (const auto& t : ts) m[t.src][t.dst] += t.bytes;
  return m;
}

void check_well_formed(const std::vector<cs::sim::Transfer>& ts) {
  for (size_t i = 0; i < ts.size(); ++i) {
    CHECK(ts[i].bytes > 0);
    CHECK(ts[i].src != ts[i].dst);
    if (i > 0) CHECK((ts[i - 1].src < ts[i].src || (ts[i - 1].src == ts[i].src && ts[i - 1].dst < ts[i].dst)));
  }
}

void check_against_brute_force(const MoeRoutingSetup& s) {
  INFO(describe(s));
  const auto b = cs::test::brute_force_routing(s);
  REQUIRE(b.total_probability == exact(1.0));
  const auto st = cs::models::routing_stats(s);
  CHECK(st.nodes_per_token == exact(b.nodes_per_token));
  CHECK(st.gpus_per_token == exact(b.gpus_per_token));
  REQUIRE(st.expert_rows.size() == b.expert_rows.size());
  for (size_t i = 0; i < b.expert_rows.size(); ++i) CHECK(st.expert_rows[i] == exact(b.expert_rows[i]));
  REQUIRE(st.gpu_hit.size() == b.gpu_hit.size());
  for (size_t r = 0; r < b.gpu_hit.size(); ++r) {
    CHECK(st.gpu_hit[r] == exact(b.gpu_hit[r]));
    CHECK(st.rows_per_token[r] == exact(b.rows_per_token[r]));
  }
  REQUIRE(st.node_hit.size() == b.node_hit.size());
  for (size_t n = 0; n < b.node_hit.size(); ++n) CHECK(st.node_hit[n] == exact(b.node_hit[n]));

  const double tokens = 3, bytes = 5;
  const auto dispatch = cs::models::dispatch_transfers(s, tokens, bytes);
  const auto combine = cs::models::combine_transfers(s, st, tokens, 2 * bytes);
  check_well_formed(dispatch);
  check_well_formed(combine);
  const auto d = as_matrix(s.ep, dispatch), c = as_matrix(s.ep, combine);
  for (int i = 0; i < s.ep; ++i)
    for (int j = 0; j < s.ep; ++j) {
      CHECK(d[i][j] == exact(tokens * bytes * b.dispatch[i][j]));
      CHECK(c[j][i] == exact(tokens * 2 * bytes * b.dispatch[i][j]));  // combine is dispatch reversed
    }
}

double choose(int n, int k) {
  if (k < 0 || k > n) return 0;
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

// DeepSeek-V3: 256 experts, top-8, 8 groups, 4 per token, EP 64 on 8-GPU nodes.
MoeRoutingSetup deepseek_v3(std::vector<double> weight = {}) { return setup(256, 8, 8, 4, 64, 8, std::move(weight)); }

}  // namespace

TEST_CASE("moe routing: balanced routing stats and transfers equal brute-force enumeration", "[moe]") {
  for (const auto& s : tiny_setups()) check_against_brute_force(s);
}

TEST_CASE("moe routing: weighted routing equals brute-force enumeration of the product-form law", "[moe]") {
  for (auto s : tiny_setups()) {
    s.expert_weight = tiny_weights(s.experts);
    check_against_brute_force(s);
    s.expert_weight = cs::models::zipf_expert_weights(s.experts, 1.3);
    check_against_brute_force(s);
  }
}

TEST_CASE("moe routing: equal weights reduce exactly to the balanced model", "[moe]") {
  for (auto s : {setup(12, 4, 6, 3, 6, 3), deepseek_v3()}) {
    const auto balanced = cs::models::routing_stats(s);
    s.expert_weight.assign(s.experts, 2.5);
    const auto equal = cs::models::routing_stats(s);
    CHECK(equal.nodes_per_token == exact(balanced.nodes_per_token));
    CHECK(equal.gpus_per_token == exact(balanced.gpus_per_token));
    for (int r = 0; r < s.ep; ++r) CHECK(equal.gpu_hit[r] == exact(balanced.gpu_hit[r]));
    for (int i = 0; i < s.experts; ++i) CHECK(equal.expert_rows[i] == exact(double(s.top_k) / s.experts));
  }
}

TEST_CASE("moe routing: DeepSeek-V3: 3.629 nodes and 7.359 GPUs per token", "[moe]") {
  const auto st = cs::models::routing_stats(deepseek_v3());
  // A node (= group) is taken with probability 1/2, then holds none of the 8 experts drawn from
  // 128 with probability C(96,8)/C(128,8); a GPU's 4 experts likewise with C(124,8)/C(128,8).
  const double nodes = 4 * (1 - choose(96, 8) / choose(128, 8)), gpus = 32 * (1 - choose(124, 8) / choose(128, 8));
  WARN("DeepSeek-V3 nodes per token " << st.nodes_per_token << ", GPUs per token " << st.gpus_per_token);
  CHECK(st.nodes_per_token == exact(nodes));
  CHECK(st.gpus_per_token == exact(gpus));
  CHECK(st.nodes_per_token == Approx(3.6290109244).epsilon(1e-10));
  CHECK(st.gpus_per_token == Approx(7.3593700787).epsilon(1e-10));
  for (double h : st.gpu_hit) CHECK(h == exact(gpus / 64));
  for (double r : st.rows_per_token) CHECK(r == exact(8.0 / 64));
}

TEST_CASE("moe routing: 64 groups: the group DP matches hypergeometric closed forms", "[moe]") {
  // 4 experts per group = one GPU; a node's 32 experts span 8 groups, j of them taken among 32 of 64.
  const auto s = setup(256, 8, 64, 32, 64, 8);
  const auto st = cs::models::routing_stats(s);
  double node_none = 0;
  for (int j = 0; j <= 8; ++j)
    node_none += choose(8, j) * choose(56, 32 - j) / choose(64, 32) * choose(128 - 4 * j, 8) / choose(128, 8);
  for (double h : st.node_hit) CHECK(h == Approx(1 - node_none).epsilon(1e-11));
  for (double h : st.gpu_hit) CHECK(h == Approx(0.5 * (1 - choose(124, 8) / choose(128, 8))).epsilon(1e-11));
  // top_k = every expert of the two groups taken: exactly 2 GPUs per token.
  const auto full = cs::models::routing_stats(setup(256, 8, 64, 2, 64, 8));
  CHECK(full.gpus_per_token == exact(2.0));
  for (double h : full.node_hit) CHECK(h == exact(1 - choose(56, 2) / choose(64, 2)));
}

TEST_CASE("moe routing: DeepSeek-V3 dispatch and combine bytes per GPU, 4096 tokens", "[moe]") {
  const auto s = deepseek_v3();
  const auto st = cs::models::routing_stats(s);
  const double tokens = 4096, fp8 = 7168 + 56 * 4, bf16 = 7168 * 2;  // FP8 + 1x128 FP32 scales; BF16
  const auto d = cs::models::summarize_a2a(s, cs::models::dispatch_transfers(s, st, tokens, fp8));
  const auto c = cs::models::summarize_a2a(s, cs::models::combine_transfers(s, st, tokens, bf16));
  WARN("dispatch per GPU: IB " << d.ib_sent.mean_bytes / 1e6 << " MB sent, NVLink " << d.nvlink_sent.mean_bytes / 1e6
                               << " MB sent; combine: IB " << c.ib_sent.mean_bytes / 1e6 << " MB, NVLink "
                               << c.nvlink_sent.mean_bytes / 1e6 << " MB");
  // IB: one crossing per targeted remote node (7 of 8 nodes are remote, all alike).
  const double ib = tokens * fp8 * st.nodes_per_token * 7 / 8;
  // NVLink: each GPU carries its own tokens and 7 relayed GPUs' tokens to its 7 peers.
  const double nvl = 8 * tokens * fp8 * 7 * st.gpu_hit[0];
  CHECK(d.ib_sent.mean_bytes == exact(ib));
  CHECK(d.ib_sent.max_bytes == exact(ib));
  CHECK(d.ib_received.max_bytes == exact(ib));
  CHECK(d.nvlink_sent.mean_bytes == exact(nvl));
  CHECK(d.ib_sent.mean_bytes == Approx(96.143125e6).epsilon(1e-8));
  CHECK(d.nvlink_sent.mean_bytes == Approx(194.971262e6).epsilon(1e-8));
  CHECK(c.ib_received.mean_bytes == exact(ib * bf16 / fp8));
  CHECK(c.nvlink_received.mean_bytes == exact(nvl * bf16 / fp8));
}

TEST_CASE("moe routing: zipf weights: a spread permutation of 1/rank^s", "[moe]") {
  const auto w = cs::models::zipf_expert_weights(256, 1.0);
  // The 8 hottest experts sit on 8 distinct nodes (32 experts each), the 64 hottest on 64 GPUs.
  std::vector<int> order(256);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
  std::vector<int> nodes, gpus;
  for (int i = 0; i < 8; ++i) nodes.push_back(order[i] / 32);
  for (int i = 0; i < 64; ++i) gpus.push_back(order[i] / 4);
  std::sort(nodes.begin(), nodes.end());
  std::sort(gpus.begin(), gpus.end());
  CHECK(std::unique(nodes.begin(), nodes.end()) == nodes.end());
  CHECK(std::unique(gpus.begin(), gpus.end()) == gpus.end());
  CHECK(order[0] == 0);
  CHECK(order[1] == 128);
  // Not a power of two: still every weight 1/j for j = 1..12 exactly once.
  auto w12 = cs::models::zipf_expert_weights(12, 1.0);
  std::sort(w12.rbegin(), w12.rend());
  for (int j = 0; j < 12; ++j) CHECK(w12[j] == exact(1.0 / (j + 1)));
  for (double x : cs::models::zipf_expert_weights(10, 0.0)) CHECK(x == 1.0);
}

TEST_CASE("moe routing: skew loads the hottest GPU above the mean, conserving top_k rows", "[moe]") {
  double previous_hot = 8.0 / 64;
  for (double exponent : {0.5, 1.0, 1.5}) {
    INFO("zipf exponent " << exponent);
    const auto s = deepseek_v3(cs::models::zipf_expert_weights(256, exponent));
    const auto st = cs::models::routing_stats(s);
    const double rows = std::accumulate(st.rows_per_token.begin(), st.rows_per_token.end(), 0.0);
    const double expert_rows = std::accumulate(st.expert_rows.begin(), st.expert_rows.end(), 0.0);
    CHECK(rows == exact(8.0));
    CHECK(expert_rows == exact(8.0));
    const double hot = *std::max_element(st.rows_per_token.begin(), st.rows_per_token.end());
    CHECK(hot > previous_hot * 1.05);  // hotter with every step of skew
    previous_hot = hot;
    CHECK(st.nodes_per_token <= 4 + 1e-12);  // node limit kept
    for (double h : st.gpu_hit) CHECK((h >= 0 && h <= 1));
    const auto d = cs::models::summarize_a2a(s, cs::models::dispatch_transfers(s, st, 4096, 7392));
    CHECK(d.ib_received.max_bytes > 1.05 * d.ib_received.mean_bytes);
    CHECK(d.nvlink_received.max_bytes > 1.05 * d.nvlink_received.mean_bytes);
  }
  const auto flat = cs::models::routing_stats(deepseek_v3());
  const auto d = cs::models::summarize_a2a(deepseek_v3(), cs::models::dispatch_transfers(deepseek_v3(), flat, 4096, 7392));
  CHECK(d.nvlink_received.max_bytes == exact(d.nvlink_received.mean_bytes));
}

TEST_CASE("moe routing: zero weights: experts never chosen, unreachable top_k rejected", "[moe]") {
  auto s = setup(8, 2, 4, 2, 4, 2, {1, 0, 0, 0, 2, 3, 0, 0});
  const auto st = cs::models::routing_stats(s);
  CHECK(st.expert_rows[1] == 0.0);
  CHECK(st.gpu_hit[1] == 0.0);  // experts 2, 3
  // Pairs (T, S) by weight: {0,4} and {0,5} need T = {g0, g2} (weights 2, 3); {4,5} fits 3 group
  // sets (6 each). Rank 2 holds experts 4 and 5: (2 + 3 + 2 * 18) / 23 rows per token.
  CHECK(st.rows_per_token[2] == exact(41.0 / 23));
  CHECK(st.expert_rows[4] == exact(20.0 / 23));
  s.groups_per_token = 1;  // only group 2 holds two positive experts: still feasible
  CHECK(cs::models::routing_stats(s).expert_rows[4] == exact(1.0));
  s.expert_weight = {1, 0, 1, 0, 1, 0, 1, 0};  // one positive expert per group
  CHECK_THROWS_AS(cs::models::routing_stats(s), std::invalid_argument);
}

TEST_CASE("moe routing: impossible MoE setups throw", "[moe]") {
  using cs::models::routing_stats;
  const std::vector<MoeRoutingSetup> bad{
      setup(10, 2, 4, 2, 2, 8),  // groups do not divide experts
      setup(8, 2, 4, 2, 3, 8),   // ep does not divide experts
      setup(8, 2, 4, 5, 4, 8),   // more groups per token than groups
      setup(8, 2, 4, 0, 4, 8),   // no group per token
      setup(8, 5, 4, 2, 4, 8),   // top_k above the 4 experts of 2 groups
      setup(8, 0, 4, 2, 4, 8),   // top_k 0
      setup(24, 2, 4, 2, 12, 8), // 12 ranks over 8-GPU nodes
      setup(8, 2, 4, 2, 4, 0),   // no GPU per node
      setup(8, 2, 4, 2, 4, 2, {1, 1, 1}),
      setup(8, 2, 4, 2, 4, 2, {1, 1, 1, -1, 1, 1, 1, 1}),
      setup(8, 2, 4, 2, 4, 2, {1, 1, 1, NAN, 1, 1, 1, 1}),
      setup(8, 2, 4, 2, 4, 2, std::vector<double>(8, 0.0)),
  };
  for (const auto& s : bad) {
    INFO(describe(s));
    CHECK_THROWS_AS(routing_stats(s), std::invalid_argument);
    CHECK_THROWS_AS(cs::models::dispatch_transfers(s, 1, 1), std::invalid_argument);
  }
  CHECK_THROWS_AS(cs::models::dispatch_transfers(deepseek_v3(), -1, 1), std::invalid_argument);
  CHECK_THROWS_AS(cs::models::combine_transfers(deepseek_v3(), 1, INFINITY), std::invalid_argument);
  CHECK_THROWS_AS(cs::models::zipf_expert_weights(8, -0.5), std::invalid_argument);
  CHECK_THROWS_AS(cs::models::zipf_expert_weights(0, 1), std::invalid_argument);
}

}  // namespace CS_TEST_FILE
