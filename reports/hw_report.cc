#include "reports/hw_report.h"

#include <fmt/format.h>

#include <map>

#include "hw/catalog.h"
#include "hw/fabric/fabric_graph.h"
#include "hw/gpu_catalog.h"
#include "hw/user_error.h"
#include "hw/yaml_reader.h"
#include "models/cluster.h"

namespace cs::reports {

namespace {

std::string sources_block(const std::map<std::string, std::string>& sources) {
  std::string out = "\nsources\n";
  for (const auto& [figure, source] : sources) out += fmt::format("  {:<30} {}\n", figure, source);
  return out;
}

std::string show_preset(const hw::PresetSpec& p) {
  const models::ClusterConfig cl = models::preset_cluster(p);
  const hw::GpuSpec& gpu = cl.gpu;
  const hw::NodeSpec& node = cl.node;
  const hw::NicSpec& nic = cl.nic;
  const hw::SwitchSpec& sw = cl.switch_spec;
  const hw::BuiltFabric f = hw::build_fabric(models::fabric_spec(cl));
  const auto& c = f.counts;
  std::string out;
  out += fmt::format("preset       {}\n", p.name);
  out += fmt::format("             {}\n", p.description);
  out += fmt::format("source       {}\n\n", p.source);
  out += fmt::format("GPUs         {} x {} ({} nodes of {} x {})\n", c.gpus, gpu.model, p.nodes, node.gpus, node.name);
  out += fmt::format("NVSwitch     {} nodes, {} GB/s per GPU and direction\n", c.nvswitches, gpu.nvlink_bw_GBps_per_direction);
  out += fmt::format("NICs         {} x {} ({} GB/s per direction), PCIe {} GB/s\n", c.nics, nic.name,
                     nic.bw_GBps_per_direction, node.pcie_bw_GBps_per_direction);
  out += fmt::format("fabric       {}, oversubscription 1:{}, PXN {}\n", p.fabric_kind, p.oversubscription, p.pxn);
  if (cl.fabric.kind == "three_layer_fat_tree") {
    out += fmt::format("switches     {} x {}-port {}: {} pods of up to {} leaves + {} aggregation; {} cores\n", c.switches,
                       sw.ports, sw.name, c.pods, c.leaves_per_pod, c.aggs_per_pod, c.cores);
  } else {
    out += fmt::format("switches     {} x {}-port {}: {} tree(s) of {} leaves + {} spines\n", c.switches, sw.ports, sw.name,
                       c.trees, c.leaves_per_tree, c.spines_per_tree);
  }
  out += fmt::format("cables       {} between switches, {} NIC-leaf\n", c.switch_links, c.nics);
  out += fmt::format("links        {} directed edges in the graph (each an engine link), plus {} HBM links\n",
                     boost::num_edges(f.graph), c.gpus);
  out += fmt::format("bisection    {:.1f} TB/s one way between node halves ({:.1f} GB/s per GPU)\n",
                     c.bisection_GBps / 1000, c.bisection_GBps / (c.gpus / 2.0));
  return out;
}

}  // namespace

std::string hw_list() {
  std::string out = fmt::format("{:<10} {:<28} {:>4} {:>9} {:>9} {:>7} {:>9} {:>11}\n", "gpu", "model", "SMs",
                                "FP8 TF/s", "BF16 TF/s", "HBM GB", "HBM GB/s", "NVLink GB/s");
  for (const auto& g : hw::gpu_catalog())
    out += fmt::format("{:<10} {:<28} {:>4} {:>9} {:>9} {:>7} {:>9} {:>11}\n", g.name, g.model, g.sms,
                       g.fp8_dense_tflops, g.bf16_dense_tflops, g.hbm_gb, g.hbm_bw_GBps, g.nvlink_bw_GBps_per_direction);
  out += fmt::format("\n{:<10} {:<60} {:>8}\n", "nic", "model", "GB/s");
  for (const auto& n : hw::nic_catalog()) out += fmt::format("{:<10} {:<60} {:>8}\n", n.name, n.model, n.bw_GBps_per_direction);
  out += fmt::format("\n{:<12} {:<58} {:>5} {:>8}\n", "switch", "model", "ports", "GB/s");
  for (const auto& s : hw::switch_catalog())
    out += fmt::format("{:<12} {:<58} {:>5} {:>8}\n", s.name, s.model, s.ports, s.port_bw_GBps_per_direction);
  out += fmt::format("\n{:<10} {:<60} {:>4} {:>4}\n", "node", "model", "GPUs", "NICs");
  for (const auto& n : hw::node_catalog()) out += fmt::format("{:<10} {:<60} {:>4} {:>4}\n", n.name, n.model, n.gpus, n.nics);
  out += fmt::format("\n{:<18} {:>6} {:<22} {}\n", "preset", "GPUs", "fabric", "description");
  for (const auto& p : hw::preset_catalog())
    out += fmt::format("{:<18} {:>6} {:<22} {}\n", p.name, p.nodes * hw::find_node(p.node)->gpus, p.fabric_kind, p.description);
  return out;
}

std::string hw_show(const std::string& name) {
  if (const auto* p = hw::find_preset(name)) return show_preset(*p);
  if (const auto* g = hw::find_gpu(name)) {
    std::string out = fmt::format("gpu          {} ({})\n", g->name, g->model);
    out += fmt::format("SMs          {}\nFP8/BF16/FP16/TF32 dense  {} / {} / {} / {} TFLOPS\nFP32 / FP64  {} / {} TFLOPS\n",
                       g->sms, g->fp8_dense_tflops, g->bf16_dense_tflops, g->fp16_dense_tflops, g->tf32_dense_tflops,
                       g->fp32_tflops, g->fp64_tflops);
    out += fmt::format("HBM          {} GB at {} GB/s\nL2           {} MB\nNVLink       {} GB/s per direction, {} ns\n",
                       g->hbm_gb, g->hbm_bw_GBps, g->l2_mb, g->nvlink_bw_GBps_per_direction, g->nvlink_lat_ns);
    return out + sources_block(g->sources);
  }
  if (const auto* n = hw::find_nic(name))
    return fmt::format("nic          {} ({})\nbandwidth    {} GB/s per direction\n", n->name, n->model,
                       n->bw_GBps_per_direction) + sources_block(n->sources);
  if (const auto* s = hw::find_switch(name))
    return fmt::format("switch       {} ({})\nports        {} x {} GB/s\nlatency      {} ns base + {} ns per hop\n", s->name,
                       s->model, s->ports, s->port_bw_GBps_per_direction, s->base_lat_ns, s->hop_lat_ns) +
           sources_block(s->sources);
  if (const auto* n = hw::find_node(name))
    return fmt::format("node         {} ({})\nGPUs         {}\nNVSwitch     {} chips\nNICs         {}\nPCIe         {} GB/s per direction\n",
                       n->name, n->model, n->gpus, n->nvswitch_chips, n->nics, n->pcie_bw_GBps_per_direction) +
           sources_block(n->sources);
  std::vector<std::string> all = hw::preset_names();
  for (const auto& v : {hw::gpu_names(), hw::nic_names(), hw::switch_names(), hw::node_names()}) all.insert(all.end(), v.begin(), v.end());
  const std::string near = hw::nearest(name, all);
  throw hw::UserError("clustersim hw show", 0, 0,
                      "no hardware named '" + name + "'" + (near.empty() ? "; see `clustersim hw list`" : "; did you mean '" + near + "'?"));
}

}  // namespace cs::reports
