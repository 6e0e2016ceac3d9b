// cs_placement_probe's device side: the constants of its kernels, the per-CTA record, the
// streaming (ld, bulk) and FMA kernels, and the cluster-placement kernel of the GPC map.
// Included by placement_probe.cu alone (one translation unit).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace cs::kernels::placement_probe {

constexpr int kThreads = 512;           // per CTA of the timed kernels
constexpr int kUnroll = 8;              // 128-bit loads in flight per thread (stream_ld)
constexpr int kChunk = 32 * 1024;       // bytes per bulk copy (stream_bulk)
constexpr int kStages = 6;              // shared-memory stages of stream_bulk
constexpr int kSmemBytes = 200 * 1024;  // dynamic shared memory per CTA: one CTA per SM
constexpr int kFmaChains = 8;
constexpr std::size_t kBlock = 64 * 1024;  // host checksum granularity (bytes)
constexpr std::size_t kMiB = 1024 * 1024;
constexpr int kMaxSm = 1024;

struct CtaRec {
  unsigned smid;
  unsigned done;
  unsigned long long t0, t1;  // %globaltimer (ns) at start and end
  unsigned long long c0, c1;  // clock64 at start and end
  unsigned long long sum;     // the CTA's checksum (loads) or unused
};

__host__ __device__ __forceinline__ unsigned word_hash(unsigned long long i) {
  unsigned x = static_cast<unsigned>(i) ^ static_cast<unsigned>(i >> 32) * 0x27d4eb2du;
  x *= 0x9e3779b1u;
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  return x;
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// The CTA's rank: its block index, or (rank_of_sm given) the rank its SM was given, -1 = idle.
__device__ __forceinline__ int cta_rank(const int* rank_of_sm) {
  return rank_of_sm == nullptr ? static_cast<int>(blockIdx.x) : rank_of_sm[sm_id()];
}

__device__ __forceinline__ unsigned long long block_sum(unsigned long long v) {
  __shared__ unsigned long long red[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  unsigned long long s = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) s += red[w];
  return s;
}

__device__ __forceinline__ void rec_start(CtaRec& r) {
  r.smid = sm_id();
  r.t0 = global_ns();
  r.c0 = clock64();
}
__device__ __forceinline__ void rec_end(CtaRec* out, CtaRec& r, unsigned long long sum) {
  r.c1 = clock64();
  r.t1 = global_ns();
  r.sum = sum;
  r.done = 1;
  *out = r;
}

__global__ void fill_kernel(unsigned* buf, std::size_t words) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    buf[i] = word_hash(i);
}

