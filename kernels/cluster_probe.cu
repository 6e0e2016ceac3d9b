// cs_cluster_probe: how many thread-block clusters of 1, 2, 4, 8 (and, where the GPU allows it, 16)
// CTAs run at once on a green context of k SMs, when every CTA takes ~200 KB of shared memory so
// that one CTA fills an SM (as cuBLASLt's FP8 GEMM kernels do). A cluster must fit inside one GPC,
// so a partition whose SMs are spread over GPCs in counts that cluster sizes do not divide holds
// fewer clusters than k / cluster_size. For each partition and cluster size it reports:
//   - cudaOccupancyMaxActiveClusters, asked inside the green context;
//   - the clusters actually co-resident: a kernel of several waves of clusters, each CTA spinning a
//     fixed time on %globaltimer and recording %smid, %clusterid, %cluster_ctarank, start and end;
//     the largest number of clusters alive at one instant (sweep over their [first start, last end]).
// From the whole device's runs it groups SMs that ever shared a cluster (union-find): these groups
// are GPCs (or parts of them), and each partition's SMs per group predict the co-resident clusters.
//
// Exit codes: 0 done; 1 error; 2 no usable GPU or driver; 3 a record was missing or inconsistent
// (a CTA not run, ranks of a cluster not 0..n-1, two CTAs of one cluster on one SM).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "common/args.h"
#include "common/check.h"
#include "common/cluster_launch.h"
#include "common/json_writer.h"
#include "common/provenance.h"
#include "fp8_gemm/sm_partition.h"

namespace {

namespace fg = cs::kernels::fp8_gemm;
using cs::kernels::JsonWriter;

constexpr int kSchemaVersion = 1;
constexpr const char* kProgram = "cs_cluster_probe";
constexpr int kThreads = 128;

struct Record {
  unsigned smid;
  unsigned cluster_id;    // %clusterid.x
  unsigned cluster_rank;  // %cluster_ctarank
  unsigned done;          // 1 once written
  unsigned long long start_ns;
  unsigned long long end_ns;
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(Record* recs, unsigned long long spin_ns) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x == 0) {
    unsigned smid, cid, rank;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    const unsigned long long t0 = global_ns();
    smem[0] = static_cast<unsigned char>(smid);  // the allocation is what matters; touch it
    unsigned long long t1 = t0;
    while (t1 - t0 < spin_ns) t1 = global_ns();
    Record r{smid, cid, rank, 1u + smem[0] * 0u, t0, t1};
    recs[blockIdx.x] = r;
  }
}

struct Options {
  std::vector<int> sms = {8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 132};
  std::vector<int> cluster_sizes = {1, 2, 4, 8, 16};
  int smem_bytes = 200 * 1024;
  int spin_us = 100;
  int reps = 3;
  std::string json_path;
};

struct Measure {
  int cluster_size = 0;
  std::string error;              // launch or occupancy query refused
  int occupancy_max_clusters = -1;
  int clusters_launched = 0;
  std::vector<int> max_concurrent;  // per repetition
  std::vector<int> first_wave;      // clusters started before the first cluster ended
  std::set<int> sms_used;
  std::vector<std::vector<int>> cluster_sms;  // SMs of each cluster (last repetition)
};

struct PartitionResult {
  int sm_limit = 0;
  int sm_obtained = 0;
  std::string error;
  std::vector<Measure> measures;
};

// The largest number of clusters whose [start, end] intervals overlap at one instant (an end at
// the same tick as a start counts first: the next cluster starts only after one has left).
int max_alive(const std::vector<std::pair<unsigned long long, unsigned long long>>& iv) {
  std::vector<std::pair<unsigned long long, int>> ev;
  for (const auto& [s, e] : iv) {
    ev.push_back({s, +1});
    ev.push_back({e, -1});
  }
  std::sort(ev.begin(), ev.end());  // -1 sorts before +1 at equal times
  int alive = 0, best = 0;
  for (const auto& x : ev) best = std::max(best, alive += x.second);
  return best;
}

