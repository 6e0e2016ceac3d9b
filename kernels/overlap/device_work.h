// The device side of cs_overlap: our all-to-all (all_to_all/copy_kernels.cuh's tiled kernel) across
// all GPUs of the process, a gate that holds every stream until the host has queued a whole window,
// and time stamps (%globaltimer, nanoseconds, one clock per GPU) written between operations.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cs::kernels::overlap {

// One all-to-all of `bytes` per GPU (bytes / n to each GPU, itself included), balanced, with our
// tiled kernel on k CTAs (one per SM). Buffers live in each GPU's primary context (green contexts
// share its memory); launches go to whatever stream the caller passes, with that stream's context
// current.
class AllToAll {
 public:
  AllToAll(int n, unsigned long long bytes);  // enables peer access between every pair
  ~AllToAll();
  AllToAll(const AllToAll&) = delete;
  AllToAll& operator=(const AllToAll&) = delete;

  int n() const { return n_; }
  unsigned long long bytes() const { return bytes_; }
  // Allows the kernel its one-CTA-per-SM shared memory in the current context (of GPU dev).
  static void configure_current();
  // Queues one launch per GPU: streams[d] on GPU d, ctx_of(d) made current first.
  template <class MakeCurrent>
  void launch(const std::vector<cudaStream_t>& streams, int k, MakeCurrent make_current_for) {
    next_launch(k);
    for (int d = 0; d < n_; ++d) {
      make_current_for(d);
      launch_on(d, streams[static_cast<std::size_t>(d)], k);
    }
  }
  // Writes the payload pattern into every send buffer (current device contexts: primary).
  void fill(uint32_t seed);
  void poison();
  // Empty when every receive buffer holds what the senders wrote for `seed`; else what is wrong.
  std::string check(uint32_t seed);

 private:
  void next_launch(int k);
  void launch_on(int d, cudaStream_t s, int k);

  int n_;
  unsigned long long bytes_;
  std::vector<void*> send_, recv_;
  std::vector<unsigned long long*> flags_, bad_;
  void* peers_;  // a2a::Peers, kept opaque here
  unsigned long long epoch_ = 0, arrivals_ = 0;
};

// Host-mapped flag that gate kernels spin on; set() releases every gate of a window at once.
class Gate {
 public:
  Gate();
  ~Gate();
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  // Queues a one-thread kernel on s that waits until the flag reaches the next epoch (or 10 s pass,
  // counted in timed_out()).
  void hold(cudaStream_t s);
  void open();  // releases the holds queued since the last open()
  bool timed_out() const;

 private:
  volatile unsigned long long* flag_ = nullptr;
  unsigned long long* timeouts_ = nullptr;
  unsigned long long epoch_ = 1;
};

// Queues a one-thread kernel on s writing %globaltimer (ns) to *slot (device memory).
void stamp(cudaStream_t s, unsigned long long* slot);

}  // namespace cs::kernels::overlap
