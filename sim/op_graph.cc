#include "sim/op_graph.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <stdexcept>

#include "sim/word_hash.h"

namespace cs::sim {

int dtype_bytes(DType t) {
  switch (t) {
    case DType::kFp8: return 1;
    case DType::kBf16: return 2;
    case DType::kFp16: return 2;
    case DType::kFp32: return 4;
  }
  return 0;
}

const char* fp8_scaling_name(Fp8Scaling s) {
  return s == Fp8Scaling::kTiles ? "1x128x1x128" : "1x128x128x128";
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFp8: return "fp8";
    case DType::kBf16: return "bf16";
    case DType::kFp16: return "fp16";
    case DType::kFp32: return "fp32";
  }
  return "?";
}

std::optional<MemoryForm> memory_form_from_name(const std::string& name) {
  for (int f = 0; f < kMemoryForms; ++f)
    if (name == memory_form_name(static_cast<MemoryForm>(f))) return static_cast<MemoryForm>(f);
  return std::nullopt;
}

const char* memory_form_name(MemoryForm f) {
  switch (f) {
    case MemoryForm::kAny: return "any";
    case MemoryForm::kNorm: return "norm_fwd";
    case MemoryForm::kNormBackward: return "norm_bwd";
    case MemoryForm::kActivation: return "activation_fwd";
    case MemoryForm::kActivationBackward: return "activation_bwd";
    case MemoryForm::kRope: return "rope_fwd";
    case MemoryForm::kRopeBackward: return "rope_bwd";
    case MemoryForm::kResidualAdd: return "residual_add";
    case MemoryForm::kLayoutCopy: return "layout_copy";
    case MemoryForm::kConcat: return "concat";
    case MemoryForm::kEmbedding: return "embedding_fwd";
    case MemoryForm::kEmbeddingBackward: return "embedding_bwd";
    case MemoryForm::kLoss: return "loss_fwd";
    case MemoryForm::kLossBackward: return "loss_bwd";
  }
  return "?";
}

const char* collective_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllToAll: return "all_to_all";
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kSend: return "send";
    case CollectiveKind::kAllToAllV: return "all_to_all_v";
  }
  return "?";
}

StreamId OpGraph::add_stream(int gpu, int partition, std::string name) {
  if (streams_.size() >= (size_t{1} << 30)) throw std::length_error("op graph: more than 2^30 streams");
  streams_.push_back(Stream{gpu, partition, std::move(name), {}});
  return StreamId{static_cast<uint32_t>(streams_.size() - 1)};
}

uint32_t OpGraph::intern(std::string_view label) {
  // The same op on every GPU comes in a row: the last label first, then the index of all.
  if (!labels_.empty() && labels_.back() == label) return static_cast<uint32_t>(labels_.size() - 1);
  if (const auto it = label_index_.find(label); it != label_index_.end()) return it->second;
  const auto id = static_cast<uint32_t>(labels_.size());
  labels_.emplace_back(label);
  label_index_.emplace(labels_.back(), id);
  return id;
}

uint32_t OpGraph::add_op(StreamId s, OpKind kind, uint32_t payload, std::string_view label) {
  assert(s.v < streams_.size());
  const auto id = static_cast<uint32_t>(ops_.size());
  ops_.push_back(Op{kind, s.v, intern(label), payload});
  streams_[s.v].ops.push_back(id);
  return id;
}

namespace {

uint64_t bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

size_t mix(std::initializer_list<uint64_t> words) {
  return static_cast<size_t>(hash_words(std::span(words.begin(), words.size())));
}

// The index of `v` in `list`, appended the first time it is seen.
template <typename T, typename Index>
uint32_t interned(const T& v, std::vector<T>& list, Index& index) {
  const auto [it, fresh] = index.emplace(v, static_cast<uint32_t>(list.size()));
  if (fresh) list.push_back(v);
  return it->second;
}

}  // namespace

size_t OpGraph::PayloadHash::operator()(const GemmShape& g) const {
  return mix({uint64_t(g.m), uint64_t(g.n), uint64_t(g.k), uint64_t(g.dtype), uint64_t(uint32_t(g.groups)),
              uint64_t(g.scaling)});
}

