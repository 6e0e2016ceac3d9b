// SM pools: each GPU's SMs divided into named partitions (e.g. compute 112, comm 20).
//
// Kernels on one partition share its SMs max-min fairly in whole SMs: each kernel is capped at
// the SMs it can use (its tiles or channels); the rest is split evenly, and SMs left over by the
// integer division go one each to the kernels that started first. A kernel may receive 0 SMs when
// more kernels than SMs run; it then waits. Whenever a kernel starts or ends, every kernel of that
// partition whose share changed is told its new count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cs::sim {

struct PartitionSpec {
  std::string name;
  int sms = 0;
};

class SmPool {
 public:
  using ShareCallback = std::function<void(int sms)>;
  struct KernelSlot {
    uint32_t v = UINT32_MAX;
  };

  // Requires the partition sizes to sum to at most total_sms.
  // A partition may hold 0 SMs when no stream runs on it: a scenario's (`comm: 0`) or clustersim
  // sweep's (comm_sms 0) communication partition left empty, whose model streams, copy-engine
  // sends included, then sit on the compute partition; an ops stream may not name it. A kernel
  // started there would wait for SMs forever.
  SmPool(int total_sms, std::vector<PartitionSpec> partitions);

  int total_sms() const { return total_sms_; }
  int partition_count() const { return static_cast<int>(parts_.size()); }
  // Index of the named partition, or -1.
  int find(const std::string& name) const;
  const PartitionSpec& partition(int p) const { return parts_[p].spec; }

  // Starts a kernel that can use up to max_sms SMs of partition p. `on_share` is called with the
  // kernel's SM count now and on every later change, until the kernel ends.
  KernelSlot start(int p, int max_sms, ShareCallback on_share);
  void end(KernelSlot k);
  int sms_of(KernelSlot k) const { return kernels_[k.v].sms; }
  int running(int p) const { return static_cast<int>(parts_[p].kernels.size()); }

 private:
  struct Kernel {
    int partition = -1;
    int max_sms = 0;
    int sms = 0;
    uint64_t start_seq = 0;
    ShareCallback on_share;
  };
  struct Partition {
    PartitionSpec spec;
    std::vector<uint32_t> kernels;  // in start order
  };
  void rebalance(int p);

  int total_sms_;
  std::vector<Partition> parts_;
  std::vector<Kernel> kernels_;
  std::vector<uint32_t> free_;
  uint64_t next_seq_ = 0;
  std::vector<uint32_t> order_;
  std::vector<int> share_;
};

}  // namespace cs::sim
