#include "models/moe_routing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cs::models {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("moe routing: " + what);
}

int ep_gpus_per_node(const MoeRoutingSetup& s) { return std::min(s.ep, s.gpus_per_node); }

// Sums of the product-form law's weights over (group set, expert set) pairs, optionally only over
// pairs avoiding one contiguous block of experts; P(S avoids the block) is their ratio.
//
// Group g contributes the polynomial 1 + u * P_g(t), with P_g(t) = prod_{i in g} (1 + w_i t): the
// coefficient of u^M t^k of the product over groups sums prod_{i in S} w_i over every pair with
// |T| = M and |S| = k. Prefix and suffix products over groups let a block that touches h groups
// be answered by recomputing only those h factors. Arrays are (M+1) x (k+1), row-major [m][j].
class PartitionSums {
 public:
  PartitionSums(const MoeRoutingSetup& s, std::vector<double> weights)
      : w_(std::move(weights)), m_(s.groups_per_token), k_(s.top_k), q_(s.experts / s.groups),
        groups_(s.groups) {
    prefix_.assign(groups_ + 1, unit());
    suffix_.assign(groups_ + 1, unit());
    for (int g = 0; g < groups_; ++g) {
      prefix_[g + 1] = prefix_[g];
      multiply(prefix_[g + 1], group_poly(g, 0, 0));
    }
    for (int g = groups_ - 1; g >= 0; --g) {
      suffix_[g] = suffix_[g + 1];
      multiply(suffix_[g], group_poly(g, 0, 0));
    }
  }

  double total() const { return prefix_[groups_][idx(m_, k_)]; }

  // Sum over pairs whose expert set holds none of the experts [lo, hi).
  double avoiding(int lo, int hi) const {
    const int g0 = lo / q_, g1 = (hi - 1) / q_;
    std::vector<double> c = prefix_[g0];
    for (int g = g0; g <= g1; ++g) multiply(c, group_poly(g, lo, hi));
    const std::vector<double>& r = suffix_[g1 + 1];
    double sum = 0;
    for (int m = 0; m <= m_; ++m)
      for (int j = 0; j <= k_; ++j) sum += c[idx(m, j)] * r[idx(m_ - m, k_ - j)];
    return sum;
  }

 private:
  int idx(int m, int j) const { return m * (k_ + 1) + j; }
  std::vector<double> unit() const {
    std::vector<double> c((m_ + 1) * (k_ + 1), 0.0);
    c[0] = 1;
    return c;
  }
  // Elementary symmetric sums e_0..e_k of group g's weights, experts [lo, hi) left out.
  std::vector<double> group_poly(int g, int lo, int hi) const {
    std::vector<double> e(k_ + 1, 0.0);
    e[0] = 1;
    for (int i = g * q_; i < (g + 1) * q_; ++i) {
      if (i >= lo && i < hi) continue;
      for (int j = k_; j >= 1; --j) e[j] += w_[i] * e[j - 1];
    }
    return e;
  }
  // c *= 1 + u * p(t), truncated; m descends so c[m-1] is still the old row when read.
  void multiply(std::vector<double>& c, const std::vector<double>& p) const {
    for (int m = m_; m >= 1; --m)
      for (int j = k_; j >= 0; --j) {
        double add = 0;
        for (int l = 0; l <= j; ++l) add += c[idx(m - 1, j - l)] * p[l];
        c[idx(m, j)] += add;
      }
  }

  std::vector<double> w_;
  int m_, k_, q_, groups_;
  std::vector<std::vector<double>> prefix_, suffix_;
};

// Weights scaled to mean 1 (the law is scale-free) so the partition sums stay far from overflow.
std::vector<double> normalized_weights(const MoeRoutingSetup& s) {
  if (s.expert_weight.empty()) return std::vector<double>(s.experts, 1.0);
  double sum = 0;
  for (double w : s.expert_weight) sum += w;
  std::vector<double> w(s.expert_weight);
  for (double& x : w) x *= s.experts / sum;
  return w;
}