size_t OpGraph::PayloadHash::operator()(const GenericCompute& c) const {
  return mix({bits(c.flops), bits(c.bytes), uint64_t(c.dtype) | uint64_t(c.kind) << 8 | uint64_t(c.form) << 16,
              uint64_t(uint32_t(c.head_dim_qk)) | uint64_t(uint32_t(c.head_dim_v)) << 32});
}

bool OpGraph::PayloadSame::operator()(const GemmShape& a, const GemmShape& b) const {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.dtype == b.dtype && a.groups == b.groups && a.scaling == b.scaling;
}

bool OpGraph::PayloadSame::operator()(const GenericCompute& a, const GenericCompute& b) const {
  return bits(a.flops) == bits(b.flops) && bits(a.bytes) == bits(b.bytes) && a.dtype == b.dtype && a.kind == b.kind &&
         a.form == b.form && a.head_dim_qk == b.head_dim_qk && a.head_dim_v == b.head_dim_v;
}

OpId OpGraph::add_gemm(StreamId s, const GemmShape& shape, std::string_view label) {
  return OpId{add_op(s, OpKind::kGemm, interned(shape, gemms_, gemm_index_), label)};
}

OpId OpGraph::add_compute(StreamId s, const GenericCompute& c, std::string_view label) {
  return OpId{add_op(s, OpKind::kCompute, interned(c, computes_, compute_index_), label)};
}

std::vector<OpId> OpGraph::add_collective(CollectiveKind kind, double bytes,
                                          const std::vector<StreamId>& streams,
                                          std::string_view label) {
  assert(kind != CollectiveKind::kSend);
  // A throw, not an assert: in a release build a V without transfers would silently move nothing.
  if (kind == CollectiveKind::kAllToAllV)
    throw std::invalid_argument("all_to_all_v needs its transfers: use add_all_to_all_v");
  const auto c = static_cast<uint32_t>(collectives_.size());
  Collective col{kind, bytes, {}, {}, UINT32_MAX};
  std::vector<OpId> out;
  for (StreamId s : streams) {
    col.gpus.push_back(streams_[s.v].gpu);
    const uint32_t op = add_op(s, OpKind::kComm, c, label);
    col.ops.push_back(op);
    out.push_back(OpId{op});
  }
  collectives_.push_back(std::move(col));
  return out;
}

OpId OpGraph::add_send(StreamId src, int dst_gpu, double bytes, std::string_view label, Mover mover, uint32_t images) {
  std::vector<int> gpus{streams_[src.v].gpu, dst_gpu};
  const uint32_t list = images == kNoImages ? UINT32_MAX : image_list(gpus, {dst_gpu}, {images});
  const auto c = static_cast<uint32_t>(collectives_.size());
  const uint32_t op = add_op(src, OpKind::kComm, c, label);
  Collective col{CollectiveKind::kSend, bytes, std::move(gpus), {op}, UINT32_MAX, mover};
  col.image_list = list;
  collectives_.push_back(std::move(col));
  return OpId{op};
}

uint32_t OpGraph::add_images(std::vector<GpuPair> images) {
  std::sort(images.begin(), images.end());
  images.erase(std::unique(images.begin(), images.end()), images.end());
  return image_sets_.add(images);
}

uint32_t OpGraph::image_list(const std::vector<int>& gpus, const std::vector<int>& dst_gpus,
                             const std::vector<uint32_t>& images) {
  if (images.empty()) return UINT32_MAX;
  if (images.size() != dst_gpus.size()) throw std::invalid_argument("put: one image set per destination");
  for (size_t i = 0; i < dst_gpus.size(); ++i) {  // every check before anything is stored
    if (images[i] == kNoImages) continue;
    if (images[i] >= image_sets_.sets()) throw std::invalid_argument("put: unknown image set");
    const std::span<const GpuPair> set = image_sets_.get(images[i]);
    if (!std::binary_search(set.begin(), set.end(), GpuPair{gpus[0], dst_gpus[i]}))
      throw std::invalid_argument("put: an image set without the transfer it stands for");
  }
  std::vector<uint32_t> list(gpus.size() - 1, kNoImages);
  for (size_t i = 0; i < dst_gpus.size(); ++i) {
    if (images[i] == kNoImages) continue;
    const std::span<const GpuPair> set = image_sets_.get(images[i]);
    uint32_t& at = list[std::find(gpus.begin() + 1, gpus.end(), dst_gpus[i]) - gpus.begin() - 1];
    if (at == kNoImages || at == images[i]) {
      at = images[i];
    } else {  // a destination listed twice: its transfers are summed, and so are their images
      std::vector<GpuPair> both(set.begin(), set.end());
      const std::span<const GpuPair> had = image_sets_.get(at);
      both.insert(both.end(), had.begin(), had.end());
      at = add_images(std::move(both));
    }
  }
  return image_lists_.add(list);
}

