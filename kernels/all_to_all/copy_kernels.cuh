// cs_all_to_all's device code: our all-to-all kernels, the payload pattern and its check.
//
// Both kernels run one CTA per SM (the launch asks for more than half an SM's shared memory) and
// share the launch protocol: a flag barrier across the GPUs at the start (so that back-to-back
// launches behave like back-to-back collectives), then the copies, then each CTA makes its stores
// visible system-wide and bumps an arrival counter at every receiver; block 0 of a receiver ends
// only when all n*k arrivals of this launch are in, so a kernel's end on a GPU means its receive
// buffer is complete.
//
// "tiled" (the default): each thread keeps 8 16-byte loads in flight, then stores them; slices
// start on 4 KiB boundaries. With few CTAs every CTA copies its slice of every chunk, visiting the
// destinations tile by tile from (self + 1 + b) mod n, so the local copy runs alongside the NVLink
// ones. With enough CTAs to fill NVLink (k >= 2 * kLinkCtas) a few CTAs copy the local chunk alone
// and the rest only the peers' chunks: sharing CTAs between the two cost 6-18% there (H200,
// calibrate/data/h200/all_to_all_variants.log). "simple": the first kernel, kept for comparison.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace cs::kernels::a2a {

constexpr int kMaxGpus = 8;
// CTAs whose copies fill one GPU's NVLink bandwidth: about 360 GB/s per direction / 48 GB/s per SM
// (both measured on H200). The local chunk gets ceil(kLinkCtas / (n - 1)) CTAs of its own, enough
// to keep pace with the peers' share, once k >= 2 * kLinkCtas.
constexpr int kLinkCtas = 8;

struct Peers {
  uint4* recv[kMaxGpus];                   // each GPU's receive buffer (peer pointers)
  unsigned long long* barrier[kMaxGpus];   // each GPU's barrier slots, one per source GPU
  unsigned long long* arrive[kMaxGpus];    // each GPU's arrival counter
};

// One launch on GPU `self`: send holds n chunks of chunk16 uint4s, chunk p for GPU p, which lands
// at recv[p] + self * chunk16. epoch counts launches from 1 (same on every GPU); want is the
// arrival count a receiver has seen once this launch is complete (sum of n * k over launches).
// dest_mask: the destinations copied (all of them for an all-to-all; fewer only in diagnostics).
// Slices are whole granules (granule16 uint4s), so that every CTA's stores start on line (and
// page) boundaries. self_ctas > 0: CTAs [0, self_ctas) copy only the local chunk, the others only
// the peers' chunks; 0: every CTA copies its slice of every chunk.
struct Launch {
  const uint4* send;
  int n, self;
  unsigned long long chunk16, epoch, want;
  unsigned dest_mask;
  unsigned long long granule16;
  int self_ctas;
};

__device__ __forceinline__ unsigned long long ld_acquire_sys(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Every GPU has started this launch: no GPU runs ahead into a receiver still in the previous one.
__device__ __forceinline__ void start_barrier(const Launch& a, const Peers& peers) {
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      for (int p = 0; p < a.n; ++p) {
        unsigned long long* slot = peers.barrier[p] + a.self;
        asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(slot), "l"(a.epoch) : "memory");
      }
    }
    for (int p = 0; p < a.n; ++p) {
      while (ld_acquire_sys(peers.barrier[a.self] + p) < a.epoch) {
      }
    }
  }
  __syncthreads();
}

// Each CTA publishes its stores (the barrier orders its threads' stores before thread 0's
// system-scope fence), then counts itself in at every receiver; block 0 waits for all arrivals
// at this GPU.
__device__ __forceinline__ void finish(const Launch& a, const Peers& peers) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    for (int p = 0; p < a.n; ++p) atomicAdd_system(peers.arrive[p], 1ull);
    if (blockIdx.x == 0) {
      while (ld_acquire_sys(peers.arrive[a.self]) < a.want) {
      }
    }
  }
}

// This CTA's share: its slice [begin, end) of each chunk (uint4s) and the destinations it copies.
__device__ __forceinline__ unsigned cta_share(const Launch& a, unsigned long long& begin, unsigned long long& end) {
  unsigned mask = a.dest_mask;
  unsigned long long b = blockIdx.x, k = gridDim.x;
  if (a.self_ctas > 0) {
    const unsigned self = 1u << a.self;
    const bool local = blockIdx.x < static_cast<unsigned>(a.self_ctas);
    mask &= local ? self : ~self;
    if (!local) b -= a.self_ctas;
    k = local ? a.self_ctas : k - a.self_ctas;
  }
  const unsigned long long units = (a.chunk16 + a.granule16 - 1) / a.granule16;
  begin = b * units / k * a.granule16;
  end = (b + 1) * units / k * a.granule16;
  if (end > a.chunk16) end = a.chunk16;
  if (begin > end) begin = end;
  return mask;
}

