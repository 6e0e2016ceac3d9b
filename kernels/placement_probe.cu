// cs_placement_probe: does a kernel with a fixed grid (fewer CTAs than SMs, one ~200 KB CTA per SM,
// as cuBLASLt's FP8 GEMMs launch on small problems) run faster on a larger green context, and does
// that follow how many GPCs and TPCs its CTAs land on? Three parts:
//   1. the GPC map: on the whole device, many thread-block clusters of 2, 4, 8 and 16 CTAs (16 where
//      the non-portable size is allowed), each CTA recording %smid; CTAs of one cluster share a GPC,
//      so SMs that ever shared a cluster are joined (union-find). TPCs are taken as SM pairs
//      (2i, 2i+1), checked against the groups and against where 2-CTA clusters land;
//   2. the SMs of every green context of k SMs (cuDevSmResourceSplitByCount, as cs_fp8_gemm makes
//      them): a kernel of 3k CTAs (one per SM at a time) recording %smid;
//   3. fixed-grid kernels of G CTAs (clusters of 4 and of 1), each CTA on its own SM (200 KB of
//      dynamic shared memory), in each partition of k >= G SMs and on the whole device:
//        - stream_ld: 128-bit ld.global.cg loads of the CTA's slice (512 threads, 8 loads in flight
//          each), summed;
//        - stream_bulk: cp.async.bulk (TMA's bulk copy engine) of 32 KB chunks into 6 shared-memory
//          stages, summed from shared memory;
//        - fma: a register-only FMA loop, the control that should not depend on k;
//      over three data sets: l2 (24 MiB read 16 times, L2-resident), hbm (1 GiB read once) and
//      hbm_cold (32 MiB read once after writing 256 MiB, like cs_fp8_gemm's flush), each timed by CUDA
//      events (median of --runs after --warmup); every CTA records %smid, %globaltimer and clock64 at
//      its start and end, so the GPCs and TPCs each run spanned and the SM clock are known;
//   and, on the whole device, the same kernels on chosen SM sets (132 CTAs, one per SM, the CTAs on
//      other SMs exit at once): packed into few GPCs, both SMs of TPCs spread over all GPCs, one SM
//      per TPC: placement without green contexts.
// Every load's sum is checked against the host's (the buffer holds a known hash of each word's
// index) and sampled FMA threads against host fmaf, for every run, before anything is reported.
//
// On the H200 (calibrate/data/h200/placement_probe.json) clusters join SMs into groups of 8, 16 x 5 and
// 18 x 2 plus four 2-SM groups (SMs 124-131) that no cluster ever joined to another; --smset runs show
// those 8 SMs share one GPC's L2 bandwidth with the 8-SM group (0,1,16,17,32,33,48,49): 8 GPCs of 16,
// 16 x 5 and 18 x 2. The JSON's groups are what clusters showed; that merge is not made here.
//
// Exit codes: 0 done; 1 error; 2 no usable GPU or driver; 3 a checksum or record disagreed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/args.h"
#include "common/check.h"
#include "common/json_writer.h"
#include "common/provenance.h"
#include "fp8_gemm/sm_partition.h"
#include "placement_probe/device.cuh"
#include "placement_probe/launch.cuh"
#include "placement_probe/options.h"
#include "placement_probe/placement.h"