void require_volume(double tokens_per_gpu, double bytes_per_token) {
  require(std::isfinite(tokens_per_gpu) && tokens_per_gpu >= 0, "tokens_per_gpu must be finite and >= 0");
  require(std::isfinite(bytes_per_token) && bytes_per_token >= 0, "bytes_per_token must be finite and >= 0");
}

void require_stats(const MoeRoutingSetup& s, const RoutingStats& st) {
  require(static_cast<int>(st.gpu_hit.size()) == s.ep && static_cast<int>(st.node_hit.size()) == ep_nodes(s),
          "routing stats do not match the setup");
}

}  // namespace

std::vector<double> zipf_expert_weights(int experts, double exponent) {
  require(experts >= 1, "experts must be >= 1");
  require(std::isfinite(exponent) && exponent >= 0, "zipf exponent must be finite and >= 0");
  int bits = 0;
  while ((1LL << bits) < experts) ++bits;
  std::vector<double> w(experts, 0.0);
  int rank = 0;
  for (long long i = 0; i < (1LL << bits); ++i) {
    long long rev = 0;
    for (int b = 0; b < bits; ++b)
      if (i & (1LL << b)) rev |= 1LL << (bits - 1 - b);
    if (rev >= experts) continue;
    w[rev] = std::pow(static_cast<double>(rank + 1), -exponent);
    ++rank;
  }
  return w;
}

int ep_nodes(const MoeRoutingSetup& s) { return s.ep / ep_gpus_per_node(s); }
int ep_node_of(const MoeRoutingSetup& s, int rank) { return rank / ep_gpus_per_node(s); }

void validate(const MoeRoutingSetup& s) {
  require(s.experts >= 1, "experts must be >= 1");
  require(s.groups >= 1 && s.experts % s.groups == 0, "groups must divide experts");
  require(s.groups_per_token >= 1 && s.groups_per_token <= s.groups, "groups_per_token must lie in [1, groups]");
  require(s.ep >= 1 && s.experts % s.ep == 0, "ep must divide experts");
  require(s.gpus_per_node >= 1, "gpus_per_node must be >= 1");
  require(s.ep <= s.gpus_per_node || s.ep % s.gpus_per_node == 0,
          "ep larger than gpus_per_node must be a multiple of it");
  const int reachable = s.groups_per_token * (s.experts / s.groups);
  require(s.top_k >= 1 && s.top_k <= reachable,
          "top_k must lie in [1, experts in groups_per_token groups = " + std::to_string(reachable) + "]");
  if (s.expert_weight.empty()) return;
  require(static_cast<int>(s.expert_weight.size()) == s.experts, "expert_weight needs one weight per expert");
  for (double w : s.expert_weight) require(std::isfinite(w) && w >= 0, "expert weights must be finite and >= 0");
  // Zero weights can leave no expert set of top_k positive-weight experts within M groups.
  require(PartitionSums(s, normalized_weights(s)).total() > 0,
          "fewer than top_k experts with positive weight fit in groups_per_token groups");
}

RoutingStats routing_stats(const MoeRoutingSetup& s) {
  validate(s);
  const PartitionSums sums(s, normalized_weights(s));
  const double total = sums.total();
  const auto hit = [&](int lo, int hi) { return 1.0 - sums.avoiding(lo, hi) / total; };

  RoutingStats st;
  st.expert_rows.resize(s.experts);
  for (int i = 0; i < s.experts; ++i) st.expert_rows[i] = hit(i, i + 1);
  const int per_rank = s.experts / s.ep, nodes = ep_nodes(s), per_node = s.experts / nodes;
  st.rows_per_token.assign(s.ep, 0.0);
  st.gpu_hit.resize(s.ep);
  for (int r = 0; r < s.ep; ++r) {
    for (int i = r * per_rank; i < (r + 1) * per_rank; ++i) st.rows_per_token[r] += st.expert_rows[i];
    st.gpu_hit[r] = hit(r * per_rank, (r + 1) * per_rank);
    st.gpus_per_token += st.gpu_hit[r];
  }
  st.node_hit.resize(nodes);
  for (int n = 0; n < nodes; ++n) {
    st.node_hit[n] = hit(n * per_node, (n + 1) * per_node);
    st.nodes_per_token += st.node_hit[n];
  }
  return st;
}