OpId OpGraph::add_put(StreamId src, const std::vector<int>& dst_gpus, const std::vector<double>& bytes,
                      std::string_view label, double paced_bytes, const std::vector<uint32_t>& images) {
  if (src.v >= streams_.size()) throw std::invalid_argument("put: unknown stream");
  if (!(paced_bytes >= 0) || !std::isfinite(paced_bytes))
    throw std::invalid_argument("put: paced bytes must be finite and >= 0");
  if (dst_gpus.size() != bytes.size()) throw std::invalid_argument("put: one size per destination");
  // Participants: the source as rank 0, then each distinct destination.
  std::vector<int> gpus{streams_[src.v].gpu};
  std::vector<Transfer> transfers;
  for (size_t i = 0; i < dst_gpus.size(); ++i) {
    const auto it = std::find(gpus.begin(), gpus.end(), dst_gpus[i]);
    const auto rank = static_cast<uint32_t>(it - gpus.begin());
    if (rank == 0) throw std::invalid_argument("put: a destination is the source itself");
    if (it == gpus.end()) gpus.push_back(dst_gpus[i]);
    transfers.push_back({0, rank, bytes[i]});
  }
  transfers = normalize_transfers(static_cast<uint32_t>(gpus.size()), std::move(transfers));
  const uint32_t list = image_list(gpus, dst_gpus, images);
  double total = 0;
  for (const Transfer& t : transfers) total += t.bytes;
  const auto c = static_cast<uint32_t>(collectives_.size());
  const uint32_t op = add_op(src, OpKind::kComm, c, label);
  Collective col{CollectiveKind::kAllToAllV,    total,       std::move(gpus), {op},
                 transfer_pool_.add(transfers), Mover::kSms, paced_bytes};
  col.image_list = list;
  collectives_.push_back(std::move(col));
  return OpId{op};
}

std::vector<OpId> OpGraph::add_all_to_all_v(const std::vector<StreamId>& streams, std::vector<Transfer> transfers,
                                            std::string_view label, double paced_bytes) {
  // Everything is checked before the graph changes, so a throw leaves it as it was.
  if (!(paced_bytes >= 0) || !std::isfinite(paced_bytes))
    throw std::invalid_argument("all_to_all_v: paced bytes must be finite and >= 0");
  std::vector<int> gpus;
  for (StreamId s : streams) {
    if (s.v >= streams_.size()) throw std::invalid_argument("all_to_all_v: unknown stream");
    gpus.push_back(streams_[s.v].gpu);
  }
  std::vector<int> sorted = gpus;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw std::invalid_argument("all_to_all_v: two streams on one GPU (routes need src != dst)");
  const auto ranks = static_cast<uint32_t>(streams.size());
  transfers = normalize_transfers(ranks, std::move(transfers));

  std::vector<double> sent(ranks, 0.0);
  for (const Transfer& t : transfers)
    if (t.src != t.dst) sent[t.src] += t.bytes;  // a rank's copy to itself is no traffic
  const double busiest = sent.empty() ? 0.0 : *std::max_element(sent.begin(), sent.end());

  const auto c = static_cast<uint32_t>(collectives_.size());
  Collective col{CollectiveKind::kAllToAllV,    busiest,     std::move(gpus), {},
                 transfer_pool_.add(transfers), Mover::kSms, paced_bytes};
  std::vector<OpId> out;
  for (StreamId s : streams) {
    const uint32_t op = add_op(s, OpKind::kComm, c, label);
    col.ops.push_back(op);
    out.push_back(OpId{op});
  }
  collectives_.push_back(std::move(col));
  return out;
}

