// Where a GEMM runs: on an SM partition of the device made with a CUDA green context, or on the
// whole device (the primary context). Each place owns a stream and the events that time it.
//
// Green contexts come from the driver API (cuDeviceGetDevResource, cuDevSmResourceSplitByCount,
// cuDevResourceGenerateDesc, cuGreenCtxCreate, cuGreenCtxStreamCreate). Its entry points are taken
// at run time through the CUDA runtime (cudaGetDriverEntryPointByVersion) rather than by linking
// libcuda, so that a machine with the toolkit but no driver still gets exit code 2 (README.md).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

namespace cs::kernels::fp8_gemm {

// One place to run: a green context of sm_obtained SMs, or the whole device (green == nullptr).
struct Partition {
  int sm_limit = 0;       // SMs asked for
  int sm_obtained = 0;    // SMs the partition has (green contexts round up to their granularity)
  bool green = false;     // a green context (else the primary context, all SMs)
  std::string error;      // why this partition could not be made; empty when usable
  CUgreenCtx green_ctx = nullptr;
  CUcontext ctx = nullptr;        // the context to make current before using `stream`
  cudaStream_t stream = nullptr;  // non-blocking
  std::vector<cudaEvent_t> start_events;  // one pair per timed run, made in `ctx`
  std::vector<cudaEvent_t> stop_events;
  bool usable() const { return error.empty() && stream != nullptr; }
};

// What the driver reports about SM partitioning on this device.
struct SmResourceInfo {
  int sm_count = 0;                  // SMs of the whole device resource
  int min_partition_size = 0;        // smallest partition a split may make
  int coscheduled_alignment = 0;     // partition sizes are multiples of this
};

// The pieces SmPartitions is made of, for programs that split a device their own way
// (cs_overlap's disjoint pairs). Each throws std::runtime_error on a driver failure.
// The SM resource of the whole device.
CUdevResource device_sm_resource(int device);
// Splits one group of at least `sms` SMs off `whole`; `rest` gets the remaining SMs.
void split_sm_resource(CUdevResource& whole, int sms, CUdevResource& group, CUdevResource& rest);
// Makes p a green context over `part` with a non-blocking stream, and reads back its SM count.
void make_green_context(int device, CUdevResource& part, Partition& p);
// Makes p's context current to this thread (the runtime then works in it).
void make_current(const Partition& p);
// Best effort, never throws: destroys p's events and stream inside its context, then (for a green
// context) the context itself, after making `after` current (nullptr: leave whatever is current).
void release_partition(Partition& p, CUcontext after);

// Owns the primary-context partition and one green-context partition per SM limit. Not copyable.
class SmPartitions {
 public:
  // Makes the partitions for `green_limits` on `device` (the runtime's primary context must be
  // current); each gets `events` pairs of timing events. A limit that cannot be made is kept with
  // its error (usable() false). Throws CudaError / std::runtime_error when the driver API is missing.
  SmPartitions(int device, const std::vector<int>& green_limits, int events);
  ~SmPartitions();
  SmPartitions(const SmPartitions&) = delete;
  SmPartitions& operator=(const SmPartitions&) = delete;

  const SmResourceInfo& info() const { return info_; }
  Partition& primary() { return *primary_; }
  // The green partition made for `sm_limit`, or nullptr when none was asked for.
  Partition* green(int sm_limit);
  // Makes p's context current to this thread (the runtime then works in it).
  void make_current(const Partition& p) const;

 private:
  void make_green(Partition& p);
  void make_stream_and_events(Partition& p, int events);

  int device_ = 0;
  SmResourceInfo info_;
  std::unique_ptr<Partition> primary_;
  std::vector<std::unique_ptr<Partition>> greens_;
};

}  // namespace cs::kernels::fp8_gemm
