#include <catch2/catch.hpp>

#include "hw/catalog.h"
#include "hw/gpu_catalog.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::hw;

TEST_CASE("every catalog figure names its source", "[catalog]") {
  for (const auto& g : gpu_catalog()) {
    CHECK(g.sources.size() == 12);
    for (const auto& [k, v] : g.sources) CHECK(!v.empty());
  }
  for (const auto& n : nic_catalog()) CHECK(n.sources.count("bw_GBps_per_direction"));
  for (const auto& s : switch_catalog()) CHECK(s.sources.size() == 4);
  for (const auto& n : node_catalog()) CHECK(n.sources.size() == 4);
  for (const auto& p : preset_catalog()) CHECK(!p.source.empty());
}

TEST_CASE("catalog figures are REFERENCE.md's", "[catalog]") {
  const GpuSpec& h800 = *find_gpu("h800");
  CHECK(h800.sms == 132);
  CHECK(h800.fp8_dense_tflops == 1979);
  CHECK(h800.hbm_bw_GBps == 3350);
  CHECK(h800.nvlink_bw_GBps_per_direction == 200);
  CHECK(find_gpu("h200")->hbm_bw_GBps == 4800);
  CHECK(find_gpu("h200")->nvlink_bw_GBps_per_direction == 450);
  CHECK(find_nic("cx7-400g")->bw_GBps_per_direction == 50);
  const SwitchSpec& sw = *find_switch("ib-64x400g");
  CHECK(sw.ports == 64);
  // ISCA'25 Table 5: 2.8 us through one leaf (base + hop), 3.7 us through a spine (base + 3 hops).
  CHECK(sw.base_lat_ns + sw.hop_lat_ns == 2800);
  CHECK(sw.base_lat_ns + 3 * sw.hop_lat_ns == 3700);
  const NodeSpec& node = *find_node("hgx-8gpu");
  CHECK(node.gpus == 8);
  CHECK(node.nics == 8);
  CHECK(node.nvswitch_chips == 4);
}

TEST_CASE("the bundled presets: DeepSeek's cluster, a SuperPOD-like one, our calibration host", "[catalog]") {
  const PresetSpec& ds = *find_preset("h800-2048");
  CHECK(ds.gpu == "h800");
  CHECK(ds.nodes * find_node(ds.node)->gpus == 2048);
  CHECK(ds.fabric_kind == "multi_plane_fat_tree");
  CHECK(find_preset("h100-dgx-superpod")->fabric_kind == "multi_rail_fat_tree");
  CHECK(find_preset("h200x8")->nodes == 1);
  CHECK(find_preset("nope") == nullptr);
}

}  // namespace CS_TEST_FILE
