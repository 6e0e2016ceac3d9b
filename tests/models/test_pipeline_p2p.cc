// `pipeline.p2p`: stage-boundary sends as communication kernels (sms) or by the copy engine
// (copy_engine), which holds no SM; and communication partitions of 0 SMs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "hw/user_error.h"
#include "models/model_workload.h"
#include "models/op_workload.h"
#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "tiny_moe_scenario.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::models;

namespace {

// A small dense model on two H100s of one switch, pp 2. Line 6 is `sm_partitions`, line 13
// `pipeline` (its map at column 13).
std::string dense(const std::string& partitions, const std::string& pipeline) {
  return R"(schema_version: 1
name: p2p
cluster:
  gpu: h100
  gpus: 2
  sm_partitions: )" + partitions + R"(
workload:
  kind: model
  model: {name: d, source: test, layers: 4, hidden: 1024, vocab: 8000, norm: rmsnorm, attention: {kind: gqa, heads: 8, kv_heads: 2, head_dim: 128}, ffn: {activation: swiglu, hidden: 4096}}
  layout: {tp: 1, dp: 1, pp: 2}
  seq_len: 2048
  precision: bf16_mixed
  pipeline: )" + pipeline + "\n";
}

// The same on 4 GPUs with two data-parallel replicas (GPUs 0 and 1 rank 0, 2 and 3 rank 1).
std::string two_replicas(std::string text) {
  text.replace(text.find("gpus: 2"), 7, "gpus: 4");
  text.replace(text.find("dp: 1"), 5, "dp: 2");
  return text;
}

const std::string kCopyEngine = "{schedule: 1f1b, micro_batches: 4, p2p: copy_engine}";
const std::string kSms = "{schedule: 1f1b, micro_batches: 4, p2p: sms}";

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "p.yaml");
  } catch (const cs::hw::UserError& e) {
    return e.what();
  }
  return "";
}

cs::sim::Time pipeline_end(const RunResult& r) {
  REQUIRE(r.step);
  cs::sim::Time end;
  for (const RankStepTimes& t : r.step->ranks) end = std::max(end, t.pipeline_end);
  return end;
}

const ResourceBusy* find(const RunResult& r, const std::string& name) {
  for (const ResourceBusy& b : r.resources)
    if (b.resource == name) return &b;
  return nullptr;
}

}  // namespace

TEST_CASE("pipeline.p2p: sms by default, copy_engine when asked, anything else refused at the key", "[pipeline_p2p]") {
  const auto p2p = [](const std::string& pipeline) {
    return load_scenario_text(dense("{compute: 112, comm: 20}", pipeline), "p.yaml").model->pipeline_p2p;
  };
  CHECK(p2p("{schedule: 1f1b, micro_batches: 4}") == cs::sim::Mover::kSms);
  CHECK(p2p(kSms) == cs::sim::Mover::kSms);
  CHECK(p2p(kCopyEngine) == cs::sim::Mover::kCopyEngine);
  CHECK(error_of(dense("{compute: 112, comm: 20}", "{schedule: 1f1b, micro_batches: 4, p2p: dma}")) ==
        "p.yaml:13:53: 'workload.pipeline.p2p' must be one of sms, copy_engine, found 'dma'; did you mean 'sms'?");
  CHECK(error_of(dense("{compute: 112, comm: 20}", "{schedule: 1f1b, micro_batches: 4, p2p: copy-engine}")) ==
        "p.yaml:13:53: 'workload.pipeline.p2p' must be one of sms, copy_engine, found 'copy-engine'; did you mean "
        "'copy_engine'?");
}

TEST_CASE("pipeline.p2p: copy_engine is refused where a stage boundary leaves its node", "[pipeline_p2p]") {
  // Two HGX nodes, pp 2: each pipeline's two ranks sit on different nodes. Line 18 is `pipeline`.
  const std::string text = cs::test::tiny_moe_on_fat_tree(2, "{pp: 2, dp: 8, ep: 8}", "full", 1024,
                                                          "  pipeline: {schedule: 1f1b, micro_batches: 4, p2p: copy_engine}\n");
  CHECK(error_of(text) ==
        "p.yaml:18:53: copy_engine sends stage boundaries between GPUs of one node (peer copies over NVLink), but "
        "pipeline ranks 0 and 1 sit on GPUs 0 and 8 of different nodes (8 GPUs each); use p2p: sms");
  // The same layout with kernels for sends loads.
  CHECK(error_of(cs::test::tiny_moe_on_fat_tree(2, "{pp: 2, dp: 8, ep: 8}", "full", 1024,
                                                "  pipeline: {schedule: 1f1b, micro_batches: 4, p2p: sms}\n")) == "");
}

