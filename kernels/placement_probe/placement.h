// Where CTAs ran: the GPC map (SMs grouped by the clusters that joined them), a set of SMs'
// placement over GPCs and TPCs, the whole-device SM sets, and the statistics the report gives.
// Included by placement_probe.cu alone.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/json_writer.h"

namespace cs::kernels::placement_probe {

struct Stats {
  double median = NAN, p10 = NAN, p90 = NAN, min = NAN, max = NAN;
};
inline Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) {
    const double pos = f * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.median = q(0.5);
  s.p10 = q(0.1);
  s.p90 = q(0.9);
  s.min = v.front();
  s.max = v.back();
  return s;
}
inline double r3(double x) { return std::isfinite(x) ? std::round(x * 1000.0) / 1000.0 : x; }

struct GpcMap {
  std::vector<std::vector<int>> groups;  // SMs per group, groups ordered by first SM
  std::vector<int> group_of;             // per SM id, -1 unknown
  int gpc(int sm) const { return sm >= 0 && sm < static_cast<int>(group_of.size()) ? group_of[sm] : -1; }
};

struct Placement {
  int ctas = 0;
  int gpcs = 0;                // distinct groups
  int tpcs = 0;                // distinct SM pairs (sm / 2)
  int tpcs_both = 0;           // pairs with both SMs used
  std::vector<int> per_gpc;    // CTAs per group
  std::vector<int> sms;        // sorted
};
inline Placement placement_of(const std::vector<int>& sms_in, const GpcMap& map) {
  Placement p;
  p.sms = sms_in;
  std::sort(p.sms.begin(), p.sms.end());
  p.ctas = static_cast<int>(p.sms.size());
  p.per_gpc.assign(map.groups.size() + 1, 0);  // last: SMs in no group
  std::map<int, int> tpc;
  for (int s : p.sms) {
    const int g = map.gpc(s);
    ++p.per_gpc[g < 0 ? map.groups.size() : static_cast<std::size_t>(g)];
    ++tpc[s / 2];
  }
  for (int n : p.per_gpc) p.gpcs += n > 0 ? 1 : 0;
  p.tpcs = static_cast<int>(tpc.size());
  for (const auto& [t, n] : tpc) p.tpcs_both += n >= 2 ? 1 : 0;
  if (p.per_gpc.back() == 0) p.per_gpc.pop_back();
  return p;
}


// The SM sets of the whole-device placement experiment, from the GPC map: rank_of_sm per set.
struct SmSet {
  std::string name;
  std::string how;
  std::vector<int> sms;
};
inline std::vector<SmSet> make_smsets(const GpcMap& map, int n) {
  // TPCs (pairs 2i, 2i+1 inside one group) per group, the big groups first.
  std::vector<std::vector<int>> tpcs(map.groups.size());  // pair index i per group
  for (std::size_t g = 0; g < map.groups.size(); ++g) {
    std::set<int> in(map.groups[g].begin(), map.groups[g].end());
    for (int s : map.groups[g])
      if (s % 2 == 0 && in.count(s + 1)) tpcs[g].push_back(s / 2);
  }
  std::vector<std::size_t> order(map.groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tpcs[a].size() > tpcs[b].size(); });
  std::vector<SmSet> out;
  auto round_robin = [&](bool both, std::size_t max_groups) {
    std::vector<int> sms;
    std::vector<std::size_t> next(map.groups.size(), 0);
    bool progress = true;
    while (static_cast<int>(sms.size()) < n && progress) {
      progress = false;
      for (std::size_t oi = 0; oi < std::min(max_groups, order.size()) && static_cast<int>(sms.size()) < n; ++oi) {
        const std::size_t g = order[oi];
        if (next[g] >= tpcs[g].size()) continue;
        const int t = tpcs[g][next[g]++];
        sms.push_back(2 * t);
        if (both && static_cast<int>(sms.size()) < n) sms.push_back(2 * t + 1);
        progress = true;
      }
    }
    return sms;
  };
  auto fill = [&](bool both) {  // fewest groups: fill each group before the next
    std::vector<int> sms;
    for (std::size_t g : order)
      for (int t : tpcs[g]) {
        if (static_cast<int>(sms.size()) < n) sms.push_back(2 * t);
        if (both && static_cast<int>(sms.size()) < n) sms.push_back(2 * t + 1);
      }
    return sms;
  };
  out.push_back({"packed_gpcs", "both SMs of every TPC, filling the largest groups one after another (fewest GPCs)", fill(true)});
  out.push_back({"tpc_pairs_all_gpcs", "both SMs of TPCs, round-robin over all groups", round_robin(true, order.size())});
  out.push_back({"one_per_tpc_all_gpcs", "one SM (the even one) per TPC, round-robin over all groups", round_robin(false, order.size())});
  out.push_back({"one_per_tpc_few_gpcs", "one SM per TPC, filling the largest groups one after another", fill(false)});
  for (auto& s : out) {
    if (static_cast<int>(s.sms.size()) != n) s.how += " (only " + std::to_string(s.sms.size()) + " SMs available)";
    std::sort(s.sms.begin(), s.sms.end());
  }
  return out;
}


void write_stats(JsonWriter& w, const char* key, const Stats& s) {
  w.key(key).begin_object(true);
  w.field("median", r3(s.median));
  w.field("p10", r3(s.p10));
  w.field("p90", r3(s.p90));
  w.field("min", r3(s.min));
  w.field("max", r3(s.max));
  w.end_object();
}

}  // namespace cs::kernels::placement_probe