// The j-th of the nd destinations in `mask`, in visiting order (self + 1, self + 2, ..., self)
// rotated by rot: computed, not kept in an array (which would live in local memory).
__device__ __forceinline__ int dest_at(const Launch& a, unsigned mask, int nd, int rot, unsigned long long j) {
  int want = static_cast<int>((j + rot) % nd);
  for (int i = 0; i < a.n; ++i) {
    const int p = (a.self + 1 + i) % a.n;
    if ((mask >> p & 1u) && want-- == 0) return p;
  }
  return a.self;
}

// ---- "tiled": every thread moves kUnroll 16-byte vectors per tile: kUnroll independent loads
// (non-caching, 256-byte L2 prefetch), then kUnroll stores; a tile is kThreads * kUnroll vectors
// (64 KiB). More in flight (16 per thread, or 1024 threads) measured the same: one SM copies about
// 48 GB/s, locally or over NVLink.

__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ void st_stream(uint4* p, const uint4& v) {
  asm volatile("st.global.L1::no_allocate.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

constexpr int kThreads = 512;
constexpr int kUnroll = 8;

__global__ void __launch_bounds__(kThreads, 1) a2a_tiled(Launch a, Peers peers) {
  start_barrier(a, peers);
  unsigned long long begin, end;
  const unsigned mask = cta_share(a, begin, end);
  const int nd = __popc(mask);
  constexpr int kTile = kThreads * kUnroll;
  for (unsigned long long base = begin; base < end; base += kTile) {
    for (int i = 0; i < nd; ++i) {
      const int p = dest_at(a, mask, nd, blockIdx.x, i);
      const uint4* src = a.send + p * a.chunk16;
      uint4* dst = peers.recv[p] + a.self * a.chunk16;
      uint4 v[kUnroll];
      if (base + kTile <= end) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = ld_stream(src + base + u * kThreads + threadIdx.x);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) st_stream(dst + base + u * kThreads + threadIdx.x, v[u]);
      } else {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const unsigned long long j = base + u * kThreads + threadIdx.x;
          if (j < end) v[u] = ld_stream(src + j);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const unsigned long long j = base + u * kThreads + threadIdx.x;
          if (j < end) st_stream(dst + j, v[u]);
        }
      }
    }
  }
  finish(a, peers);
}

// ---- "simple": the first kernel, kept for comparison: 512 threads, 4 vectors per thread in
// flight, k equal slices (16-byte aligned only), the peers in rotated order and the local copy
// last, each destination's whole slice in turn.
__global__ void __launch_bounds__(512, 1) a2a_simple(Launch a, Peers peers) {
  constexpr int kT = 512;
  start_barrier(a, peers);
  const unsigned long long per_cta = (a.chunk16 + gridDim.x - 1) / gridDim.x;
  const unsigned long long begin = min(per_cta * blockIdx.x, a.chunk16), end = min(begin + per_cta, a.chunk16);
  const int nd = __popc(a.dest_mask);
  for (int i = 0; i < nd; ++i) {
    const int p = dest_at(a, a.dest_mask, nd, 0, i);
    const uint4* src = a.send + p * a.chunk16;
    uint4* dst = peers.recv[p] + a.self * a.chunk16;
    unsigned long long j = begin + threadIdx.x;
    for (; j + 3 * kT < end; j += 4 * kT) {
      const uint4 w = src[j], x = src[j + kT], y = src[j + 2 * kT], z = src[j + 3 * kT];
      dst[j] = w;
      dst[j + kT] = x;
      dst[j + 2 * kT] = y;
      dst[j + 3 * kT] = z;
    }
    for (; j < end; j += kT) dst[j] = src[j];
  }
  finish(a, peers);
}

// ---- The payload and its check.

// The pattern: 32-bit word w of the chunk that GPU src sends to GPU dst, for a payload seed.
__host__ __device__ __forceinline__ uint32_t pattern(uint32_t seed, int src, int dst, unsigned long long w) {
  uint32_t x = static_cast<uint32_t>(w) * 0x9E3779B1u ^ static_cast<uint32_t>(w >> 32) * 0x85EBCA77u;
  x ^= seed + 0x27d4eb2fu * static_cast<uint32_t>(src * kMaxGpus + dst + 1);
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  return x;
}

__global__ void fill_send(uint32_t* send, int n, int self, unsigned long long chunk_words, uint32_t seed) {
  const unsigned long long total = chunk_words * n;
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < total; i += 1ull * gridDim.x * blockDim.x) {
    send[i] = pattern(seed, self, static_cast<int>(i / chunk_words), i % chunk_words);
  }
}

__global__ void check_recv(const uint32_t* recv, int n, int self, unsigned long long chunk_words, uint32_t seed,
                           unsigned long long* bad, unsigned long long* first_bad) {
  const unsigned long long total = chunk_words * n;
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < total; i += 1ull * gridDim.x * blockDim.x) {
    if (recv[i] != pattern(seed, static_cast<int>(i / chunk_words), self, i % chunk_words)) {
      atomicAdd(bad, 1ull);
      atomicMin(first_bad, i);
    }
  }
}

}  // namespace cs::kernels::a2a