// Each CTA sums its slice (slice_vec 16-byte vectors, a multiple of kThreads*kUnroll) `passes` times.
__global__ void __launch_bounds__(kThreads, 1)
    stream_ld(const uint4* __restrict__ buf, std::size_t slice_vec, int passes, const int* rank_of_sm,
              CtaRec* recs) {
  extern __shared__ unsigned char smem_unused[];
  const int rank = cta_rank(rank_of_sm);
  if (rank < 0) return;
  CtaRec r{};
  if (threadIdx.x == 0) rec_start(r);
  const uint4* base = buf + static_cast<std::size_t>(rank) * slice_vec;
  unsigned long long s = 0;
  for (int p = 0; p < passes; ++p) {
    for (std::size_t i = threadIdx.x; i < slice_vec; i += kThreads * kUnroll) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(base + i + u * kThreads);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        s += static_cast<unsigned long long>(v[u].x) + v[u].y + v[u].z + static_cast<unsigned long long>(v[u].w);
    }
  }
  s = block_sum(s);
  if (threadIdx.x == 0) {
    smem_unused[0] = 0;  // the allocation is what matters
    rec_end(recs + rank, r, s);
  }
}

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ bool mbar_try_wait(unsigned bar, unsigned parity) {
  unsigned ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
__device__ __forceinline__ void bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// Each CTA copies its slice (slice_bytes, a multiple of kChunk) `passes` times into kStages
// shared-memory stages with cp.async.bulk, thread 0 issuing, all threads summing each stage.
__global__ void __launch_bounds__(kThreads, 1)
    stream_bulk(const unsigned char* __restrict__ buf, std::size_t slice_bytes, int passes, const int* rank_of_sm,
                CtaRec* recs) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int rank = cta_rank(rank_of_sm);
  if (rank < 0) return;
  CtaRec r{};
  if (threadIdx.x == 0) rec_start(r);
  unsigned long long* bars = reinterpret_cast<unsigned long long*>(smem);
  unsigned char* stages = smem + 128;
  const unsigned char* base = buf + static_cast<std::size_t>(rank) * slice_bytes;
  const std::size_t per_pass = slice_bytes / kChunk;
  const std::size_t total = per_pass * static_cast<std::size_t>(passes);
  auto issue = [&](std::size_t c) {
    const int st = static_cast<int>(c % kStages);
    bulk_load(smem_u32(stages + static_cast<std::size_t>(st) * kChunk), base + (c % per_pass) * kChunk, kChunk,
              smem_u32(&bars[st]));
  };
  if (threadIdx.x == 0) {
    for (int st = 0; st < kStages; ++st)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&bars[st])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (std::size_t c = 0; c < total && c < static_cast<std::size_t>(kStages); ++c) issue(c);
  unsigned long long s = 0;
  for (std::size_t c = 0; c < total; ++c) {
    const int st = static_cast<int>(c % kStages);
    const unsigned parity = static_cast<unsigned>((c / kStages) & 1);
    const unsigned bar = smem_u32(&bars[st]);
    while (!mbar_try_wait(bar, parity)) {
    }
    const uint4* v = reinterpret_cast<const uint4*>(stages + static_cast<std::size_t>(st) * kChunk);
#pragma unroll
    for (int u = 0; u < kChunk / 16 / kThreads; ++u) {
      const uint4 x = v[threadIdx.x + u * kThreads];
      s += static_cast<unsigned long long>(x.x) + x.y + x.z + static_cast<unsigned long long>(x.w);
    }
    __syncthreads();  // every thread has read stage st
    if (threadIdx.x == 0 && c + kStages < total) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      issue(c + kStages);
    }
  }
  s = block_sum(s);
  if (threadIdx.x == 0) rec_end(recs + rank, r, s);
}

// Registers only: kFmaChains independent fmaf chains of `iters` steps per thread.
__global__ void __launch_bounds__(kThreads, 1)
    fma_kernel(float a, float b, int iters, const int* rank_of_sm, float* out, CtaRec* recs) {
  extern __shared__ unsigned char smem_unused[];
  const int rank = cta_rank(rank_of_sm);
  if (rank < 0) return;
  CtaRec r{};
  if (threadIdx.x == 0) rec_start(r);
  const int gid = rank * kThreads + static_cast<int>(threadIdx.x);
  float x[kFmaChains];
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) x[j] = static_cast<float>(gid * kFmaChains + j) * 1e-6f;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < kFmaChains; ++j) x[j] = fmaf(x[j], a, b);
  }
  float acc = 0.f;
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) acc += x[j];
  out[gid] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    smem_unused[0] = 0;
    rec_end(recs + rank, r, 0);
  }
}

inline float host_fma_thread(int gid, float a, float b, int iters) {
  float x[kFmaChains];
  for (int j = 0; j < kFmaChains; ++j) x[j] = static_cast<float>(gid * kFmaChains + j) * 1e-6f;
  for (int it = 0; it < iters; ++it)
    for (int j = 0; j < kFmaChains; ++j) x[j] = std::fmaf(x[j], a, b);
  float acc = 0.f;
  for (int j = 0; j < kFmaChains; ++j) acc += x[j];
  return acc;
}

// Cluster placement (GPC map) and partition SM sets: CTAs spin a time that varies per cluster.
struct MapRec {
  unsigned smid, cluster_id, rank, done;
};
__global__ void map_kernel(MapRec* recs, unsigned long long spin_ns) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x != 0) return;
  unsigned cid, rk;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rk));
  smem[0] = 0;
  const unsigned long long spin = spin_ns * (1 + (word_hash(cid) & 3));
  const unsigned long long t0 = global_ns();
  while (global_ns() - t0 < spin) {
  }
  recs[blockIdx.x] = MapRec{sm_id(), cid, rk, 1u};
}


}  // namespace cs::kernels::placement_probe
