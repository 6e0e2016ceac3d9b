// A fabric spec with round figures for the fabric tests (NVLink 160, PCIe 64, NIC 50, HBM 3350 GB/s).
#pragma once

#include "hw/fabric/fabric_graph.h"

namespace cs::test {

inline hw::FabricSpec fabric_spec(hw::FabricKind kind, int nodes, int radix = 64, int over = 1) {
  hw::FabricSpec s;
  s.kind = kind;
  s.nodes = nodes;
  s.switch_radix = radix;
  s.oversubscription = over;
  s.nvlink_GBps = 160;
  s.pcie_GBps = 64;
  s.nic_GBps = 50;
  s.hbm_GBps = 3350;
  return s;
}

}  // namespace cs::test
