#include "sim/collective_plan.h"

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
    plan.phases.push_back({Transfer{0, 1, bytes}});
    return plan;
  }
  if (n < 2) return plan;  // a collective over one rank moves nothing
  const double chunk = bytes / n;
  switch (kind) {
    case CollectiveKind::kAllToAll: {
      std::vector<Transfer> phase;
      // Destinations in rotated order (i+1, i+2, ...) as all-to-all kernels issue them.
      for (uint32_t i = 0; i < n; ++i)
        for (uint32_t d = 1; d < n; ++d) phase.push_back({i, (i + d) % n, chunk});
      plan.phases.push_back(std::move(phase));
      break;
    }
    case CollectiveKind::kAllReduce:
      for (uint32_t p = 0; p < 2 * (n - 1); ++p) plan.phases.push_back(ring_phase(n, chunk));
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      for (uint32_t p = 0; p < n - 1; ++p) plan.phases.push_back(ring_phase(n, chunk));
      break;
    case CollectiveKind::kSend:
      break;
  }
  return plan;
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
  }
  return 1.0;
}

}  // namespace cs::sim
