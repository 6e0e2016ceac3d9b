// A carried profile against published tables of the GPU it was carried to (../shared/REFERENCE.md):
// DeepGEMM's FP8 GEMM TFLOPS and DeepEP's intranode bandwidths on H800, each predicted through
// the engine with the profile, as `calibrate validate` predicts our own measurements.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "calibrate/fit_stats.h"
#include "hw/gpu_catalog.h"
#include "hw/gpu_profile.h"

namespace cs::calibrate {

struct PublishedCheck {
  std::string table;  // "DeepGEMM dense", "DeepGEMM grouped", "DeepEP intranode"
  std::string name;   // the row, e.g. "m 64 n 2112 k 7168"
  std::string unit;   // "TFLOPS" or "GB/s"
  double published = 0;
  double predicted = 0;
  double error() const { return (predicted - published) / published; }
};

// fit_stats over the rows' predicted and published figures.
FitStats published_stats(const std::vector<PublishedCheck>& rows);

// A row of DeepGEMM's table: `groups` GEMMs of m x n x k (grouped: the contiguous layout).
struct DeepGemmRow {
  int64_t groups, m, n, k;
  double tflops;  // published
};
std::span<const DeepGemmRow> deepgemm_dense_rows();
std::span<const DeepGemmRow> deepgemm_grouped_rows();
// One row predicted with the profile (kernel time: the launch left out, as below).
PublishedCheck deepgemm_check(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const DeepGemmRow& r);

// DeepGEMM's README (2025-02-25): FP8, 1x128 / 128x128 scaling, all 132 SMs of an H800. Its
// figures are kernel durations from the profiler, so the prediction leaves out the profile's
// launch time (which our event-timed measurements include).
std::vector<PublishedCheck> check_deepgemm(const hw::GpuProfile& p, const hw::GpuSpec& gpu);

// DeepEP's README (2025-02-24): EP8 in one node, 4096 tokens of hidden 7168 to 8 experts each,
// FP8 dispatch and BF16 combine on 20 SMs; the bandwidth counts the bytes that cross NVLink.
std::vector<PublishedCheck> check_deepep_intranode(const hw::GpuProfile& p, const hw::GpuSpec& gpu);

// DeepEP's README (2025-02-24): EP16, 32 and 64 over 2, 4 and 8 H800 nodes of DeepSeek's 8-plane
// fat-tree, each GPU with 4096 tokens of hidden 7168 routed as DeepEP's tests/test_internode.py
// routes them (256 experts; the groups are the nodes, top min(nodes, 4) of them; top-8 experts),
// FP8 dispatch and BF16 combine on 20 SMs. The "RDMA bandwidth" is the test's logical one: a
// token's bytes once per node it reaches, its own node included, over the kernel's time.
std::vector<PublishedCheck> check_deepep_internode(const hw::GpuProfile& p);

// A row of DeepEP's internode table: the EP size and one kernel's published logical bandwidth.
struct DeepEpInternodeRow {
  int ep;         // 16, 32 or 64: 2, 4 or 8 nodes
  bool dispatch;  // FP8 dispatch, else BF16 combine
  double GBps;    // published, before the April 2025 update (REFERENCE.md)
};
std::span<const DeepEpInternodeRow> deepep_internode_rows();
// One row predicted with the profile, as check_deepep_internode predicts it.
PublishedCheck deepep_internode_check(const hw::GpuProfile& p, const DeepEpInternodeRow& r);

}  // namespace cs::calibrate
