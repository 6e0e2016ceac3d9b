// A profile's internode all-to-all paced as DeepEP's kernels, from their published H800 table
// (../shared/REFERENCE.md; calibrate/published_check.h). DeepEP's internode "RDMA bandwidth" stays
// at 43-46 GB/s from EP16 to EP64 while the share of it that crosses InfiniBand grows from half to
// seven eighths: the wire does not bound it, the kernel does, at a pace in node-token bytes (a
// token once per node it reaches). We have no InfiniBand to measure that pace on, so it is fitted
// on the EP16 rows (2 nodes: each NIC at about half the table's rate) and the EP32 and EP64 rows are
// predicted with it.
#pragma once

#include <span>
#include <vector>

#include "calibrate/published_check.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

struct DeepEpFit {
  hw::GpuProfile profile;                // the input profile with a deepep section
  std::vector<PublishedCheck> fitted;    // the rows fitted on
  std::vector<PublishedCheck> held_out;  // the other rows, predicted with the fit
};

// Fits deepep.internode_channel_GBps on the rows of `ep_fitted` (each row's pace that reproduces
// it, then their geometric mean) and predicts the others. `p` must be an H800 profile (the table's
// GPU). UserError when no row has that EP size, or when a fitted row's published figure is above
// what the links alone carry (no pace can reach it).
DeepEpFit fit_deepep(const hw::GpuProfile& p, int ep_fitted = 16,
                     std::span<const DeepEpInternodeRow> rows = deepep_internode_rows());

}  // namespace cs::calibrate
