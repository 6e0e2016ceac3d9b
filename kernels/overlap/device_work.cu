#include "overlap/device_work.h"

#include <algorithm>
#include <stdexcept>

#include "all_to_all/copy_kernels.cuh"
#include "common/check.h"
#include "common/peer_access.h"

namespace cs::kernels::overlap {
namespace {

namespace a2a = cs::kernels::a2a;
constexpr std::size_t kOneCtaPerSmBytes = 120 * 1024;  // as cs_all_to_all: one CTA per SM
constexpr int kGranuleKib = 4;                         // cs_all_to_all's default slices

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

__global__ void stamp_kernel(unsigned long long* slot) { *slot = global_ns(); }

__global__ void gate_kernel(const unsigned long long* flag, unsigned long long epoch, unsigned long long* timeouts) {
  const unsigned long long t0 = global_ns();
  while (a2a::ld_acquire_sys(flag) < epoch) {
    if (global_ns() - t0 > 10'000'000'000ull) {
      atomicAdd_system(timeouts, 1ull);
      return;
    }
  }
}

}  // namespace

AllToAll::AllToAll(int n, unsigned long long bytes)
    : n_(n), bytes_(bytes), send_(n), recv_(n), flags_(n), bad_(n), peers_(new a2a::Peers{}) {
  if (n > a2a::kMaxGpus) throw std::runtime_error("at most 8 GPUs");
  auto* peers = static_cast<a2a::Peers*>(peers_);
  for (int d = 0; d < n; ++d) {
    cs::kernels::enable_peer_access(d, n);
    CS_CUDA_CHECK(cudaMalloc(&send_[d], bytes));
    CS_CUDA_CHECK(cudaMalloc(&recv_[d], bytes));
    CS_CUDA_CHECK(cudaMalloc(&flags_[d], (a2a::kMaxGpus + 1) * sizeof(unsigned long long)));
    CS_CUDA_CHECK(cudaMemset(flags_[d], 0, (a2a::kMaxGpus + 1) * sizeof(unsigned long long)));
    CS_CUDA_CHECK(cudaMalloc(&bad_[d], 2 * sizeof(unsigned long long)));
    peers->recv[d] = static_cast<uint4*>(recv_[d]);
    peers->barrier[d] = flags_[d];
    peers->arrive[d] = flags_[d] + a2a::kMaxGpus;
    CS_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

AllToAll::~AllToAll() {
  for (int d = 0; d < n_; ++d) {
    cudaSetDevice(d);
    cudaFree(send_[d]);
    cudaFree(recv_[d]);
    cudaFree(flags_[d]);
    cudaFree(bad_[d]);
  }
  delete static_cast<a2a::Peers*>(peers_);
}

void AllToAll::configure_current() {
  CS_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(&a2a::a2a_tiled),
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(kOneCtaPerSmBytes)));
}

void AllToAll::next_launch(int k) {
  ++epoch_;
  arrivals_ += static_cast<unsigned long long>(n_) * static_cast<unsigned long long>(k);
}

void AllToAll::launch_on(int d, cudaStream_t s, int k) {
  // cs_all_to_all's rule: from k = 2 * kLinkCtas the local chunk gets CTAs of its own.
  const int self_ctas = n_ > 1 && k >= 2 * a2a::kLinkCtas ? (a2a::kLinkCtas + n_ - 2) / (n_ - 1) : 0;
  a2a::Launch a{static_cast<const uint4*>(send_[d]), n_, d, bytes_ / n_ / 16, epoch_, arrivals_,
                (1u << n_) - 1, kGranuleKib * 64ull, self_ctas};
  void* args[] = {&a, peers_};
  CS_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&a2a::a2a_tiled), dim3(k), dim3(a2a::kThreads), args,
                                 kOneCtaPerSmBytes, s));
}

void AllToAll::fill(uint32_t seed) {
  for (int d = 0; d < n_; ++d) {
    CS_CUDA_CHECK(cudaSetDevice(d));
    a2a::fill_send<<<264, 512>>>(static_cast<uint32_t*>(send_[d]), n_, d, bytes_ / n_ / 4, seed);
    CS_CUDA_CHECK(cudaGetLastError());
    CS_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

void AllToAll::poison() {
  for (int d = 0; d < n_; ++d) {
    CS_CUDA_CHECK(cudaSetDevice(d));
    CS_CUDA_CHECK(cudaMemset(recv_[d], 0xA5, bytes_));
    CS_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

std::string AllToAll::check(uint32_t seed) {
  std::string why;
  const unsigned long long cw = bytes_ / n_ / 4;
  for (int d = 0; d < n_; ++d) {
    CS_CUDA_CHECK(cudaSetDevice(d));
    const unsigned long long init[2] = {0, ~0ull};
    CS_CUDA_CHECK(cudaMemcpy(bad_[d], init, sizeof init, cudaMemcpyHostToDevice));
    a2a::check_recv<<<264, 512>>>(static_cast<const uint32_t*>(recv_[d]), n_, d, cw, seed, bad_[d], bad_[d] + 1);
    CS_CUDA_CHECK(cudaGetLastError());
    unsigned long long r[2];
    CS_CUDA_CHECK(cudaMemcpy(r, bad_[d], sizeof r, cudaMemcpyDeviceToHost));
    if (r[0] != 0) {
      why += "GPU " + std::to_string(d) + ": " + std::to_string(r[0]) + " of " + std::to_string(cw * n_) +
             " words wrong, first at word " + std::to_string(r[1]) + "; ";
    }
  }
  return why;
}

Gate::Gate() {
  void* p = nullptr;
  CS_CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(unsigned long long), cudaHostAllocMapped | cudaHostAllocPortable));
  flag_ = static_cast<volatile unsigned long long*>(p);
  timeouts_ = static_cast<unsigned long long*>(p) + 1;
  flag_[0] = 0;
  *timeouts_ = 0;
}

Gate::~Gate() { cudaFreeHost(const_cast<unsigned long long*>(flag_)); }

void Gate::hold(cudaStream_t s) {
  gate_kernel<<<1, 1, 0, s>>>(const_cast<const unsigned long long*>(flag_), epoch_, timeouts_);  // unified addressing: the host pointer works
  CS_CUDA_CHECK(cudaGetLastError());
}

void Gate::open() {
  __atomic_store_n(const_cast<unsigned long long*>(flag_), epoch_, __ATOMIC_SEQ_CST);
  ++epoch_;
}

bool Gate::timed_out() const { return __atomic_load_n(timeouts_, __ATOMIC_SEQ_CST) != 0; }

void stamp(cudaStream_t s, unsigned long long* slot) {
  stamp_kernel<<<1, 1, 0, s>>>(slot);
  CS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cs::kernels::overlap
