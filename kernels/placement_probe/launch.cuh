// The probe's launches (placement_probe.cu): one case's timed runs of a fixed-grid kernel on a
// partition, each run's sums and records checked, and the thread-block cluster runs that map SMs
// to GPCs. Included by placement_probe.cu alone.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/cluster_launch.h"
#include "fp8_gemm/sm_partition.h"
#include "placement_probe/device.cuh"
#include "placement_probe/options.h"
#include "placement_probe/placement.h"

namespace cs::kernels::placement_probe {

namespace fg = cs::kernels::fp8_gemm;

struct Case {
  int sweep = 0;
  std::string where;  // "green", "whole", "smset"
  std::string smset;  // smset name
  int k = 0;          // SMs of the partition
  int grid = 0;       // working CTAs
  int cluster = 1;
  std::string kernel;  // ld, bulk, fma
  std::string data;    // l2, hbm, hbm_cold; "" for fma
  std::string error;
  double bytes = 0;  // read per run
  double flops = 0;
  Stats time_us;
  Stats cta_span_us;     // per CTA t1 - t0 (all CTAs, all runs)
  Stats kernel_span_us;  // per run max t1 - min t0
  Stats start_skew_us;   // per run max t0 - min t0
  Stats clock_mhz;       // per CTA (c1 - c0) / (t1 - t0)
  int distinct_placements = 0;
  Placement placement;               // of the run with the median time
  std::vector<double> gbps_per_gpc;  // bytes of that run's CTAs in each group / median time
  std::vector<double> cta_us_by_sm;  // that run's CTA spans (t1 - t0), in the order of placement.sms
};

struct Ctx {
  fg::SmPartitions* parts = nullptr;
  const Options* opt = nullptr;
  const GpcMap* map = nullptr;
  unsigned char* d_buf = nullptr;
  unsigned char* d_flush = nullptr;
  CtaRec* d_recs = nullptr;
  std::size_t recs_cap = 0;
  float* d_fma = nullptr;
  int* d_rank = nullptr;
  const std::vector<unsigned long long>* block_sums = nullptr;  // per kBlock of the buffer
};

void set_attributes() {
  CS_CUDA_CHECK(cudaFuncSetAttribute(stream_ld, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  CS_CUDA_CHECK(cudaFuncSetAttribute(stream_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  CS_CUDA_CHECK(cudaFuncSetAttribute(fma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  CS_CUDA_CHECK(cudaFuncSetAttribute(map_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
}

cudaLaunchConfig_t launch_config(int ctas, int cluster, cudaStream_t stream, cudaLaunchAttribute* attr) {
  return cluster_launch_config(ctas, cluster, kThreads, kSmemBytes, stream, attr);
}

// Runs one case on partition p (its context current). `rank_of_sm` (host, kMaxSm entries) chooses
// the SMs that work when launching `launch_ctas` > grid CTAs; empty: every CTA works. Returns false
// when a result disagreed (the reason on stderr).
bool run_case(Ctx& c, fg::Partition& p, const std::vector<int>& rank_of_sm, int launch_ctas, Case& cs) {
  const Options& opt = *c.opt;
  const int total_runs = opt.warmup + opt.runs;
  if (static_cast<std::size_t>(total_runs) * static_cast<std::size_t>(cs.grid) > c.recs_cap)
    throw std::runtime_error("record buffer too small");
  const int* d_rank = nullptr;
  if (!rank_of_sm.empty()) {
    CS_CUDA_CHECK(cudaMemcpyAsync(c.d_rank, rank_of_sm.data(), sizeof(int) * kMaxSm, cudaMemcpyHostToDevice, p.stream));
    d_rank = c.d_rank;
  }
  CS_CUDA_CHECK(cudaMemsetAsync(c.d_recs, 0, sizeof(CtaRec) * total_runs * cs.grid, p.stream));

  const DataSet* ds = nullptr;
  for (const auto& d : data_sets())
    if (d.name == cs.data) ds = &d;
  std::size_t slice = 0;
  if (ds != nullptr) {
    slice = ds->bytes / static_cast<std::size_t>(cs.grid);
    const std::size_t unit = cs.kernel == "ld" ? kThreads * kUnroll * 16 : kChunk;
    if (ds->bytes % static_cast<std::size_t>(cs.grid) != 0 || slice % unit != 0 || slice % kBlock != 0) {
      cs.error = "the data set does not split into slices of whole 64 KiB blocks for this grid";
      return true;
    }
    cs.bytes = static_cast<double>(ds->bytes) * ds->passes;
  } else {
    cs.flops = 2.0 * kFmaChains * opt.fma_iters * kThreads * static_cast<double>(cs.grid);
  }
  const float fa = 0.9990234375f, fb = 0.0009765625f;

  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = launch_config(launch_ctas, cs.cluster, p.stream, attr);
  for (int run = 0; run < total_runs; ++run) {
    CtaRec* recs = c.d_recs + static_cast<std::size_t>(run) * cs.grid;
    if (ds != nullptr && ds->flush) CS_CUDA_CHECK(cudaMemsetAsync(c.d_flush, run & 0xff, kFlushBytes, p.stream));
    const int timed = run - opt.warmup;
    if (timed >= 0) CS_CUDA_CHECK(cudaEventRecord(p.start_events[static_cast<std::size_t>(timed)], p.stream));
    cudaError_t e = cudaSuccess;
    if (cs.kernel == "ld") {
      e = cudaLaunchKernelEx(&cfg, stream_ld, reinterpret_cast<const uint4*>(c.d_buf + ds->offset), slice / 16,
                             ds->passes, d_rank, recs);
    } else if (cs.kernel == "bulk") {
      e = cudaLaunchKernelEx(&cfg, stream_bulk, static_cast<const unsigned char*>(c.d_buf + ds->offset), slice,
                             ds->passes, d_rank, recs);
    } else {
      e = cudaLaunchKernelEx(&cfg, fma_kernel, fa, fb, opt.fma_iters, d_rank, c.d_fma, recs);
    }
    if (e != cudaSuccess) {
      cs.error = "cudaLaunchKernelEx: " + cs::kernels::describe(e);
      cudaGetLastError();
      CS_CUDA_CHECK(cudaStreamSynchronize(p.stream));
      return true;
    }
    if (timed >= 0) CS_CUDA_CHECK(cudaEventRecord(p.stop_events[static_cast<std::size_t>(timed)], p.stream));
  }
  CS_CUDA_CHECK(cudaStreamSynchronize(p.stream));

  std::vector<double> times;
  for (int i = 0; i < opt.runs; ++i) {
    float ms = 0;
    CS_CUDA_CHECK(cudaEventElapsedTime(&ms, p.start_events[static_cast<std::size_t>(i)],
                                       p.stop_events[static_cast<std::size_t>(i)]));
    times.push_back(ms * 1000.0);
  }
  std::vector<CtaRec> h(static_cast<std::size_t>(total_runs) * cs.grid);
  CS_CUDA_CHECK(cudaMemcpy(h.data(), c.d_recs, sizeof(CtaRec) * h.size(), cudaMemcpyDeviceToHost));

  // Checks: every CTA of every run wrote its record; its sum is the host's; FMA samples match.
  for (int run = 0; run < total_runs; ++run) {
    for (int rk = 0; rk < cs.grid; ++rk) {
      const CtaRec& r = h[static_cast<std::size_t>(run) * cs.grid + rk];
      if (r.done != 1) {
        std::fprintf(stderr, "%s: %s k=%d grid=%d %s/%s run %d: CTA rank %d wrote no record\n", kProgram,
                     cs.where.c_str(), cs.k, cs.grid, cs.kernel.c_str(), cs.data.c_str(), run, rk);
        return false;
      }
      if (!rank_of_sm.empty() && rank_of_sm[r.smid] != rk) {
        std::fprintf(stderr, "%s: smset %s: rank %d ran on SM %u\n", kProgram, cs.smset.c_str(), rk, r.smid);
        return false;
      }
      if (ds != nullptr) {
        unsigned long long want = 0;
        const std::size_t b0 = (ds->offset + static_cast<std::size_t>(rk) * slice) / kBlock;
        for (std::size_t b = b0; b < b0 + slice / kBlock; ++b) want += (*c.block_sums)[b];
        want *= static_cast<unsigned long long>(ds->passes);
        if (r.sum != want) {
          std::fprintf(stderr, "%s: %s k=%d grid=%d %s/%s run %d CTA %d: sum %llu, host %llu\n", kProgram,
                       cs.where.c_str(), cs.k, cs.grid, cs.kernel.c_str(), cs.data.c_str(), run, rk, r.sum, want);
          return false;
        }
      }
    }
  }
  if (ds == nullptr) {
    std::vector<float> got(static_cast<std::size_t>(cs.grid) * kThreads);
    CS_CUDA_CHECK(cudaMemcpy(got.data(), c.d_fma, sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
    for (std::size_t g = 0; g < got.size(); g += (g + 97 < got.size() ? 97 : 1)) {
      const float want = host_fma_thread(static_cast<int>(g), fa, fb, opt.fma_iters);
      if (std::memcmp(&want, &got[g], sizeof(float)) != 0) {
        std::fprintf(stderr, "%s: fma thread %zu: %.9g, host %.9g\n", kProgram, g, got[g], want);
        return false;
      }
      if (g + 1 == got.size()) break;
    }
  }

  cs.time_us = stats(times);
  std::vector<double> span, kspan, skew, clk;
  std::set<std::vector<int>> placements;
  int median_run = 0;
  {
    std::vector<int> idx(times.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](int x, int y) { return times[x] < times[y]; });
    median_run = opt.warmup + idx[idx.size() / 2];
  }
  for (int run = opt.warmup; run < total_runs; ++run) {
    unsigned long long t0min = ~0ull, t0max = 0, t1max = 0;
    std::vector<int> sms;
    for (int rk = 0; rk < cs.grid; ++rk) {
      const CtaRec& r = h[static_cast<std::size_t>(run) * cs.grid + rk];
      t0min = std::min(t0min, r.t0);
      t0max = std::max(t0max, r.t0);
      t1max = std::max(t1max, r.t1);
      span.push_back(static_cast<double>(r.t1 - r.t0) / 1000.0);
      if (r.t1 > r.t0) clk.push_back(static_cast<double>(r.c1 - r.c0) / static_cast<double>(r.t1 - r.t0) * 1000.0);
      sms.push_back(static_cast<int>(r.smid));
    }
    kspan.push_back(static_cast<double>(t1max - t0min) / 1000.0);
    skew.push_back(static_cast<double>(t0max - t0min) / 1000.0);
    std::sort(sms.begin(), sms.end());
    placements.insert(sms);
    if (run == median_run) {
      std::vector<std::pair<int, double>> by_sm;
      for (int rk = 0; rk < cs.grid; ++rk) {
        const CtaRec& r = h[static_cast<std::size_t>(run) * cs.grid + rk];
        by_sm.push_back({static_cast<int>(r.smid), r3(static_cast<double>(r.t1 - r.t0) / 1000.0)});
      }
      std::sort(by_sm.begin(), by_sm.end());
      for (const auto& x : by_sm) cs.cta_us_by_sm.push_back(x.second);
      cs.placement = placement_of(sms, *c.map);
      const double per_cta = cs.bytes / cs.grid;
      for (int n : cs.placement.per_gpc) cs.gbps_per_gpc.push_back(r3(n * per_cta / (cs.time_us.median * 1e3)));
    }
  }
  cs.cta_span_us = stats(span);
  cs.kernel_span_us = stats(kspan);
  cs.start_skew_us = stats(skew);
  cs.clock_mhz = stats(clk);
  cs.distinct_placements = static_cast<int>(placements.size());
  return true;
}

// Runs `clusters` clusters of `cluster` CTAs (map_kernel) on p; appends each cluster's SMs. False
// when a record is missing or wrong. A refused launch leaves `error` set.
bool run_map(fg::Partition& p, int cluster, int clusters, int reps, unsigned long long spin_ns, MapRec* d_recs,
             std::vector<std::vector<int>>& cluster_sms, std::set<int>& sms_seen, std::string& error) {
  const int ctas = cluster * clusters;
  cudaLaunchAttribute attr[1];
  cudaLaunchConfig_t cfg = launch_config(ctas, cluster, p.stream, attr);
  cfg.blockDim = dim3(32);
  std::vector<MapRec> h(static_cast<std::size_t>(ctas));
  for (int rep = 0; rep < reps; ++rep) {
    CS_CUDA_CHECK(cudaMemsetAsync(d_recs, 0, sizeof(MapRec) * ctas, p.stream));
    const cudaError_t e = cudaLaunchKernelEx(&cfg, map_kernel, d_recs, spin_ns);
    if (e != cudaSuccess) {
      error = "cluster " + std::to_string(cluster) + ": " + cs::kernels::describe(e);
      cudaGetLastError();
      return true;
    }
    CS_CUDA_CHECK(cudaStreamSynchronize(p.stream));
    CS_CUDA_CHECK(cudaMemcpy(h.data(), d_recs, sizeof(MapRec) * h.size(), cudaMemcpyDeviceToHost));
    for (int cl = 0; cl < clusters; ++cl) {
      std::vector<int> v;
      for (int i = 0; i < cluster; ++i) {
        const MapRec& r = h[static_cast<std::size_t>(cl * cluster + i)];
        if (r.done != 1 || r.cluster_id != static_cast<unsigned>(cl) || r.rank != static_cast<unsigned>(i) ||
            r.smid >= kMaxSm) {
          std::fprintf(stderr, "%s: map cluster %d: CTA %d record wrong\n", kProgram, cluster, cl * cluster + i);
          return false;
        }
        v.push_back(static_cast<int>(r.smid));
        sms_seen.insert(static_cast<int>(r.smid));
      }
      cluster_sms.push_back(v);
    }
  }
  return true;
}

}  // namespace cs::kernels::placement_probe
