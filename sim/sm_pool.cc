#include "sim/sm_pool.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace cs::sim {

SmPool::SmPool(int total_sms, std::vector<PartitionSpec> partitions) : total_sms_(total_sms) {
  int sum = 0;
  for (auto& spec : partitions) {
    assert(spec.sms >= 0);  // 0: a partition that runs no kernel (an emptied communication partition)
    sum += spec.sms;
    parts_.push_back(Partition{std::move(spec), {}});
  }
  assert(sum <= total_sms && "partitions exceed the GPU's SMs");
  (void)sum;
}

int SmPool::find(const std::string& name) const {
  for (size_t p = 0; p < parts_.size(); ++p)
    if (parts_[p].spec.name == name) return static_cast<int>(p);
  return -1;
}

SmPool::KernelSlot SmPool::start(int p, int max_sms, ShareCallback on_share) {
  assert(p >= 0 && p < partition_count() && max_sms > 0);
  uint32_t k;
  if (!free_.empty()) {
    k = free_.back();
    free_.pop_back();
  } else {
    k = static_cast<uint32_t>(kernels_.size());
    kernels_.emplace_back();
  }
  kernels_[k] = Kernel{p, max_sms, -1, next_seq_++, std::move(on_share)};
  parts_[p].kernels.push_back(k);
  rebalance(p);
  return KernelSlot{k};
}

void SmPool::end(KernelSlot slot) {
  Kernel& k = kernels_[slot.v];
  const int p = k.partition;
  auto& list = parts_[p].kernels;
  list.erase(std::find(list.begin(), list.end(), slot.v));  // keeps start order
  k = Kernel{};
  free_.push_back(slot.v);
  rebalance(p);
}

void SmPool::rebalance(int p) {
  const auto& list = parts_[p].kernels;
  const size_t n = list.size();
  if (n == 0) return;
  // Water-filling in whole SMs. Kernels whose demand is below the even share take their demand
  // (smallest first); the others split what is left evenly, and the SMs the integer division
  // leaves over go one each to the earliest-started of them.
  // Stable by demand: an insertion sort, since a partition runs a handful of kernels and
  // std::stable_sort would allocate a buffer at every kernel start and end.
  order_.assign(list.begin(), list.end());
  for (size_t j = 1; j < n; ++j) {
    const uint32_t id = order_[j];
    size_t at = j;
    for (; at > 0 && kernels_[order_[at - 1]].max_sms > kernels_[id].max_sms; --at) order_[at] = order_[at - 1];
    order_[at] = id;
  }
  share_.assign(kernels_.size(), 0);
  int left = parts_[p].spec.sms;
  size_t i = 0;
  for (; i < n; ++i) {
    const Kernel& k = kernels_[order_[i]];
    if (k.max_sms > left / static_cast<int>(n - i)) break;
    share_[order_[i]] = k.max_sms;
    left -= k.max_sms;
  }
  if (i < n) {
    const int rest = static_cast<int>(n - i);
    const int even = left / rest;
    int extra = left % rest;
    for (size_t j = i; j < n; ++j) share_[order_[j]] = even;
    for (uint32_t id : list) {  // start order
      if (extra == 0) break;
      if (share_[id] == even && kernels_[id].max_sms > even &&
          std::find(order_.begin() + static_cast<long>(i), order_.end(), id) != order_.end()) {
        ++share_[id];
        --extra;
      }
    }
  }
  // Notify in start order; copy ids first since a callback may start or end kernels elsewhere.
  std::vector<std::pair<uint32_t, int>> changed;
  for (uint32_t id : list)
    if (kernels_[id].sms != share_[id]) {
      kernels_[id].sms = share_[id];
      changed.emplace_back(id, share_[id]);
    }
  for (auto [id, sms] : changed)
    if (kernels_[id].on_share && kernels_[id].sms == sms) kernels_[id].on_share(sms);
}

}  // namespace cs::sim

