// Brute-force oracle for models/moe_routing: enumerates every (group set, expert set) outcome of
// a tiny MoE layer with its exact probability and plays the DeepEP dispatch rule per source rank.
// Independent of the closed forms: balanced probabilities are 1 / (C(G,M) C(M*E/G, k)) from
// integer binomials; weighted ones are the product-form law's prod w_S over its normalizer.
#pragma once

#include <bit>
#include <cstdint>
#include <set>
#include <vector>

#include "models/moe_routing.h"

namespace cs::test {

struct BruteRouting {
  double nodes_per_token = 0, gpus_per_token = 0;
  double total_probability = 0;  // of the enumerated outcomes: 1 when the enumeration is complete
  std::vector<double> expert_rows, rows_per_token, gpu_hit, node_hit;
  std::vector<std::vector<double>> dispatch;  // [src][dst] bytes for 1 token per GPU of 1 byte
};

inline uint64_t brute_choose(int n, int k) {
  if (k < 0 || k > n) return 0;
  uint64_t c = 1;
  for (int i = 1; i <= k; ++i) c = c * static_cast<uint64_t>(n - k + i) / static_cast<uint64_t>(i);
  return c;
}

// Only for tiny layers: G <= 20 and M*E/G <= 20 keep the subset masks small.
inline BruteRouting brute_force_routing(const models::MoeRoutingSetup& s) {
  const int E = s.experts, G = s.groups, M = s.groups_per_token, k = s.top_k, ep = s.ep;
  const int q = E / G, per_rank = E / ep;
  const int per_node = ep <= s.gpus_per_node ? ep : s.gpus_per_node, nodes = ep / per_node;
  const bool weighted = !s.expert_weight.empty();
  BruteRouting b;
  b.expert_rows.assign(E, 0);
  b.rows_per_token.assign(ep, 0);
  b.gpu_hit.assign(ep, 0);
  b.node_hit.assign(nodes, 0);
  b.dispatch.assign(ep, std::vector<double>(ep, 0));
  double norm = 0;
  const double balanced_p = 1.0 / (static_cast<double>(brute_choose(G, M)) * static_cast<double>(brute_choose(M * q, k)));
  for (uint32_t tmask = 0; tmask < (1u << G); ++tmask) {
    if (std::popcount(tmask) != M) continue;
    std::vector<int> pool;  // the experts of the chosen groups
    for (int g = 0; g < G; ++g)
      if (tmask >> g & 1u)
        for (int i = g * q; i < (g + 1) * q; ++i) pool.push_back(i);
    for (uint32_t smask = 0; smask < (1u << pool.size()); ++smask) {
      if (std::popcount(smask) != k) continue;
      double p = weighted ? 1.0 : balanced_p;
      std::set<int> ranks, hit_nodes;
      std::vector<int> chosen;
      for (size_t j = 0; j < pool.size(); ++j)
        if (smask >> j & 1u) {
          chosen.push_back(pool[j]);
          if (weighted) p *= s.expert_weight[pool[j]];
          ranks.insert(pool[j] / per_rank);
          hit_nodes.insert(pool[j] / per_rank / per_node);
        }
      norm += p;
      for (int i : chosen) b.expert_rows[i] += p;
      for (int r : ranks) b.gpu_hit[r] += p;
      for (int n : hit_nodes) b.node_hit[n] += p;
      b.gpus_per_token += p * static_cast<double>(ranks.size());
      b.nodes_per_token += p * static_cast<double>(hit_nodes.size());
      // The dispatch rule, token by token from every source rank.
      for (int src = 0; src < ep; ++src) {
        const int src_node = src / per_node, local = src % per_node;
        for (int n : hit_nodes) {
          const int entry = n == src_node ? src : n * per_node + local;  // who holds the token there
          if (entry != src) b.dispatch[src][entry] += p;                  // one IB crossing
          for (int r : ranks)
            if (r / per_node == n && r != entry) b.dispatch[entry][r] += p;  // NVLink hop
        }
      }
    }
  }
  b.total_probability = weighted ? 1.0 : norm;
  if (weighted) {  // normalize the product weights into probabilities
    for (double& x : b.expert_rows) x /= norm;
    for (double& x : b.gpu_hit) x /= norm;
    for (double& x : b.node_hit) x /= norm;
    for (auto& row : b.dispatch)
      for (double& x : row) x /= norm;
    b.gpus_per_token /= norm;
    b.nodes_per_token /= norm;
  }
  for (int i = 0; i < E; ++i) b.rows_per_token[i / per_rank] += b.expert_rows[i];
  return b;
}

}  // namespace cs::test