// Runs one cluster size on partition p; false when a record fails the checks (the reason on stderr).
bool measure(fg::SmPartitions& parts, fg::Partition& p, const Options& opt, int cs, Record* d_recs,
             std::size_t max_ctas, Measure& m) {
  m.cluster_size = cs;
  parts.make_current(p);
  CS_CUDA_CHECK(cudaFuncSetAttribute(spin_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, opt.smem_bytes));
  if (cs > 8) {
    const cudaError_t e = cudaFuncSetAttribute(spin_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e != cudaSuccess) {
      m.error = "non-portable cluster size refused: " + cs::kernels::describe(e);
      cudaGetLastError();
      return true;
    }
  }
  const int clusters = 3 * ((p.sm_obtained + cs - 1) / cs) + 1;
  const int ctas = clusters * cs;
  if (static_cast<std::size_t>(ctas) > max_ctas) throw std::runtime_error("record buffer too small");
  m.clusters_launched = clusters;

  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg =
      cs::kernels::cluster_launch_config(ctas, cs, kThreads, static_cast<std::size_t>(opt.smem_bytes), p.stream, attr);

  int occ = 0;
  const cudaError_t qe = cudaOccupancyMaxActiveClusters(&occ, spin_kernel, &cfg);
  if (qe != cudaSuccess) {
    m.error = "cudaOccupancyMaxActiveClusters: " + cs::kernels::describe(qe);
    cudaGetLastError();
    return true;
  }
  m.occupancy_max_clusters = occ;
  if (occ == 0) {
    m.error = "no cluster of this size fits";
    return true;
  }

  std::vector<Record> h(static_cast<std::size_t>(ctas));
  for (int rep = 0; rep < opt.reps; ++rep) {
    CS_CUDA_CHECK(cudaMemsetAsync(d_recs, 0xff, sizeof(Record) * static_cast<std::size_t>(ctas), p.stream));
    const cudaError_t le = cudaLaunchKernelEx(&cfg, spin_kernel, d_recs,
                                              static_cast<unsigned long long>(opt.spin_us) * 1000ull);
    if (le != cudaSuccess) {
      m.error = "cudaLaunchKernelEx: " + cs::kernels::describe(le);
      cudaGetLastError();
      return true;
    }
    CS_CUDA_CHECK(cudaStreamSynchronize(p.stream));
    CS_CUDA_CHECK(cudaMemcpy(h.data(), d_recs, sizeof(Record) * h.size(), cudaMemcpyDeviceToHost));

    std::vector<std::pair<unsigned long long, unsigned long long>> iv(static_cast<std::size_t>(clusters),
                                                                      {~0ull, 0ull});
    m.cluster_sms.assign(static_cast<std::size_t>(clusters), {});
    for (int b = 0; b < ctas; ++b) {
      const Record& r = h[static_cast<std::size_t>(b)];
      const int c = b / cs;
      if (r.done != 1u || r.cluster_id != static_cast<unsigned>(c) || r.cluster_rank != static_cast<unsigned>(b % cs)) {
        std::fprintf(stderr, "%s: sms=%d cluster=%d: CTA %d record wrong (done %u, clusterid %u, rank %u)\n",
                     kProgram, p.sm_obtained, cs, b, r.done, r.cluster_id, r.cluster_rank);
        return false;
      }
      auto& [s, e] = iv[static_cast<std::size_t>(c)];
      s = std::min(s, r.start_ns);
      e = std::max(e, r.end_ns);
      m.sms_used.insert(static_cast<int>(r.smid));
      m.cluster_sms[static_cast<std::size_t>(c)].push_back(static_cast<int>(r.smid));
    }
    for (auto& v : m.cluster_sms) {
      std::sort(v.begin(), v.end());
      if (std::adjacent_find(v.begin(), v.end()) != v.end()) {
        std::fprintf(stderr, "%s: sms=%d cluster=%d: two CTAs of one cluster on one SM\n", kProgram,
                     p.sm_obtained, cs);
        return false;
      }
    }
    m.max_concurrent.push_back(max_alive(iv));
    unsigned long long first_end = ~0ull;
    for (const auto& x : iv) first_end = std::min(first_end, x.second);
    m.first_wave.push_back(static_cast<int>(
        std::count_if(iv.begin(), iv.end(), [&](const auto& x) { return x.first < first_end; })));
  }
  return true;
}