namespace {

namespace fg = cs::kernels::fp8_gemm;
using cs::kernels::JsonWriter;

using namespace cs::kernels::placement_probe;

constexpr int kSchemaVersion = 1;

int run(int argc, char** argv) {
  Options opt;
  if (const int rc = parse_args(argc, argv, opt); rc >= 0) return rc;
  const cs::kernels::GpuAvailability availability = cs::kernels::probe_gpus();
  if (availability.count == 0) return cs::kernels::report_no_gpu(kProgram, availability);
  const cs::kernels::Provenance prov = cs::kernels::collect_provenance(argc, argv);
  CS_CUDA_CHECK(cudaSetDevice(0));
  CS_CUDA_CHECK(cudaFree(nullptr));

  fg::SmPartitions parts(0, opt.sms, opt.runs);
  const int device_sms = parts.info().sm_count;
  fg::Partition& whole = parts.primary();
  parts.make_current(whole);
  set_attributes();

  Ctx c;
  c.parts = &parts;
  c.opt = &opt;
  CS_CUDA_CHECK(cudaMalloc(&c.d_buf, kBufBytes));
  CS_CUDA_CHECK(cudaMalloc(&c.d_flush, kFlushBytes));
  c.recs_cap = static_cast<std::size_t>(opt.warmup + opt.runs) * kMaxSm;
  CS_CUDA_CHECK(cudaMalloc(&c.d_recs, sizeof(CtaRec) * c.recs_cap));
  CS_CUDA_CHECK(cudaMalloc(&c.d_fma, sizeof(float) * kThreads * kMaxSm));
  CS_CUDA_CHECK(cudaMalloc(&c.d_rank, sizeof(int) * kMaxSm));
  MapRec* d_map = nullptr;
  const std::size_t map_cap = 64 * 1024;
  CS_CUDA_CHECK(cudaMalloc(&d_map, sizeof(MapRec) * map_cap));
  fill_kernel<<<4 * device_sms, 512, 0, whole.stream>>>(reinterpret_cast<unsigned*>(c.d_buf), kBufBytes / 4);
  CS_CUDA_CHECK(cudaGetLastError());

  // Host checksums per 64 KiB block (threads over the blocks).
  std::vector<unsigned long long> block_sums(kBufBytes / kBlock);
  {
    const unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; ++t) {
      th.emplace_back([&, t] {
        for (std::size_t b = t; b < block_sums.size(); b += nt) {
          unsigned long long s = 0;
          const std::size_t w0 = b * kBlock / 4;
          for (std::size_t i = w0; i < w0 + kBlock / 4; ++i) s += word_hash(i);
          block_sums[b] = s;
        }
      });
    }
    for (auto& t : th) t.join();
  }
  c.block_sums = &block_sums;
  CS_CUDA_CHECK(cudaStreamSynchronize(whole.stream));

