// MoE routing statistics and the all-to-all traffic they imply, in closed form (no sampling).
//
// Routing law. Experts form `groups` equal contiguous groups; a token takes a set T of
// `groups_per_token` groups and a set S of `top_k` distinct experts inside T. Every pair (T, S)
// has probability proportional to the product of the weights of S's experts (a product-form, or
// conditional Poisson, law). With equal weights every pair is equally likely, which is exactly
// the balanced model: T uniform among the M-subsets of groups, then S uniform among the top_k-
// subsets of T's experts. Weights are scale-free sampling weights, not loads: an expert's load
// (expert_rows) grows with its weight but is not proportional to it. A token's source never
// changes its choice. Expected values are exact, from generating functions over groups: prefix and
// suffix products cost G*M*top_k^2 once, then each expert, GPU or node queried costs only the
// groups it touches (DeepSeek-V3: about 0.1 ms per routing_stats call).
//
// Placement. EP rank r holds experts [r*E/ep, (r+1)*E/ep) and sits on node r / gpus_per_node of
// the EP group (one node when ep <= gpus_per_node).
#pragma once

#include <vector>

#include "sim/collective_plan.h"

namespace cs::models {

struct MoeRoutingSetup {
  int experts = 0;           // routed experts E
  int top_k = 0;             // experts per token
  int groups = 1;            // expert groups G (E % G == 0)
  int groups_per_token = 1;  // M: a token's experts lie in at most M groups (M == G: no limit)
  int ep = 1;                // EP ranks (E % ep == 0)
  int gpus_per_node = 8;     // ep <= gpus_per_node, or ep % gpus_per_node == 0
  std::vector<double> expert_weight;  // per expert, >= 0, scale-free; empty: balanced
};

// Zipf sampling weights: the expert of popularity rank j (0-based) gets (j+1)^-exponent. Rank j
// goes to the j-th term below E of the bit-reversal (van der Corput) sequence over [0, 2^b), so
// for power-of-two E the 2^m hottest experts fall in 2^m distinct equal contiguous blocks (nodes,
// GPUs) for every m. exponent 0: balanced. Throws std::invalid_argument on experts < 1 or a
// negative or non-finite exponent.
std::vector<double> zipf_expert_weights(int experts, double exponent);

// Nodes of the EP group, and the node of an EP rank.
int ep_nodes(const MoeRoutingSetup& setup);
int ep_node_of(const MoeRoutingSetup& setup, int rank);

struct RoutingStats {
  double nodes_per_token = 0;          // expected distinct nodes holding a token's experts
  double gpus_per_token = 0;           // expected distinct EP ranks holding them
  std::vector<double> expert_rows;     // per expert: probability a token selects it; sums to top_k
  std::vector<double> rows_per_token;  // per EP rank: expected token-expert rows it computes per
                                       // token routed in the EP group; sums to top_k
  std::vector<double> gpu_hit;         // per EP rank: probability a token has >= 1 expert there
  std::vector<double> node_hit;        // per node of the EP group: the same for the node
};

// Throws std::invalid_argument on an impossible setup (E % G, E % ep, M outside [1, G], top_k
// outside [1, M*E/G], ep not a multiple of gpus_per_node when larger, bad weights, or weights
// leaving fewer than top_k selectable experts within M groups).
void validate(const MoeRoutingSetup& setup);
RoutingStats routing_stats(const MoeRoutingSetup& setup);

// DeepEP-style dispatch of `tokens_per_gpu` tokens from every EP rank, `bytes_per_token` each:
// a token crosses InfiniBand once per distinct remote node it targets, to the GPU of the same
// local index there, which forwards it over NVLink to every other GPU of its node holding one of
// its experts; on its own node it goes over NVLink to each GPU it targets (never to itself).
// Expected bytes per (src, dst) rank pair, one Transfer per pair with bytes > 0 (relayed and
// direct bytes of a pair summed), sorted by (src, dst). Throws std::invalid_argument on a bad
// setup or negative or non-finite volumes.
std::vector<sim::Transfer> dispatch_transfers(const MoeRoutingSetup& setup, double tokens_per_gpu,
                                              double bytes_per_token);
std::vector<sim::Transfer> dispatch_transfers(const MoeRoutingSetup& setup, const RoutingStats& stats,
                                              double tokens_per_gpu, double bytes_per_token);
// Combine mirrors dispatch: every transfer reversed, with combine's bytes per token.
std::vector<sim::Transfer> combine_transfers(const MoeRoutingSetup& setup, double tokens_per_gpu,
                                             double bytes_per_token);
std::vector<sim::Transfer> combine_transfers(const MoeRoutingSetup& setup, const RoutingStats& stats,
                                             double tokens_per_gpu, double bytes_per_token);

// DeepEP's kernels launch on Buffer.num_sms SMs, 20 by default (REFERENCE.md, DeepEP), two per
// channel; given a partition of their own, they take it whole.
inline constexpr int kDeepEpDefaultSms = 20;

// The bytes each EP rank's DeepEP internode kernel works through in one dispatch (or combine) of
// `tokens_per_gpu` tokens: each token once per node it reaches, its own node included
// (sim::Collective::paced_bytes). 0 when the EP group is one node: DeepEP's intranode kernel then
// runs, which its links bound.
double internode_paced_bytes(const MoeRoutingSetup& setup, const RoutingStats& stats, double tokens_per_gpu,
                             double bytes_per_token);

struct PerGpuBytes {
  double max_bytes = 0;   // over the EP ranks
  double mean_bytes = 0;
};
// Bytes each GPU sends and receives, split into InfiniBand (between nodes) and NVLink (within).
struct A2aTrafficSummary {
  PerGpuBytes ib_sent, ib_received, nvlink_sent, nvlink_received;
};
A2aTrafficSummary summarize_a2a(const MoeRoutingSetup& setup, const std::vector<sim::Transfer>& transfers);

}  // namespace cs::models