// SMs that shared a cluster belong to one GPC: union-find over every cluster of the given runs.
std::vector<std::vector<int>> sm_groups(const std::vector<const Measure*>& runs, int max_sm) {
  std::vector<int> parent(static_cast<std::size_t>(max_sm) + 1);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[static_cast<std::size_t>(x)] != x) x = parent[static_cast<std::size_t>(x)] =
        parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    return x;
  };
  std::set<int> seen;
  for (const Measure* m : runs) {
    for (const auto& c : m->cluster_sms) {
      for (int s : c) {
        seen.insert(s);
        parent[static_cast<std::size_t>(find(s))] = find(c.front());
      }
    }
  }
  std::map<int, std::vector<int>> by_root;
  for (int s : seen) by_root[find(s)].push_back(s);
  std::vector<std::vector<int>> out;
  for (auto& [root, v] : by_root) out.push_back(v);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

int parse_args(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--json") {
      opt.json_path = next();
    } else if (a == "--sms") {
      opt.sms.clear();
      for (const auto& s : cs::kernels::split_commas(next())) {
        int v = 0;
        if (!cs::kernels::parse_int(s, 1, 1024, v)) throw std::runtime_error("bad --sms value '" + s + "'");
        opt.sms.push_back(v);
      }
    } else if (a == "--spin-us") {
      if (!cs::kernels::parse_int(next(), 10, 100000, opt.spin_us)) throw std::runtime_error("bad --spin-us");
    } else if (a == "--reps") {
      if (!cs::kernels::parse_int(next(), 1, 100, opt.reps)) throw std::runtime_error("bad --reps");
    } else if (a == "--smem-kib") {
      int k = 0;
      if (!cs::kernels::parse_int(next(), 0, 227, k)) throw std::runtime_error("bad --smem-kib");
      opt.smem_bytes = k * 1024;
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: %s [--json PATH] [--sms 8,16,...,132] [--spin-us 100] [--reps 3] [--smem-kib 200]\n"
          "Co-resident thread-block clusters (1, 2, 4, 8, 16 CTAs) on green contexts of k SMs.\n",
          kProgram);
      return 0;
    } else {
      throw std::runtime_error("unknown argument '" + a + "' (try --help)");
    }
  }
  return -1;
}

