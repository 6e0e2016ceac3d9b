#include "reports/model_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "models/model_flops.h"
#include "models/model_params.h"
#include "models/model_zoo.h"

namespace cs::reports {

namespace {

using models::LayerOp;

struct Table {
  std::string title;
  std::vector<LayerOp> ops;
};

std::string shape_text(const LayerOp& o) {
  if (o.kind == models::LayerOpKind::kGemm) {
    const sim::GemmShape& g = o.gemm;
    std::string s = fmt::format("{}x{}x{}", g.m, g.n, g.k);
    if (g.groups > 1) s = fmt::format("{} x {}", g.groups, s);
    s += std::string(" ") + sim::dtype_name(g.dtype);
    // The weight gradients' FP8 GEMMs scale both operands in 1x128 tiles (priced apart).
    return g.dtype == sim::DType::kFp8 && g.scaling == sim::Fp8Scaling::kTiles ? s + " (1x128 both)" : s;
  }
  if (o.kind == models::LayerOpKind::kComm) return models::comm_op_name(o.comm);
  return o.kind == models::LayerOpKind::kAttention ? "flash-attention" : "elementwise";
}

std::vector<Table> op_tables(const models::ModelSpec& m, const ModelShowOptions& o) {
  models::LayerContext c;
  c.seq_len = o.seq_len;
  c.tokens = o.seq_len * o.micro_batch;
  c.tp = o.tp;
  c.ep = o.ep;
  c.fp8 = o.fp8;
  std::vector<Table> out;
  out.push_back({"embedding", models::embedding_ops(m, c)});
  const int first_moe = m.moe ? m.moe->first_dense_layers : m.layers;
  if (first_moe > 0) out.push_back({fmt::format("layer 0 (dense FFN; layers 0-{})", first_moe - 1), models::layer_ops(m, 0, c)});
  if (m.moe)
    out.push_back({fmt::format("layer {} (MoE; layers {}-{})", first_moe, first_moe, m.layers - 1),
                   models::layer_ops(m, first_moe, c)});
  out.push_back({"head", models::head_ops(m, c)});
  if (m.mtp_depth > 0) out.push_back({fmt::format("MTP module (x{})", m.mtp_depth), models::mtp_ops(m, c)});
  return out;
}

double gb(int64_t n) { return static_cast<double>(n) / 1e9; }

std::string show_console(const models::ModelSpec& m, const ModelShowOptions& o) {
  const models::ParamCounts p = models::param_counts(m);
  const models::FlopsPerToken causal = models::model_flops_per_token(m, o.seq_len, true);
  const models::FlopsPerToken full = models::model_flops_per_token(m, o.seq_len, false);
  std::string out;
  out += fmt::format("model        {}\n             {}\n", m.name, m.description);
  out += fmt::format("source       {}\n\n", m.source);
  out += fmt::format("parameters   {:.2f} B total, {:.2f} B activated per token", gb(p.total()), gb(p.activated()));
  out += fmt::format(" ({:.2f} B counting the whole embedding table)\n", gb(p.activated() + p.embedding + p.positions));
  out += fmt::format("             embedding {:.3f} B, head {}, final norm {}\n", gb(p.embedding),
                     p.tied ? std::string("tied to the embedding") : fmt::format("{:.3f} B", gb(p.head)), p.final_norm);
  const int dense = m.moe ? m.moe->first_dense_layers : m.layers;
  const models::LayerParams d = models::layer_params(m, 0);
  if (dense > 0)
    out += fmt::format("             {} dense layer(s) x {:.1f} M (attention {:.1f} M, FFN {:.1f} M)\n", dense,
                       d.total() / 1e6, d.attention / 1e6, d.dense_ffn / 1e6);
  if (m.moe) {
    const models::LayerParams e = models::layer_params(m, m.layers - 1);
    out += fmt::format("             {} MoE layer(s) x {:.3f} B ({:.1f} M activated: attention {:.1f} M, {} + {} of {} experts x {:.2f} M, gate {:.2f} M)\n",
                       m.layers - dense, gb(e.total()), (e.non_expert() + e.expert * m.moe->top_k) / 1e6,
                       e.attention / 1e6, m.moe->top_k, m.moe->shared_experts, m.moe->routed_experts, e.expert / 1e6,
                       e.gate / 1e6);
  }
  if (m.mtp_depth > 0)
    out += fmt::format("             MTP: {} module(s), {:.2f} B ({:.2f} B activated), not in the totals above\n",
                       m.mtp_depth, gb(p.mtp_total), gb(p.mtp_activated));
  out += fmt::format("\nFLOPs/token  training (forward + backward) at sequence {}:\n", o.seq_len);
  out += fmt::format("             {:.2f} GFLOP with causal attention ({:.2f} linear + {:.2f} attention)\n",
                     causal.total() / 1e9, causal.linear / 1e9, causal.attention / 1e9);
  out += fmt::format("             {:.2f} GFLOP counting full attention\n", full.total() / 1e9);
  if (m.mtp_depth > 0) out += fmt::format("             MTP adds {:.2f} GFLOP (causal)\n", causal.mtp / 1e9);
  out += fmt::format("\nops of one micro-batch ({} x {} tokens) on one GPU, tp {}, ep {}, {} linears\n", o.micro_batch,
                     o.seq_len, o.tp, o.ep, o.fp8 ? "FP8" : "BF16");
  out += "  pass F: forward, B: input backward (and recomputation), W: weight backward\n";
  for (const Table& t : op_tables(m, o)) {
    out += fmt::format("\n{}\n  {:<4} {:<34} {:<10} {:<30} {:>10} {:>10} {:>10}\n", t.title, "pass", "op", "block",
                       "shape", "GFLOP", "model GF", "HBM MB");
    double flops = 0, model = 0;
    for (const LayerOp& op : t.ops) {
      flops += op.flops;
      model += op.model_flops;
      const std::string bytes = op.kind == models::LayerOpKind::kComm
                                    ? fmt::format("{:.4f}/tok", op.comm_bytes / 1e6)
                                    : fmt::format("{:.1f}", op.hbm_bytes / 1e6);
      out += fmt::format("  {:<4} {:<34} {:<10} {:<30} {:>10.2f} {:>10.2f} {:>10}\n", models::pass_name(op.pass),
                         op.name, models::block_name(op.block), shape_text(op), op.flops / 1e9, op.model_flops / 1e9,
                         bytes);
    }
    out += fmt::format("  {:<4} {:<34} {:<10} {:<30} {:>10.2f} {:>10.2f}\n", "", "total", "", "", flops / 1e9, model / 1e9);
  }
  out += "\n  comm rows give MB per token; MoE dispatch/combine volumes depend on routing and placement.\n";
  return out;
}

std::string show_json(const models::ModelSpec& m, const ModelShowOptions& o) {
  const models::ParamCounts p = models::param_counts(m);
  const models::FlopsPerToken causal = models::model_flops_per_token(m, o.seq_len, true);
  const models::FlopsPerToken full = models::model_flops_per_token(m, o.seq_len, false);
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["model"] = m.name;
  j["source"] = m.source;
  j["parameters"] = {{"total", p.total()},           {"activated", p.activated()},
                     {"embedding", p.embedding},      {"head", p.head},
                     {"layers", p.layers_total},      {"layers_activated", p.layers_activated},
                     {"mtp", p.mtp_total},            {"mtp_activated", p.mtp_activated}};
  j["flops_per_token"] = {{"seq_len", o.seq_len},
                          {"causal", causal.total()},
                          {"causal_linear", causal.linear},
                          {"causal_attention", causal.attention},
                          {"full", full.total()},
                          {"mtp_causal", causal.mtp}};
  j["op_context"] = {{"micro_batch", o.micro_batch}, {"seq_len", o.seq_len}, {"tp", o.tp}, {"ep", o.ep}, {"fp8", o.fp8}};
  nlohmann::ordered_json tables = nlohmann::ordered_json::array();
  for (const Table& t : op_tables(m, o)) {
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const LayerOp& op : t.ops) {
      nlohmann::ordered_json e = {{"pass", models::pass_name(op.pass)}, {"op", op.name},
                                  {"block", models::block_name(op.block)}, {"flops", op.flops},
                                  {"model_flops", op.model_flops},         {"hbm_bytes", op.hbm_bytes}};
      if (op.kind == models::LayerOpKind::kGemm)
        e["gemm"] = {{"m", op.gemm.m}, {"n", op.gemm.n}, {"k", op.gemm.k}, {"groups", op.gemm.groups},
                     {"dtype", sim::dtype_name(op.gemm.dtype)}};
      if (op.kind == models::LayerOpKind::kGemm && op.gemm.dtype == sim::DType::kFp8)
        e["gemm"]["fp8_scaling"] = sim::fp8_scaling_name(op.gemm.scaling);
      if (op.kind == models::LayerOpKind::kComm) {
        e["comm"] = models::comm_op_name(op.comm);
        e["comm_bytes"] = op.comm_bytes;
      }
      if (op.recompute) e["recompute"] = true;
      ops.push_back(std::move(e));
    }
    tables.push_back({{"title", t.title}, {"ops", std::move(ops)}});
  }
  j["op_tables"] = std::move(tables);
  return j.dump(2) + "\n";
}

}  // namespace

std::string model_list() {
  std::string out = fmt::format("{:<14} {:>10} {:>11} {:>7} {:>8}  {}\n", "model", "params B", "activated B", "layers",
                                "hidden", "description");
  for (const models::ModelSpec& m : models::zoo_models()) {
    const models::ParamCounts p = models::param_counts(m);
    out += fmt::format("{:<14} {:>10.1f} {:>11.1f} {:>7} {:>8}  {}\n", m.name, gb(p.total()), gb(p.activated()),
                       m.layers, m.hidden, m.description);
  }
  return out;
}

std::string model_show(const models::ModelSpec& m, const ModelShowOptions& o) {
  return o.json ? show_json(m, o) : show_console(m, o);
}

}  // namespace cs::reports
