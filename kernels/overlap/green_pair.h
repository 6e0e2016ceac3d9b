// Two disjoint SM partitions of one GPU, each a CUDA green context with its own stream: one for the
// all-to-all (k SMs, rounded up to the driver's granularity) and the rest of the device for the
// GEMMs. Both come from one cuDevSmResourceSplitByCount, so they never share an SM (two separate
// splits of the whole device would hand out the same first SMs twice).
#pragma once

#include <memory>

#include "fp8_gemm/sm_partition.h"

namespace cs::kernels::overlap {

using fp8_gemm::Partition;

class GreenPair {
 public:
  // Splits `device` into comm (at least comm_sms SMs) and compute (the remaining SMs); each gets a
  // non-blocking stream. The primary context of `device` must be current. Throws on failure.
  GreenPair(int device, int comm_sms);
  ~GreenPair();
  GreenPair(const GreenPair&) = delete;
  GreenPair& operator=(const GreenPair&) = delete;

  Partition& comm() { return comm_; }
  Partition& compute() { return compute_; }

 private:
  Partition comm_, compute_;
};

using fp8_gemm::make_current;

}  // namespace cs::kernels::overlap