int run(int argc, char** argv) {
  Options opt;
  if (const int rc = parse_args(argc, argv, opt); rc >= 0) return rc;
  const cs::kernels::GpuAvailability availability = cs::kernels::probe_gpus();
  if (availability.count == 0) return cs::kernels::report_no_gpu(kProgram, availability);
  const cs::kernels::Provenance prov = cs::kernels::collect_provenance(argc, argv);
  CS_CUDA_CHECK(cudaSetDevice(0));
  CS_CUDA_CHECK(cudaFree(nullptr));

  std::vector<int> green;
  for (int s : opt.sms) green.push_back(s);
  fg::SmPartitions parts(0, green, 0);
  const int device_sms = parts.info().sm_count;

  parts.make_current(parts.primary());
  const std::size_t max_ctas = 4 * static_cast<std::size_t>(device_sms) + 64;
  Record* d_recs = nullptr;
  CS_CUDA_CHECK(cudaMalloc(&d_recs, sizeof(Record) * max_ctas));

  std::vector<PartitionResult> results;
  for (int s : opt.sms) {
    PartitionResult pr;
    pr.sm_limit = s;
    fg::Partition* p = parts.green(s);
    if (p == nullptr || !p->usable()) {
      pr.error = p ? p->error : "not made";
      results.push_back(pr);
      continue;
    }
    pr.sm_obtained = p->sm_obtained;
    for (int cs : opt.cluster_sizes) {
      Measure m;
      if (!measure(parts, *p, opt, cs, d_recs, max_ctas, m)) {
        parts.make_current(parts.primary());
        return cs::kernels::kExitCheckFailed;
      }
      std::fprintf(stderr, "sms=%3d cluster=%2d occupancy=%3d co-resident=%3d%s%s\n", pr.sm_obtained, cs,
                   m.occupancy_max_clusters, m.max_concurrent.empty() ? -1 : *std::max_element(
                       m.max_concurrent.begin(), m.max_concurrent.end()),
                   m.error.empty() ? "" : "  ", m.error.c_str());
      pr.measures.push_back(std::move(m));
    }
    results.push_back(std::move(pr));
  }
  parts.make_current(parts.primary());
  CS_CUDA_CHECK(cudaFree(d_recs));

  // GPC-like groups from the largest partition's cluster runs (every cluster lies in one GPC).
  const PartitionResult* whole = nullptr;
  for (const auto& r : results) {
    if (r.error.empty() && (whole == nullptr || r.sm_obtained > whole->sm_obtained)) whole = &r;
  }
  std::vector<std::vector<int>> groups;
  if (whole != nullptr) {
    std::vector<const Measure*> runs;
    for (const auto& m : whole->measures) {
      if (m.cluster_size > 1 && m.error.empty()) runs.push_back(&m);
    }
    groups = sm_groups(runs, 1024);
  }
  std::map<int, int> group_of;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (int s : groups[g]) group_of[s] = static_cast<int>(g);
  }

  std::string out;
  JsonWriter w(out, 2);
  w.begin_object();
  w.field("schema_version", kSchemaVersion);
  w.key("provenance");
  cs::kernels::write_provenance(w, prov);
  w.key("bench").begin_object();
  w.field("method",
          "green contexts of k SMs (cuDevSmResourceSplitByCount, as cs_fp8_gemm); a kernel of 3 waves of "
          "clusters (3*ceil(k/n)+1 clusters of n CTAs, cudaLaunchKernelEx with a cluster dimension), each CTA "
          "of 128 threads with dynamic shared memory of smem_bytes (one CTA per SM) spinning spin_us on "
          "%globaltimer; co-resident = the most clusters alive at one instant, a cluster alive from its first "
          "CTA's start to its last CTA's end");
  w.field("smem_bytes", opt.smem_bytes);
  w.field("spin_us", opt.spin_us);
  w.field("reps", opt.reps);
  w.field("threads_per_cta", kThreads);
  w.field("device_sms", device_sms);
  w.field("green_min_partition_sms", parts.info().min_partition_size);
  w.field("green_alignment_sms", parts.info().coscheduled_alignment);
  w.end_object();
  w.key("sm_groups").begin_object();
  w.field("how", "SMs that shared a cluster in the largest partition's runs (cluster sizes > 1), joined: "
                 "each group lies inside one GPC");
  w.key("sizes").begin_array(true);
  for (const auto& g : groups) w.value(static_cast<int>(g.size()));
  w.end_array();
  w.key("sms").begin_array();
  for (const auto& g : groups) w.value(g, true);
  w.end_array();
  w.end_object();
  w.key("partitions").begin_array();
  for (const auto& r : results) {
    w.begin_object();
    w.field("sm_limit", r.sm_limit);
    w.field("sm_obtained", r.sm_obtained);
    if (!r.error.empty()) w.field("error", r.error);
    // This partition's SMs (those its cluster-size-1 run used) per group.
    std::set<int> used;
    for (const auto& m : r.measures) used.insert(m.sms_used.begin(), m.sms_used.end());
    std::vector<int> per_group(groups.size(), 0);
    int ungrouped = 0;
    for (int s : used) {
      const auto it = group_of.find(s);
      if (it == group_of.end()) ++ungrouped; else ++per_group[static_cast<std::size_t>(it->second)];
    }
    w.field("sms_seen", static_cast<int>(used.size()));
    w.field("sms_seen_per_group", per_group);
    w.field("sms_seen_in_no_group", ungrouped);
    w.key("clusters").begin_array();
    for (const auto& m : r.measures) {
      w.begin_object(true);
      w.field("cluster_size", m.cluster_size);
      w.field("naive_max", r.sm_obtained / m.cluster_size);
      int predicted = ungrouped / m.cluster_size;
      for (int n : per_group) predicted += n / m.cluster_size;
      w.field("predicted_from_groups", predicted);
      if (m.occupancy_max_clusters >= 0) w.field("occupancy_max_active_clusters", m.occupancy_max_clusters);
      if (!m.max_concurrent.empty()) {
        w.field("co_resident_max", *std::max_element(m.max_concurrent.begin(), m.max_concurrent.end()));
        w.field("co_resident_per_rep", m.max_concurrent);
        w.field("first_wave_per_rep", m.first_wave);
        w.field("clusters_launched", m.clusters_launched);
        w.field("sms_used", static_cast<int>(m.sms_used.size()));
      }
      if (!m.error.empty()) w.field("error", m.error);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out.push_back('\n');
  return cs::kernels::write_report(kProgram, opt.json_path, out);
}

}  // namespace

int main(int argc, char** argv) { return cs::kernels::guarded_main(kProgram, [&] { return run(argc, argv); }); }