  // 1. GPC map on the whole device.
  CS_CUDA_CHECK(cudaFuncSetAttribute(map_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  std::vector<std::vector<int>> cluster_sms;
  std::set<int> sms_seen;
  std::vector<std::string> map_errors;
  std::map<int, std::pair<int, int>> pair_stats;  // cluster size 2: (on a 2i/2i+1 pair, total)
  for (int cl : {2, 4, 8, 16}) {
    std::string err;
    const std::size_t before = cluster_sms.size();
    const int clusters = std::min<int>(static_cast<int>(map_cap) / cl, 6 * ((device_sms + cl - 1) / cl) + 1);
    if (!run_map(whole, cl, clusters, 4, 20000, d_map, cluster_sms, sms_seen, err)) return cs::kernels::kExitCheckFailed;
    if (!err.empty()) map_errors.push_back(err);
    if (cl == 2) {
      for (std::size_t i = before; i < cluster_sms.size(); ++i) {
        const auto& v = cluster_sms[i];
        ++pair_stats[2].second;
        if (std::min(v[0], v[1]) % 2 == 0 && std::abs(v[0] - v[1]) == 1) ++pair_stats[2].first;
      }
    }
  }
  GpcMap map;
  {
    std::vector<int> parent(kMaxSm);
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](int x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (const auto& v : cluster_sms)
      for (int s : v) parent[find(s)] = find(v.front());
    std::map<int, std::vector<int>> by_root;
    for (int s : sms_seen) by_root[find(s)].push_back(s);
    for (auto& [root, v] : by_root) map.groups.push_back(v);
    std::sort(map.groups.begin(), map.groups.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
    map.group_of.assign(kMaxSm, -1);
    for (std::size_t g = 0; g < map.groups.size(); ++g)
      for (int s : map.groups[g]) map.group_of[s] = static_cast<int>(g);
  }
  c.map = &map;
  int pairs_split = 0;  // SM pairs 2i, 2i+1 in different groups
  for (int s : sms_seen)
    if (s % 2 == 0 && sms_seen.count(s + 1) && map.gpc(s) != map.gpc(s + 1)) ++pairs_split;
  std::fprintf(stderr, "GPC map: %zu groups of sizes", map.groups.size());
  for (const auto& g : map.groups) std::fprintf(stderr, " %zu", g.size());
  std::fprintf(stderr, "; %d SMs seen; 2-CTA clusters on an (2i,2i+1) pair: %d of %d; pairs split across groups: %d\n",
               static_cast<int>(sms_seen.size()), pair_stats[2].first, pair_stats[2].second, pairs_split);

  // 2. SMs of each green context.
  struct PartInfo {
    int sm_limit = 0, sm_obtained = 0;
    std::string error;
    Placement sms;
  };
  std::vector<PartInfo> part_infos;
  for (int k : opt.sms) {
    PartInfo pi;
    pi.sm_limit = k;
    fg::Partition* p = parts.green(k);
    if (p == nullptr || !p->usable()) {
      pi.error = p ? p->error : "not made";
      part_infos.push_back(pi);
      continue;
    }
    pi.sm_obtained = p->sm_obtained;
    parts.make_current(*p);
    set_attributes();
    std::vector<std::vector<int>> cl;
    std::set<int> seen;
    std::string err;
    if (!run_map(*p, 1, 3 * p->sm_obtained, 1, 20000, d_map, cl, seen, err)) return cs::kernels::kExitCheckFailed;
    pi.error = err;
    pi.sms = placement_of(std::vector<int>(seen.begin(), seen.end()), map);
    std::fprintf(stderr, "green %3d SMs: %d SMs seen, %d groups, %d TPCs (%d with both SMs)\n", pi.sm_obtained,
                 pi.sms.ctas, pi.sms.gpcs, pi.sms.tpcs, pi.sms.tpcs_both);
    part_infos.push_back(pi);
  }
  parts.make_current(whole);

  // 3. Fixed-grid kernels per partition.
  std::vector<Case> cases;
  auto kernel_data = [&]() {
    std::vector<std::pair<std::string, std::string>> v;
    for (const auto& k : opt.kernels) {
      if (k == "fma") {
        v.push_back({k, ""});
        continue;
      }
      if (k != "ld" && k != "bulk") throw std::runtime_error("unknown kernel '" + k + "'");
      for (const auto& d : opt.data) {
        bool known = false;
        for (const auto& ds : data_sets()) known = known || ds.name == d;
        if (!known) throw std::runtime_error("unknown data set '" + d + "'");
        v.push_back({k, d});
      }
    }
    return v;
  }();
  auto print_case = [&](const Case& cs) {
    if (!cs.error.empty()) {
      std::fprintf(stderr, "%-6s %-20s k=%3d G=%3d cl=%d %-4s %-8s  error: %s\n", cs.where.c_str(), cs.smset.c_str(),
                   cs.k, cs.grid, cs.cluster, cs.kernel.c_str(), cs.data.c_str(), cs.error.c_str());
      return;
    }
    const double t = cs.time_us.median;
    std::fprintf(stderr,
                 "%-6s %-20s k=%3d G=%3d cl=%d %-4s %-8s %9.2f us  %8.1f %s %6.1f GB/s/SM  gpcs=%d tpcs=%d both=%d "
                 "places=%d  clk=%4.0f MHz span=%.1f skew=%.2f us\n",
                 cs.where.c_str(), cs.smset.c_str(), cs.k, cs.grid, cs.cluster, cs.kernel.c_str(),
                 cs.data.empty() ? "-" : cs.data.c_str(), t, cs.bytes > 0 ? cs.bytes / (t * 1e3) : cs.flops / (t * 1e6),
                 cs.bytes > 0 ? "GB/s" : "TFLOP/s",
                 cs.bytes > 0 ? cs.bytes / (t * 1e3) / cs.grid : 0.0, cs.placement.gpcs, cs.placement.tpcs,
                 cs.placement.tpcs_both, cs.distinct_placements, cs.clock_mhz.median, cs.kernel_span_us.median,
                 cs.start_skew_us.median);
  };
  for (int sweep = 0; sweep < opt.sweeps; ++sweep) {
    std::vector<int> ks = opt.sms;
    ks.push_back(device_sms);
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());  // --sms may name the whole device too
    if (sweep % 2 == 1) std::reverse(ks.begin(), ks.end());
    for (int k : ks) {
      fg::Partition* p = k == device_sms ? &whole : parts.green(k);
      if (p == nullptr || !p->usable()) continue;
      parts.make_current(*p);
      for (int g : opt.grids) {
        if (g > p->sm_obtained) continue;
        for (int cl : opt.clusters) {
          for (const auto& [kern, data] : kernel_data) {
            Case cs;
            cs.sweep = sweep;
            cs.where = k == device_sms ? "whole" : "green";
            cs.k = p->sm_obtained;
            cs.grid = g;
            cs.cluster = cl;
            cs.kernel = kern;
            cs.data = data;
            if (!run_case(c, *p, {}, g, cs)) return cs::kernels::kExitCheckFailed;
            print_case(cs);
            cases.push_back(std::move(cs));
          }
        }
      }
    }
  }
  parts.make_current(whole);

  // 4. Chosen SM sets on the whole device (one CTA per SM, cluster 1).
  std::vector<SmSet> all_sets;
  {
    std::vector<SmSet> sets;
    if (opt.smsets)
      for (int g : opt.grids)
        for (const SmSet& set : make_smsets(map, g))
          if (static_cast<int>(set.sms.size()) == g) sets.push_back(set);
    for (const auto& [name, sms] : opt.custom_sets) {
      for (int s : sms)
        if (!sms_seen.count(s)) throw std::runtime_error("--smset " + name + ": SM " + std::to_string(s) + " not seen");
      sets.push_back({name, "given with --smset", sms});
    }
    for (const SmSet& set : sets) {
      all_sets.push_back(set);
      std::vector<int> rank(kMaxSm, -1);
      for (std::size_t i = 0; i < set.sms.size(); ++i) rank[set.sms[i]] = static_cast<int>(i);
      for (const auto& [kern, data] : kernel_data) {
        Case cs;
        cs.where = "smset";
        cs.smset = set.name;
        cs.k = device_sms;
        cs.grid = static_cast<int>(set.sms.size());
        cs.cluster = 1;
        cs.kernel = kern;
        cs.data = data;
        if (!run_case(c, whole, rank, device_sms, cs)) return cs::kernels::kExitCheckFailed;
        print_case(cs);
        cases.push_back(std::move(cs));
      }
    }
  }

  CS_CUDA_CHECK(cudaFree(d_map));
  CS_CUDA_CHECK(cudaFree(c.d_rank));
  CS_CUDA_CHECK(cudaFree(c.d_fma));
  CS_CUDA_CHECK(cudaFree(c.d_recs));
  CS_CUDA_CHECK(cudaFree(c.d_flush));
  CS_CUDA_CHECK(cudaFree(c.d_buf));

  // JSON.
  std::string out;
  JsonWriter w(out, opt.compact ? 0 : 2);
  cs::kernels::begin_bench_json(w, kSchemaVersion, prov);
  w.field("method",
          "fixed-grid kernels (grid G CTAs of 512 threads, 200 KB dynamic shared memory each so one CTA per SM, "
          "cluster dimension 4 or 1, cudaLaunchKernelEx) on green contexts of k SMs (cuDevSmResourceSplitByCount "
          "as cs_fp8_gemm) and on the whole device (primary context); CUDA events around each run, median of "
          "runs after warmup; per CTA %smid, %globaltimer and clock64 at start and end. smset cases: the whole "
          "device, one CTA per SM (cluster 1), only CTAs on the chosen SMs work");
  w.field("device_sms", device_sms);
  w.field("threads_per_cta", kThreads);
  w.field("smem_bytes", kSmemBytes);
  w.field("runs", opt.runs);
  w.field("warmup", opt.warmup);
  w.field("sweeps", opt.sweeps);
  w.key("kernels").begin_object();
  w.field("ld", "ld.global.cg of 16 B, 8 in flight per thread, summed (u64)");
  w.field("bulk", "cp.async.bulk global->shared, 32 KiB chunks, 6 stages, one issuing thread, all threads sum");
  w.field("fma", "8 independent fmaf chains per thread, fma_iters steps; flops = 2*8*fma_iters*512*G");
  w.field("fma_iters", opt.fma_iters);
  w.end_object();
  w.key("data_sets").begin_array();
  for (const auto& d : data_sets()) {
    w.begin_object(true);
    w.field("name", d.name);
    w.field("offset_bytes", static_cast<std::uint64_t>(d.offset));
    w.field("bytes_per_pass", static_cast<std::uint64_t>(d.bytes));
    w.field("passes", d.passes);
    w.field("flush_bytes_before_each_run", static_cast<std::uint64_t>(d.flush ? kFlushBytes : 0));
    w.end_object();
  }
  w.end_array();
  w.field("checks", "every CTA's sum of every run (warm-up included) equals the host's sum of its slice times the "
                    "passes; every 97th FMA thread equals host fmaf bit for bit");
  w.end_object();

  w.key("gpc_map").begin_object();
  w.field("how", "SMs that shared a thread-block cluster (2, 4, 8, 16 CTAs; 4 repetitions of 6 waves each on the "
                 "whole device) joined by union-find; each group lies inside one GPC (a GPC may show as several "
                 "groups if no cluster spanned them). TPC = SM pair (2i, 2i+1)");
  w.field("sms_seen", static_cast<int>(sms_seen.size()));
  w.key("sizes").begin_array(true);
  for (const auto& g : map.groups) w.value(static_cast<int>(g.size()));
  w.end_array();
  w.key("groups").begin_array();
  for (const auto& g : map.groups) w.value(g, true);
  w.end_array();
  w.field("two_cta_clusters_on_sm_pair", pair_stats[2].first);
  w.field("two_cta_clusters", pair_stats[2].second);
  w.field("sm_pairs_split_across_groups", pairs_split);
  w.field("errors", map_errors);
  w.end_object();

  w.key("partitions").begin_array();
  for (const auto& pi : part_infos) {
    w.begin_object();
    w.field("sm_limit", pi.sm_limit);
    w.field("sm_obtained", pi.sm_obtained);
    if (!pi.error.empty()) w.field("error", pi.error);
    w.field("sms_seen", pi.sms.ctas);
    w.field("groups_spanned", pi.sms.gpcs);
    w.field("sms_per_group", pi.sms.per_gpc);
    w.field("tpcs", pi.sms.tpcs);
    w.field("tpcs_with_both_sms", pi.sms.tpcs_both);
    w.field("sms", pi.sms.sms);
    w.end_object();
  }
  w.end_array();

  w.key("smsets").begin_array();
  for (const auto& s : all_sets) {
    const Placement pl = placement_of(s.sms, map);
    w.begin_object(true);
    w.field("name", s.name);
    w.field("n", static_cast<int>(s.sms.size()));
    w.field("how", s.how);
    w.field("groups_spanned", pl.gpcs);
    w.field("tpcs", pl.tpcs);
    w.field("tpcs_with_both_sms", pl.tpcs_both);
    w.field("sms", s.sms);
    w.end_object();
  }
  w.end_array();

  w.key("cases").begin_array();
  for (const auto& cs : cases) {
    w.begin_object();
    w.field("sweep", cs.sweep);
    w.field("where", cs.where);
    if (!cs.smset.empty()) w.field("smset", cs.smset);
    w.field("k", cs.k);
    w.field("grid", cs.grid);
    w.field("cluster", cs.cluster);
    w.field("kernel", cs.kernel);
    if (!cs.data.empty()) w.field("data", cs.data);
    if (!cs.error.empty()) {
      w.field("error", cs.error);
      w.end_object();
      continue;
    }
    write_stats(w, "time_us", cs.time_us);
    if (cs.bytes > 0) {
      w.field("bytes", cs.bytes);
      w.field("gbps", r3(cs.bytes / (cs.time_us.median * 1e3)));
      w.field("gbps_per_sm", r3(cs.bytes / (cs.time_us.median * 1e3) / cs.grid));
      w.field("gbps_per_group", cs.gbps_per_gpc);
    } else {
      w.field("flops", cs.flops);
      w.field("tflops", r3(cs.flops / (cs.time_us.median * 1e6)));
    }
    write_stats(w, "kernel_span_us", cs.kernel_span_us);
    write_stats(w, "cta_span_us", cs.cta_span_us);
    write_stats(w, "start_skew_us", cs.start_skew_us);
    write_stats(w, "sm_clock_mhz", cs.clock_mhz);
    w.key("placement").begin_object(true);
    w.field("groups_spanned", cs.placement.gpcs);
    w.field("tpcs", cs.placement.tpcs);
    w.field("tpcs_with_both_sms", cs.placement.tpcs_both);
    w.field("ctas_per_group", cs.placement.per_gpc);
    w.field("distinct_placements_over_runs", cs.distinct_placements);
    w.field("sms", cs.placement.sms);
    w.field("cta_us", cs.cta_us_by_sm);
    w.end_object();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out.push_back('\n');
  return cs::kernels::write_report(kProgram, opt.json_path, out);
}

}  // namespace

int main(int argc, char** argv) { return cs::kernels::guarded_main(kProgram, [&] { return run(argc, argv); }); }
