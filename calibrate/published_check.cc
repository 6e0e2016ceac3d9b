#include "calibrate/published_check.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "calibrate/sim_cases.h"
#include "models/moe_routing.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"

namespace cs::calibrate {

namespace {

// ../shared/REFERENCE.md, "DeepGEMM on H800": the dense table, then the grouped contiguous layout.
constexpr DeepGemmRow kDense[] = {
    {1, 64, 2112, 7168, 206},    {1, 64, 24576, 1536, 289},    {1, 64, 32768, 512, 219},
    {1, 64, 7168, 16384, 336},   {1, 64, 4096, 7168, 287},     {1, 64, 7168, 2048, 295},
    {1, 128, 2112, 7168, 352},   {1, 128, 24576, 1536, 535},   {1, 128, 32768, 512, 358},
    {1, 128, 7168, 16384, 645},  {1, 128, 4096, 7168, 533},    {1, 128, 7168, 2048, 510},
    {1, 4096, 2112, 7168, 1058}, {1, 4096, 24576, 1536, 990},  {1, 4096, 32768, 512, 590},
    {1, 4096, 7168, 16384, 1358}, {1, 4096, 4096, 7168, 1304}, {1, 4096, 7168, 2048, 1025}};
constexpr DeepGemmRow kGrouped[] = {
    {4, 8192, 4096, 7168, 1297}, {4, 8192, 7168, 2048, 1099}, {8, 4096, 4096, 7168, 1288}, {8, 4096, 7168, 2048, 1093}};
// DeepEP's README setting (../shared/REFERENCE.md): 4096 tokens per GPU of hidden 7168, FP8
// dispatch with a 1x128 scale per 128 values (an FP32, 4 bytes, each), BF16 combine.
constexpr double kDeepEpTokens = 4096, kDeepEpHidden = 7168;
constexpr double kDeepEpFp8Bytes = kDeepEpHidden + kDeepEpHidden / 128 * 4, kDeepEpBf16Bytes = kDeepEpHidden * 2;
// ../shared/REFERENCE.md, "DeepEP on H800": the internode rows before the April 2025 update.
constexpr DeepEpInternodeRow kInternode[] = {{16, true, 43},  {16, false, 43}, {32, true, 44},
                                             {32, false, 47}, {64, true, 46},  {64, false, 45}};

}  // namespace

FitStats published_stats(const std::vector<PublishedCheck>& rows) {
  std::vector<double> predicted, published;
  for (const PublishedCheck& r : rows) predicted.push_back(r.predicted), published.push_back(r.published);
  return fit_stats(predicted, published);
}

std::span<const DeepGemmRow> deepgemm_dense_rows() { return kDense; }
std::span<const DeepGemmRow> deepgemm_grouped_rows() { return kGrouped; }

PublishedCheck deepgemm_check(const hw::GpuProfile& p, const hw::GpuSpec& gpu, const DeepGemmRow& r) {
  GemmCase c;
  c.shape.groups = static_cast<int>(r.groups);
  c.shape.m = r.m;
  c.shape.n = r.n;
  c.shape.k = r.k;
  c.shape.dtype = sim::DType::kFp8;
  c.sms = gpu.sms;
  const double kernel_s = simulate_gemm(p, gpu, c).to_seconds() - p.gemm.launch_us * 1e-6;
  const double flops = 2.0 * static_cast<double>(r.groups * r.m) * static_cast<double>(r.n) * static_cast<double>(r.k);
  const bool grouped = r.groups > 1;
  const std::string name = grouped ? fmt::format("{} x m {} n {} k {}", r.groups, r.m, r.n, r.k)
                                   : fmt::format("m {} n {} k {}", r.m, r.n, r.k);
  return {grouped ? "DeepGEMM grouped" : "DeepGEMM dense", name, "TFLOPS", r.tflops, flops / kernel_s * 1e-12};
}

std::vector<PublishedCheck> check_deepgemm(const hw::GpuProfile& p, const hw::GpuSpec& gpu) {
  std::vector<PublishedCheck> out;
  for (const DeepGemmRow& r : kDense) out.push_back(deepgemm_check(p, gpu, r));
  for (const DeepGemmRow& r : kGrouped) out.push_back(deepgemm_check(p, gpu, r));
  return out;
}

std::vector<PublishedCheck> check_deepep_intranode(const hw::GpuProfile& p, const hw::GpuSpec& gpu) {
  // The README's setting, top-8 experts, on the library's default of 20 SMs for its
  // high-throughput kernels. Over EP8 each GPU's rows reach the 8 GPUs evenly, 7 of 8 across NVLink.
  constexpr double kTopK = 8, kGpus = 8;
  const double dispatch = kDeepEpTokens * kTopK * kDeepEpFp8Bytes;
  const double combine = kDeepEpTokens * kTopK * kDeepEpBf16Bytes;
  std::vector<PublishedCheck> out;
  for (const auto& [what, bytes, published] :
       {std::tuple{"dispatch (FP8)", dispatch, 153.0}, std::tuple{"combine (BF16)", combine, 158.0}}) {
    AllToAllCase c;
    c.impl = "ours";
    c.gpus = static_cast<int>(kGpus);
    c.ctas = models::kDeepEpDefaultSms;
    c.size_bytes = bytes;
    const double s = simulate_all_to_all(p, gpu, c).to_seconds();
    out.push_back({"DeepEP intranode", fmt::format("EP8 {}", what), "GB/s", published,
                   bytes * (kGpus - 1) / kGpus / s * 1e-9});
  }
  return out;
}

std::span<const DeepEpInternodeRow> deepep_internode_rows() { return kInternode; }

PublishedCheck deepep_internode_check(const hw::GpuProfile& p, const DeepEpInternodeRow& r) {
  // One EP group of the DeepSeek-V3 cluster, the profile in place of the bundled one.
  models::Scenario sc = models::load_scenario_text(fmt::format(R"(schema_version: 1
name: deepep-internode-ep{0}
cluster: {{preset: h800-2048, nodes: {1}, sm_partitions: {{compute: 112, comm: 20}}}}
cost_model: {{kind: calibrated}}
workload: {{kind: ops, streams: [{{name: idle, gpus: [0], partition: comm, ops: [{{compute: {{gflop: 0, hbm_MiB: 1}}}}]}}]}}
)",
                                                               r.ep, r.ep / 8),
                                                   "deepep-internode.yaml");
  sc.cost.profile = std::make_shared<const hw::GpuProfile>(p);
  sc.cost.fit_clocks = true;  // DeepEP's test runs its kernels alone: no GEMM draws the clock down
  sc.cluster.figures.nvlink_bw_GBps = p.comm.nvlink_GBps;  // as the loader takes them from a profile
  if (p.memory.present()) sc.cluster.figures.hbm_bw_GBps = p.memory.hbm_GBps;
  // DeepEP's tests/test_internode.py routes over groups that are the nodes, top min(nodes, 4) of
  // them, top-8 of 256 experts: EP16 and EP32 are not node-limited, EP64 reaches at most 4 nodes.
  const int nodes = r.ep / 8;
  const models::MoeRoutingSetup setup{256, 8, nodes, std::min(nodes, 4), r.ep, 8, {}};
  const models::RoutingStats stats = models::routing_stats(setup);
  const double bytes = r.dispatch ? kDeepEpFp8Bytes : kDeepEpBf16Bytes;
  const std::vector<sim::Transfer> transfers = r.dispatch
                                                   ? models::dispatch_transfers(setup, stats, kDeepEpTokens, bytes)
                                                   : models::combine_transfers(setup, stats, kDeepEpTokens, bytes);
  models::OpWorkload w;
  w.stream_names = {"comm"};
  w.stream_partitions = {"comm"};
  w.engine_streams.resize(1);
  std::vector<sim::StreamId> streams;
  for (int g = 0; g < r.ep; ++g) {
    streams.push_back(w.graph.add_stream(g, 1, "comm"));
    w.engine_streams[0].push_back(streams.back().v);
  }
  const char* what = r.dispatch ? "dispatch (FP8)" : "combine (BF16)";
  w.graph.add_all_to_all_v(streams, transfers, what, models::internode_paced_bytes(setup, stats, kDeepEpTokens, bytes));
  w.op_pos.assign(w.graph.ops().size(), {});
  const double s = models::run_scenario(sc, w).makespan.to_seconds();
  // DeepEP's "RDMA bandwidth" is logical: its test counts a token once per node it reaches, its
  // own node included (num_rdma_token_sent), over the kernel's time.
  return {"DeepEP internode", fmt::format("EP{} {}", r.ep, what), "GB/s", r.GBps,
          kDeepEpTokens * stats.nodes_per_token * bytes / s * 1e-9};
}

std::vector<PublishedCheck> check_deepep_internode(const hw::GpuProfile& p) {
  std::vector<PublishedCheck> out;
  for (const DeepEpInternodeRow& r : kInternode) out.push_back(deepep_internode_check(p, r));
  return out;
}

}  // namespace cs::calibrate