std::vector<sim::Transfer> dispatch_transfers(const MoeRoutingSetup& s, const RoutingStats& st,
                                              double tokens_per_gpu, double bytes_per_token) {
  validate(s);
  require_stats(s, st);
  require_volume(tokens_per_gpu, bytes_per_token);
  const double per_gpu = tokens_per_gpu * bytes_per_token;
  const int per_node = ep_gpus_per_node(s), nodes = ep_nodes(s);
  std::vector<sim::Transfer> out;
  for (int src = 0; src < s.ep; ++src)
    for (int dst = 0; dst < s.ep; ++dst) {
      if (src == dst) continue;
      double bytes = 0;
      if (src / per_node == dst / per_node) {
        // src's own tokens, plus those it relays for the same-local-index GPU of every other
        // node: nodes x the tokens of one GPU, each reaching dst when it targets dst.
        bytes = nodes * per_gpu * st.gpu_hit[dst];
      } else if (src % per_node == dst % per_node) {
        bytes = per_gpu * st.node_hit[dst / per_node];  // one IB crossing per targeted node
      }
      if (bytes > 0) out.push_back({static_cast<uint32_t>(src), static_cast<uint32_t>(dst), bytes});
    }
  return out;
}

std::vector<sim::Transfer> dispatch_transfers(const MoeRoutingSetup& s, double tokens_per_gpu,
                                              double bytes_per_token) {
  require_volume(tokens_per_gpu, bytes_per_token);
  return dispatch_transfers(s, routing_stats(s), tokens_per_gpu, bytes_per_token);
}

std::vector<sim::Transfer> combine_transfers(const MoeRoutingSetup& s, const RoutingStats& st,
                                             double tokens_per_gpu, double bytes_per_token) {
  std::vector<sim::Transfer> out = dispatch_transfers(s, st, tokens_per_gpu, bytes_per_token);
  for (sim::Transfer& t : out) std::swap(t.src, t.dst);
  std::sort(out.begin(), out.end(),
            [](const sim::Transfer& a, const sim::Transfer& b) { return a.src != b.src ? a.src < b.src : a.dst < b.dst; });
  return out;
}

std::vector<sim::Transfer> combine_transfers(const MoeRoutingSetup& s, double tokens_per_gpu,
                                             double bytes_per_token) {
  require_volume(tokens_per_gpu, bytes_per_token);
  return combine_transfers(s, routing_stats(s), tokens_per_gpu, bytes_per_token);
}

double internode_paced_bytes(const MoeRoutingSetup& s, const RoutingStats& st, double tokens_per_gpu,
                             double bytes_per_token) {
  require_volume(tokens_per_gpu, bytes_per_token);
  require_stats(s, st);
  if (ep_nodes(s) <= 1) return 0;
  return tokens_per_gpu * st.nodes_per_token * bytes_per_token;
}

A2aTrafficSummary summarize_a2a(const MoeRoutingSetup& s, const std::vector<sim::Transfer>& transfers) {
  validate(s);
  std::vector<double> ib_sent(s.ep, 0.0), ib_recv(s.ep, 0.0), nvl_sent(s.ep, 0.0), nvl_recv(s.ep, 0.0);
  for (const sim::Transfer& t : transfers) {
    require(t.src < static_cast<uint32_t>(s.ep) && t.dst < static_cast<uint32_t>(s.ep), "transfer rank outside the EP group");
    const bool ib = ep_node_of(s, static_cast<int>(t.src)) != ep_node_of(s, static_cast<int>(t.dst));
    (ib ? ib_sent : nvl_sent)[t.src] += t.bytes;
    (ib ? ib_recv : nvl_recv)[t.dst] += t.bytes;
  }
  const auto reduce = [&](const std::vector<double>& v) {
    PerGpuBytes r;
    for (double x : v) {
      r.max_bytes = std::max(r.max_bytes, x);
      r.mean_bytes += x / s.ep;
    }
    return r;
  };
  return {reduce(ib_sent), reduce(ib_recv), reduce(nvl_sent), reduce(nvl_recv)};
}

}  // namespace cs::models
