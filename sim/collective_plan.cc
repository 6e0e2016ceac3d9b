#include "sim/collective_plan.h"

#include <cassert>

namespace cs::sim {

namespace {
std::vector<Transfer> ring_phase(uint32_t n, double bytes) {
  std::vector<Transfer> phase;
  for (uint32_t i = 0; i < n; ++i) phase.push_back({i, (i + 1) % n, bytes});
  return phase;
}
}  // namespace

CollectivePlan plan_collective(CollectiveKind kind, uint32_t n, double bytes) {
  CollectivePlan plan;
  if (kind == CollectiveKind::kSend) {
    plan.phase = {Transfer{0, 1, bytes}};
    plan.phases = 1;
    return plan;
  }
  // A collective over one rank moves nothing, except an all-to-all, whose kernel copies its own
  // chunk (the whole buffer) as it does at any size.
  if (n < 2 && !(n == 1 && kind == CollectiveKind::kAllToAll)) return plan;
  const double chunk = bytes / n;
  switch (kind) {
    case CollectiveKind::kAllToAll:
      // Destinations in rotated order (i, i+1, i+2, ...) as all-to-all kernels issue them. The
      // kernel copies its own chunk too (nccl-tests, DeepEP and ours do): a local copy on its SMs.
      for (uint32_t i = 0; i < n; ++i)
        for (uint32_t d = 0; d < n; ++d) plan.phase.push_back({i, (i + d) % n, chunk});
      plan.phases = 1;
      break;
    case CollectiveKind::kAllReduce:
      plan.phase = ring_phase(n, chunk);
      plan.phases = 2 * (n - 1);
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      plan.phase = ring_phase(n, chunk);
      plan.phases = n - 1;
      break;
    case CollectiveKind::kSend:
      break;
    case CollectiveKind::kAllToAllV:
      assert(false && "an all_to_all_v is planned from its graph");
      break;
  }
  return plan;
}

CollectivePlan plan_collective(const OpGraph& graph, const Collective& c) {
  if (c.kind != CollectiveKind::kAllToAllV)
    return plan_collective(c.kind, static_cast<uint32_t>(c.gpus.size()), c.bytes);
  CollectivePlan plan;
  const auto transfers = graph.transfers(c);
  plan.phase.assign(transfers.begin(), transfers.end());
  plan.phases = plan.phase.empty() ? 0 : 1;
  return plan;
}

uint64_t collective_transfers(CollectiveKind kind, uint64_t n) {
  if (kind == CollectiveKind::kSend) return 1;
  if (kind == CollectiveKind::kAllToAll) return n * n;
  if (n < 2) return 0;
  switch (kind) {
    case CollectiveKind::kAllToAll: return n * n;
    case CollectiveKind::kAllReduce: return n * 2 * (n - 1);
    default: return n * (n - 1);
  }
}

uint64_t collective_transfers(const OpGraph& graph, const Collective& c) {
  if (c.kind == CollectiveKind::kAllToAllV) return graph.transfers(c).size();
  return collective_transfers(c.kind, c.gpus.size());
}

double busbw_factor(CollectiveKind kind, uint32_t n) {
  if (n < 2) return 1.0;
  const double r = static_cast<double>(n - 1) / n;
  switch (kind) {
    case CollectiveKind::kAllReduce: return 2.0 * r;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather: return r;
    case CollectiveKind::kSend: return 1.0;
    case CollectiveKind::kAllToAllV: return 1.0;
  }
  return 1.0;
}

}  // namespace cs::sim