TEST_CASE("pipeline.p2p: copy-engine sends hold no SMs and end the step sooner", "[pipeline_p2p]") {
  const Scenario ce = load_scenario_text(dense("{compute: 112, comm: 20}", kCopyEngine), "p.yaml");
  const Scenario sms = load_scenario_text(dense("{compute: 112, comm: 20}", kSms), "p.yaml");
  const OpWorkload w = build_op_workload(ce);
  size_t sends = 0;
  for (const cs::sim::Op& op : w.graph.ops()) {
    const bool send = w.graph.label(op).rfind("pp.send_", 0) == 0;
    sends += send;
    CHECK(w.graph.by_copy_engine(op) == send);  // the stage boundaries only, nothing else
  }
  CHECK(sends == 2 * 4);  // 4 micro-batches, one boundary, each way
  // The send streams keep a real partition name (the communication partition), SMs held or not.
  REQUIRE(w.stream_partitions.size() == 3);
  CHECK(w.stream_partitions[2] == "comm");
  CHECK(build_op_workload(sms).stream_partitions[2] == "comm");

  const RunResult r_ce = run_scenario(ce, w);
  const RunResult r_sms = run_scenario(sms);
  // With dp 1 and tp 1 the sends are the only communication: as kernels they keep the comm SMs
  // busy, by the copy engine not at all, though the pp_p2p stream still took time.
  REQUIRE(find(r_sms, "comm SMs"));
  CHECK(find(r_sms, "comm SMs")->mean_share > 0);
  const ResourceBusy* comm_ce = find(r_ce, "comm SMs");
  REQUIRE(comm_ce);
  CHECK(comm_ce->max_share == 0);
  CHECK(r_ce.streams.at(2).busy_max > cs::sim::Time());
  // Results tell the mover apart from the partition: only the send stream's ops are copy-engine sends.
  CHECK(r_ce.streams.at(2).partition == "comm");
  CHECK(r_ce.streams.at(2).mover == cs::sim::Mover::kCopyEngine);
  CHECK(r_ce.streams.at(0).mover == cs::sim::Mover::kSms);
  CHECK(r_ce.streams.at(1).mover == cs::sim::Mover::kSms);
  CHECK(r_sms.streams.at(2).mover == cs::sim::Mover::kSms);
  // A 16 MiB boundary at NVLink's 450 GB/s instead of 20 SMs x 7.65 GB/s (the roofline's figures),
  // on the critical path of every micro-batch.
  CHECK(pipeline_end(r_ce) < pipeline_end(r_sms));
  // No kernel on the communication SMs, so no profile warning about their count either.
  for (const std::string& warning : r_ce.cost_warnings) CHECK(warning.find("communication ops") == std::string::npos);
}