namespace {

// The edges `order` lists (indices into `deps`) placed by `key` of each, stably: within an op's
// bucket in the order given. Returns the edge indices in their new order; `begin` gets the buckets.
template <typename Key>
std::vector<uint32_t> bucket(size_t n_ops, const std::vector<DepEdge>& deps, const std::vector<uint32_t>& order,
                             Key key, std::vector<uint32_t>& begin) {
  begin.assign(n_ops + 1, 0);
  for (uint32_t e : order) ++begin[key(deps[e]) + 1];
  for (size_t i = 0; i < n_ops; ++i) begin[i + 1] += begin[i];
  std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
  std::vector<uint32_t> placed(order.size());
  for (uint32_t e : order) placed[fill[key(deps[e])]++] = e;
  return placed;
}

std::vector<uint32_t> added_order(size_t n) {
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  return order;
}

}  // namespace

OpLists::OpLists(const std::vector<uint32_t>& begin, std::vector<uint32_t> list)
    : has_((begin.size() - 1 + 63) / 64, 0), rank_(has_.size(), 0), list_(std::move(list)), ops_(begin.size() - 1) {
  assert(!begin.empty() && begin.back() == list_.size());
  for (size_t op = 0; op < ops_; ++op) {
    if (op % 64 == 0) rank_[op / 64] = static_cast<uint32_t>(begin_.size());
    if (begin[op + 1] == begin[op]) continue;
    has_[op / 64] |= uint64_t{1} << (op % 64);
    begin_.push_back(begin[op]);
  }
  begin_.push_back(static_cast<uint32_t>(list_.size()));
  begin_.shrink_to_fit();
}

OpLists OpGraph::deps_of_each() const {
  std::vector<uint32_t> begin;
  const std::vector<uint32_t> placed = bucket(
      ops_.size(), deps_, added_order(deps_.size()), [](const DepEdge& d) { return d.later; }, begin);
  std::vector<uint32_t> list;
  list.reserve(placed.size());
  for (uint32_t e : placed) list.push_back(deps_[e].earlier);
  return OpLists(begin, std::move(list));
}

OpLists OpGraph::dependents_of_each() const {
  // By waiting op first, then by the op waited for: each op's dependents come out ascending.
  std::vector<uint32_t> begin;
  const std::vector<uint32_t> by_later = bucket(
      ops_.size(), deps_, added_order(deps_.size()), [](const DepEdge& d) { return d.later; }, begin);
  const std::vector<uint32_t> placed = bucket(
      ops_.size(), deps_, by_later, [](const DepEdge& d) { return d.earlier; }, begin);
  std::vector<uint32_t> list;
  list.reserve(placed.size());
  for (uint32_t e : placed) list.push_back(deps_[e].later);
  return OpLists(begin, std::move(list));
}

void OpGraph::shrink_to_fit() {
  ops_.shrink_to_fit();
  deps_.shrink_to_fit();
  collectives_.shrink_to_fit();
  for (Stream& s : streams_) s.ops.shrink_to_fit();
}

void OpGraph::set_image_relabelings(OpId op, const std::vector<std::vector<int>>& relabelings) {
  if (op.v >= ops_.size() || ops_[op.v].kind != OpKind::kComm)
    throw std::invalid_argument("images: not a communication op");
  Collective& c = collectives_[ops_[op.v].payload];
  if (one_sided(c)) throw std::invalid_argument("images: a put or send takes its images per destination");
  std::vector<int> flat = c.gpus;  // kept with them: a set is one collective's
  for (const std::vector<int>& r : relabelings) {
    if (r.size() != c.gpus.size()) throw std::invalid_argument("images: a relabeling of another length");
    flat.insert(flat.end(), r.begin(), r.end());
  }
  c.image_list = relabelings.empty() ? UINT32_MAX : relabelings_.add(flat);
}

void OpGraph::set_grid_sms(OpId op, int sms) {
  if (op.v >= ops_.size() || ops_[op.v].kind != OpKind::kComm)
    throw std::invalid_argument("grid: not a communication op");
  if (sms < 0) throw std::invalid_argument("grid: SMs must be >= 0");
  collectives_[ops_[op.v].payload].grid_sms = sms;
}

}  // namespace cs::sim
