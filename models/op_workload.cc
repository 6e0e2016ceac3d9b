#include "models/op_workload.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <string>
#include <utility>

#include "hw/user_error.h"
#include "models/model_workload.h"

namespace cs::models {

namespace {

[[noreturn]] void fail_at(const Scenario& sc, SourcePos p, const std::string& msg) {
  throw hw::UserError(sc.file, p.line, p.col, msg);
}

struct Origin {
  const OpSpec* spec = nullptr;
  bool first_repeat = false;
};

// Kahn's algorithm over ops, with each collective's ops merged into one node. Returns an op left
// over when a cycle exists, else UINT32_MAX.
uint32_t find_cycle(const sim::OpGraph& g, const std::vector<Origin>& origin) {
  const auto& ops = g.ops();
  const size_t n_ops = ops.size();
  auto node_of = [&](uint32_t op) -> size_t {
    return ops[op].kind == sim::OpKind::kComm ? n_ops + ops[op].payload : op;
  };
  const size_t n_nodes = n_ops + g.collectives().size();
  std::vector<uint32_t> indegree(n_nodes, 0);
  std::vector<std::vector<uint32_t>> out(n_nodes);
  auto edge = [&](uint32_t from_op, uint32_t to_op) {
    out[node_of(from_op)].push_back(static_cast<uint32_t>(node_of(to_op)));
    ++indegree[node_of(to_op)];
  };
  for (const auto& s : g.streams())
    for (size_t i = 1; i < s.ops.size(); ++i) edge(s.ops[i - 1], s.ops[i]);
  std::vector<char> waits(n_ops, 0);  // ops with an explicit dependency
  for (const sim::DepEdge& d : g.deps()) {
    edge(d.earlier, d.later);
    waits[d.later] = 1;
  }
  std::vector<uint32_t> ready;
  for (uint32_t v = 0; v < n_nodes; ++v)
    if (indegree[v] == 0) ready.push_back(v);
  size_t seen = 0;
  while (!ready.empty()) {
    const uint32_t v = ready.back();
    ready.pop_back();
    ++seen;
    for (uint32_t w : out[v])
      if (--indegree[w] == 0) ready.push_back(w);
  }
  if (seen == n_nodes) return UINT32_MAX;
  // Name an op in the cycle that has an explicit dependency: that is where the user can break it.
  for (uint32_t o = 0; o < n_ops; ++o)
    if (indegree[node_of(o)] > 0 && waits[o] && origin[o].spec) return o;
  for (uint32_t o = 0; o < n_ops; ++o)
    if (indegree[node_of(o)] > 0) return o;
  return UINT32_MAX;
}

}  // namespace

void OpPositions::assign(size_t ops, SourcePos pos) {
  first_.clear();
  pos_.clear();
  ops_ = 0;
  if (ops == 0) return;
  first_.push_back(0);
  pos_.push_back(pos);
  ops_ = ops;
}

void OpPositions::push_back(SourcePos pos) {
  if (pos_.empty() || pos_.back().line != pos.line || pos_.back().col != pos.col) {
    first_.push_back(static_cast<uint32_t>(ops_));
    pos_.push_back(pos);
  }
  ++ops_;
}

SourcePos OpPositions::operator[](uint32_t op) const {
  assert(op < ops_);
  return pos_[std::upper_bound(first_.begin(), first_.end(), op) - first_.begin() - 1];
}

OpWorkload build_op_workload(const Scenario& sc) {
  if (sc.model) return build_model_workload(*sc.model, sc.cluster);
  OpWorkload w;
  sim::OpGraph& g = w.graph;
  std::vector<Origin> origin;
  // Ids are unique per GPU; `after` refers to the last repetition of the op with that id.
  std::map<std::pair<int, std::string>, const OpSpec*> id_owner;
  for (const StreamSpec& s : sc.streams)
    for (const OpSpec& op : s.ops)
      if (!op.id.empty())
        for (int gpu : s.gpus) {
          auto [it, fresh] = id_owner.emplace(std::make_pair(gpu, op.id), &op);
          if (!fresh)
            fail_at(sc, op.pos, "op id '" + op.id + "' is already used on GPU " + std::to_string(gpu) +
                                    " (line " + std::to_string(it->second->pos.line) + ")");
        }
  std::map<std::pair<int, std::string>, uint32_t> last_with_id;
  struct Pending {
    uint32_t op;
    int gpu;
    const OpSpec* spec;
  };
  std::vector<Pending> needs_deps;

  auto note = [&](uint32_t op, const OpSpec& spec, bool first) {
    if (origin.size() <= op) origin.resize(op + 1);
    origin[op] = Origin{&spec, first};
  };

  for (const StreamSpec& s : sc.streams) {
    std::vector<sim::StreamId> ids;
    std::vector<uint32_t> engine_ids;
    for (int gpu : s.gpus) {
      ids.push_back(g.add_stream(gpu, s.partition_index, s.name));
      engine_ids.push_back(ids.back().v);
    }
    w.engine_streams.push_back(engine_ids);
    w.stream_names.push_back(s.name);
    w.stream_partitions.push_back(s.partition);
    const auto n = static_cast<int>(s.gpus.size());
    for (const OpSpec& op : s.ops) {
      for (int64_t r = 0; r < op.repeat; ++r) {
        std::vector<uint32_t> made;  // one per GPU of the stream, in its order
        switch (op.type) {
          case OpType::kGemm:
            for (auto id : ids) made.push_back(g.add_gemm(id, op.gemm, op.label).v);
            break;
          case OpType::kCompute:
            for (auto id : ids) made.push_back(g.add_compute(id, op.compute, op.label).v);
            break;
          case OpType::kCollective:
            for (auto id : g.add_collective(op.collective, op.size_bytes, ids, op.label)) made.push_back(id.v);
            break;
          case OpType::kSend:
            for (int i = 0; i < n; ++i) {
              const int dst = op.send_to >= 0 ? op.send_to : s.gpus[((i + op.send_peer_offset) % n + n) % n];
              made.push_back(g.add_send(ids[i], dst, op.size_bytes, op.label).v);
            }
            break;
        }
        for (size_t i = 0; i < made.size(); ++i) {
          note(made[i], op, r == 0);
          if (r == 0 && !op.after.empty()) needs_deps.push_back({made[i], s.gpus[i], &op});
        }
        if (!op.id.empty() && r + 1 == op.repeat)
          for (size_t i = 0; i < made.size(); ++i) last_with_id[{s.gpus[i], op.id}] = made[i];
      }
    }
  }

  for (const Pending& p : needs_deps) {
    for (const DepRef& ref : p.spec->after) {
      const int gpu = ref.gpu >= 0 ? ref.gpu : p.gpu;
      auto it = last_with_id.find({gpu, ref.op});
      if (it == last_with_id.end())
        fail_at(sc, ref.pos, "'after' names op '" + ref.op + "', but no op with that id runs on GPU " +
                                 std::to_string(gpu));
      if (it->second == p.op) fail_at(sc, ref.pos, "op '" + ref.op + "' cannot wait for itself");
      g.add_dep(sim::OpId{p.op}, sim::OpId{it->second});
    }
  }

  const uint32_t stuck = find_cycle(g, origin);
  if (stuck != UINT32_MAX) {
    const OpSpec* spec = origin[stuck].spec;
    const SourcePos pos = !spec->after.empty() ? spec->after.front().pos : spec->pos;
    fail_at(sc, pos, "dependency cycle: op '" + spec->label + "' waits, through 'after', for ops that wait for it");
  }
  for (const Origin& o : origin) w.op_pos.push_back(o.spec->pos);
  return w;
}

}  // namespace cs::models