TEST_CASE("pipeline.p2p: batched NCCL sends wait for the receiver and hold the sender, copies do neither",
          "[pipeline_p2p]") {
  // dualpipe.py (and dualpipev.py) commit their sends and receives in batches, and Megatron's 1F1B
  // makes each p2p call one, waited for before the next chunk (models/pipeline_rendezvous.h): with
  // NCCL kernels (sms) a send moves once the receiver posted its receive, and the sender's next
  // task (or its optimizer step) waits for it. Our bench's cudaMemcpyPeerAsync copies
  // (copy_engine) need no receiver and hold no sender.
  for (const std::string schedule : {"dualpipe", "dualpipev", "1f1b", "interleaved"})
    for (const bool nccl : {true, false}) {
      INFO(schedule << ", " << (nccl ? "sms" : "copy_engine"));
      const Scenario sc = load_scenario_text(
          dense("{compute: 112, comm: 20}",
                "{schedule: " + schedule + ", micro_batches: 4, p2p: " + (nccl ? "sms}" : "copy_engine}")),
          "p.yaml");
      const OpWorkload w = build_op_workload(sc);
      const cs::sim::OpGraph& g = w.graph;
      const auto gpu = [&](uint32_t op) { return g.streams()[g.ops()[op].stream].gpu; };
      const cs::sim::OpLists dependents = g.dependents_of_each(), deps_of = g.deps_of_each();
      size_t sends = 0, wait_for_receiver = 0;
      for (uint32_t i = 0; i < g.ops().size(); ++i) {
        if (g.label(g.ops()[i]).rfind("pp.send_", 0) != 0) continue;
        ++sends;
        const int src = gpu(i), dst = 1 - src;
        const auto deps = deps_of.of(i), waiting = dependents.of(i);
        wait_for_receiver += std::any_of(deps.begin(), deps.end(), [&](uint32_t d) { return gpu(d) == dst; });
        CHECK(std::any_of(waiting.begin(), waiting.end(), [&](uint32_t j) { return gpu(j) == src; }) == nccl);
        CHECK(std::any_of(waiting.begin(), waiting.end(), [&](uint32_t j) { return gpu(j) == dst; }));
      }
      // DualPipe: 2 micro-batches per direction, each over the one boundary forward and back.
      // DualPipeV: 4 micro-batches over two boundaries (stage 0 to 1 and 2 to 3), each way; the
      // turn (stages 1 to 2) stays on rank 1. 1F1B: 4 micro-batches over one boundary, each way.
      // Interleaved (2 virtual stages): 4 micro-batches over the three boundaries of 4 model
      // stages, each way (stage 1 to 2 wraps from rank 1 back to rank 0; Megatron itself refuses
      // interleaving on 2 ranks without overlap, the rendezvous runs it all the same).
      CHECK(sends == (schedule == "dualpipev" ? 4 * 2 * 2 : schedule == "interleaved" ? 4 * 3 * 2 : 2 * 2 * 2));
      // Every send waits for its receiver, but where the receiver posts its receive before its
      // first chunk (rank 1's micro-batch 0 in DualPipeV, 1F1B and interleaved): nothing ran there
      // to wait for.
      CHECK(wait_for_receiver == (nccl ? sends - (schedule == "dualpipe" ? 0 : 1) : 0));
      const RunResult r = run_scenario(sc, w);  // a deadlock would throw
      CHECK(pipeline_end(r) > cs::sim::Time());
    }
}

TEST_CASE("pipeline.p2p: with two data-parallel replicas each rendezvous pairs a GPU with its own replica's peer",
          "[pipeline_p2p]") {
  // pp 2 x dp 2 on 4 GPUs, every GPU simulated: rank 0 is GPUs 0 and 1, rank 1 GPUs 2 and 3
  // (dp before pp); replica d's boundary runs between GPUs d and 2 + d, and its rendezvous waits
  // on those two GPUs only.
  const Scenario sc = load_scenario_text(
      two_replicas(dense("{compute: 112, comm: 20}", "{schedule: dualpipe, micro_batches: 4, p2p: sms}")), "p.yaml");
  REQUIRE(sc.model->simulated_dp() == 2);
  const OpWorkload w = build_op_workload(sc);
  const cs::sim::OpGraph& g = w.graph;
  const cs::sim::OpLists deps_of = g.deps_of_each();
  const auto gpu = [&](uint32_t op) { return g.streams()[g.ops()[op].stream].gpu; };
  size_t sends = 0;
  for (uint32_t i = 0; i < g.ops().size(); ++i) {
    if (g.label(g.ops()[i]).rfind("pp.send_", 0) != 0) continue;
    ++sends;
    const int src = gpu(i), peer = (src + 2) % 4;
    bool waits_for_peer = false;
    for (const uint32_t d : deps_of.of(i)) {
      CHECK((gpu(d) == src || gpu(d) == peer));
      waits_for_peer = waits_for_peer || gpu(d) == peer;
    }
    CHECK(waits_for_peer);
  }
  CHECK(sends == 2 * (2 * 2 * 2));  // two replicas, each as the one-replica case
  CHECK(pipeline_end(run_scenario(sc, w)) > cs::sim::Time());
}

TEST_CASE("pipeline.p2p: batches posted at one point of a 1F1B rank move one after the other", "[pipeline_p2p]") {
  // pp 3: rank 1 warms up with one forward, then Megatron posts send_forward(A0) and, as a call of
  // its own, recv_forward(A1) before the steady phase. Both batches sit after that forward, so the
  // transfer of A1 (GPU 0 to 1) waits for the transfer of A0 (GPU 1 to 2).
  std::string text = dense("{compute: 112, comm: 20}", kSms);
  text.replace(text.find("gpus: 2"), 7, "gpus: 3");
  text.replace(text.find("pp: 2"), 5, "pp: 3");
  const OpWorkload w = build_op_workload(load_scenario_text(text, "p.yaml"));
  const cs::sim::OpGraph& g = w.graph;
  // The n-th activation send on the stream from GPU src to GPU dst.
  const auto nth_send = [&](int src, int dst, size_t n) -> uint32_t {
    const std::string name = "pp_p2p to gpu " + std::to_string(dst) + ", activations";
    for (const auto& st : g.streams())
      if (st.gpu == src && st.name == name) {
        REQUIRE(st.ops.size() > n);
        return st.ops[n];
      }
    FAIL("no stream " << name << " on gpu " << src);
    return 0;
  };
  const cs::sim::OpLists deps_of = g.deps_of_each();
  const auto depends = [&](uint32_t op, uint32_t on) {
    const auto deps = deps_of.of(op);
    return std::find(deps.begin(), deps.end(), on) != deps.end();
  };
  CHECK(depends(nth_send(0, 1, 1), nth_send(1, 2, 0)));
  // A0's own transfer was posted first: it waits for no later batch of rank 1.
  CHECK_FALSE(depends(nth_send(1, 2, 0), nth_send(0, 1, 1)));
  CHECK(pipeline_end(run_scenario(load_scenario_text(text, "p.yaml"), w)) > cs::sim::Time());
}

TEST_CASE("pipeline.p2p: a 1F1B rank's last gradient send holds its gradient reduction", "[pipeline_p2p]") {
  // Megatron's last send_backward comes after the rank's last backward; with two replicas the
  // reduce-scatter of rank 1's gradients waits for that transfer (RankStreams::after), not only for
  // the rank's compute and all-to-all streams.
  const Scenario sc = load_scenario_text(two_replicas(dense("{compute: 112, comm: 20}", kSms)), "p.yaml");
  REQUIRE(sc.model->simulated_dp() == 2);
  const OpWorkload w = build_op_workload(sc);
  const cs::sim::OpGraph& g = w.graph;
  const cs::sim::OpLists deps_of = g.deps_of_each();
  size_t held = 0;
  for (const auto& st : g.streams()) {
    if (st.name.find(", gradients") == std::string::npos || st.ops.empty()) continue;
    const uint32_t last_send = st.ops.back();
    bool holds = false;
    for (uint32_t i = 0; i < g.ops().size(); ++i)
      if (g.label(g.ops()[i]) == "optimizer.reduce_scatter_grads" && g.streams()[g.ops()[i].stream].gpu == st.gpu) {
        const auto deps = deps_of.of(i);
        holds = holds || std::find(deps.begin(), deps.end(), last_send) != deps.end();
      }
    CHECK(holds);
    held += holds;
  }
  CHECK(held == 2);  // rank 1's two GPUs send gradients back, one per replica
}

TEST_CASE("sm_partitions: a communication partition of 0 SMs lends its kernels the compute SMs", "[pipeline_p2p]") {
  // Copy-engine sends need no SM: the compute partition keeps all 132.
  const Scenario ce = load_scenario_text(dense("{compute: 132, comm: 0}", kCopyEngine), "p.yaml");
  const RunResult r_ce = run_scenario(ce);
  CHECK(find(r_ce, "comm SMs") == nullptr);
  // Sends as kernels run on the compute partition's SMs, as `clustersim sweep` runs comm_sms 0.
  const Scenario sms = load_scenario_text(dense("{compute: 132, comm: 0}", kSms), "p.yaml");
  const OpWorkload w = build_op_workload(sms);
  CHECK(w.stream_partitions[1] == "compute");
  CHECK(w.stream_partitions[2] == "compute");
  for (uint32_t s : w.engine_streams[2]) CHECK(w.graph.streams()[s].partition == sms.model->compute_partition);
  const RunResult r_sms = run_scenario(sms, w);  // no deadlock: the sends get SMs
  CHECK(find(r_sms, "comm SMs") == nullptr);
  CHECK(pipeline_end(r_ce) < pipeline_end(r_sms));
  // The compute partition cannot be the one without SMs.
  CHECK(error_of(dense("{compute: 0, comm: 132}", kCopyEngine)) ==
        "p.yaml:6:28: the compute partition 'compute' has 0 SMs: give it SMs");
}

TEST_CASE("sm_partitions: an ops stream may not run on a partition of 0 SMs", "[pipeline_p2p]") {
  CHECK(error_of(R"(schema_version: 1
name: zero
cluster: {gpu: h100, gpus: 2, sm_partitions: {compute: 132, comm: 0}}
workload:
  kind: ops
  streams:
    - {name: a, gpus: all, partition: compute, ops: [{gemm: {m: 1024, n: 1024, k: 1024}}]}
    - {name: b, gpus: all, partition: comm, ops: [{all_reduce: {size_MiB: 1}}]}
)") == "p.yaml:8:39: partition 'comm' has 0 SMs (cluster.sm_partitions): the kernels of stream 'b' would never run");
}

}  // namespace CS_TEST_FILE
