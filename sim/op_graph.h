// An op graph: per-GPU streams of ops, ordered within a stream, with extra dependencies that may
// cross streams and GPUs. Compute ops carry their shape (GEMM m, n, k, dtype) or FLOPs and bytes;
// communication ops belong to a collective whose participants are ops on several GPUs' streams.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/transfer_pool.h"

namespace cs::sim {

enum class DType : uint8_t { kFp8, kBf16, kFp16, kFp32 };
int dtype_bytes(DType t);
const char* dtype_name(DType t);

// How an FP8 GEMM's operands are scaled (DeepSeek-V3 sec. 3.3.2): kWeightBlocks, 1x128 tiles of
// the activation and 128x128 blocks of the weight (forward and input gradient); kTiles, 1x128 tiles
// of both (the weight gradient multiplies two activations). cuBLASLt runs kTiles about 1.3 times
// slower (calibrate/data/h100/fp8_tile_scaling.json). Ignored for other types.
enum class Fp8Scaling : uint8_t { kWeightBlocks, kTiles };
const char* fp8_scaling_name(Fp8Scaling s);  // "1x128x128x128" or "1x128x1x128"

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::kBf16;  // input type; output is written in BF16 (FP32 for FP32 inputs)
  int groups = 1;              // grouped GEMM: `groups` independent problems of this shape
  Fp8Scaling scaling = Fp8Scaling::kWeightBlocks;
};
// What a generic kernel is, for cost models that time kinds apart (hw/calibrated_cost.h).
enum class ComputeKind : uint8_t { kGeneric, kAttentionForward, kAttentionBackward, kMemoryBound };
// The form of a memory-bound kernel, for cost models that measured a rate per form: forms move
// their bytes at different rates (a strided layout copy at about half a contiguous one's, an
// eager norm backward's two kernels slower than a fused forward). kAny: the generic rate.
enum class MemoryForm : uint8_t {
  kAny,
  kNorm,
  kNormBackward,
  kActivation,
  kActivationBackward,
  kRope,
  kRopeBackward,
  kResidualAdd,
  kLayoutCopy,
  kConcat,
  kEmbedding,
  kEmbeddingBackward,
  kLoss,
  kLossBackward,
};
inline constexpr int kMemoryForms = static_cast<int>(MemoryForm::kLossBackward) + 1;
// "norm_fwd", "norm_bwd", ...: the names profiles and measurements use; "any" for kAny.
const char* memory_form_name(MemoryForm f);
// The form of that name; kAny ("any") included; nullopt for none.
std::optional<MemoryForm> memory_form_from_name(const std::string& name);
struct GenericCompute {
  double flops = 0;
  double bytes = 0;  // HBM bytes read plus written
  DType dtype = DType::kBf16;
  ComputeKind kind = ComputeKind::kGeneric;
  MemoryForm form = MemoryForm::kAny;  // kMemoryBound only
  // Attention only: its q/k and v head dims (0: not given). A kernel that takes one head dim for
  // q, k and v runs v padded to q/k's: more FLOPs than `flops` counts (the cost model's to say).
  int32_t head_dim_qk = 0, head_dim_v = 0;
};

// kAllToAllV comes last so the numbering of the others stays as it was.
enum class CollectiveKind : uint8_t { kAllToAll, kAllReduce, kReduceScatter, kAllGather, kSend, kAllToAllV };
const char* collective_name(CollectiveKind k);

struct StreamId {
  uint32_t v = UINT32_MAX;
};
struct OpId {
  uint32_t v = UINT32_MAX;
};

enum class OpKind : uint8_t { kGemm, kCompute, kComm };

struct Stream {
  int gpu = 0;
  int partition = 0;  // index into the GPU's SM pool
  std::string name;
  std::vector<uint32_t> ops;  // in execution order
};

// Twelve bytes (the kind packed beside the stream): a DeepSeek-V3 step at every GPU has 80 M ops.
struct Op {
  OpKind kind : 2 = OpKind::kCompute;
  uint32_t stream : 30 = 0;  // OpGraph::add_stream refuses more streams than fit
  uint32_t label = 0;        // index into OpGraph::labels()
  uint32_t payload = 0;      // index into gemms, computes or collectives, by kind
};
static_assert(sizeof(Op) == 12);

// `later` starts only after `earlier` has finished (besides its stream predecessor).
struct DepEdge {
  uint32_t later = 0, earlier = 0;
};
// Ops listed per op, back to back. Most ops list none (DeepSeek-V3's step: one dependency per seven
// ops), so where a list starts is kept only for the ops that have one: a bit per op says which, and
// a count per 64 ops ranks it among them (a quarter of a byte per op, where an offset per op took
// four: 300 MB of the step at every GPU).
class OpLists {
 public:
  // From the lists' offsets per op (`begin`, ops + 1 of them, ascending) and their items.
  OpLists(const std::vector<uint32_t>& begin, std::vector<uint32_t> list);
  OpLists() : OpLists({0}, {}) {}
  std::span<const uint32_t> of(uint32_t op) const {
    const uint64_t word = has_[op >> 6], bit = uint64_t{1} << (op & 63);
    if (!(word & bit)) return {};
    const uint32_t i = rank_[op >> 6] + static_cast<uint32_t>(std::popcount(word & (bit - 1)));
    return {list_.data() + begin_[i], list_.data() + begin_[i + 1]};
  }
  size_t ops() const { return ops_; }                      // ops it covers
  size_t listed_ops() const { return begin_.size() - 1; }  // those with a non-empty list

 private:
  std::vector<uint64_t> has_;    // bit per op: its list is not empty
  std::vector<uint32_t> rank_;   // per 64 ops: ops with a list before them
  std::vector<uint32_t> begin_;  // per op with a list (and one past the last): its first item
  std::vector<uint32_t> list_;
  size_t ops_ = 0;
};

// Who moves a send's bytes: a kernel on its stream's SM partition (its copy rate follows its SMs),
// or the GPU's copy engine (DMA, as cudaMemcpyPeerAsync moves them), which holds no SM.
enum class Mover : uint8_t { kSms, kCopyEngine };

// Sizes follow nccl-tests: `bytes` is the per-GPU buffer (all-to-all: what each GPU sends in all;
// all-reduce: the buffer reduced; reduce-scatter: each GPU's input; all-gather: each GPU's output).
// all-to-all-v has no single buffer size: `bytes` is the largest total one rank sends to others
// (relayed bytes count for the relay), and its transfers hold the exact per-pair volumes.
struct Collective {
  CollectiveKind kind = CollectiveKind::kAllToAll;
  double bytes = 0;
  std::vector<int> gpus;      // participants in rank order; for kSend: {source, destination}
  std::vector<uint32_t> ops;  // one op per GPU that runs a kernel (kSend and add_put: the source only)
  uint32_t transfer_set = UINT32_MAX;  // kAllToAllV: its set in the graph's transfer pool
  Mover mover = Mover::kSms;           // kCopyEngine: kSend only
  // Bytes each participant's kernel works through at its own pace (CostModel::comm_kernel_pace),
  // whatever its links leave it: DeepEP's internode kernels handle each token once per node it
  // reaches, its own node included. 0: the kernel keeps up with its links (kAllToAllV only).
  double paced_bytes = 0;
  // The SMs its kernel launches on (its grid), taken from whatever partition it runs on; 0: the
  // whole partition, as a kernel given a partition of its own for communication is.
  int grid_sms = 0;
  // Its images (OpGraph::add_images), UINT32_MAX for none: a put's or send's (one op, for its
  // source), a list of image sets, one per destination rank; a collective's whose every rank runs
  // an op, its relabelings (OpGraph::set_image_relabelings).
  uint32_t image_list = UINT32_MAX;
};

class OpGraph {
 public:
  StreamId add_stream(int gpu, int partition, std::string name);
  OpId add_gemm(StreamId s, const GemmShape& shape, std::string_view label);
  OpId add_compute(StreamId s, const GenericCompute& c, std::string_view label);
  // One op on each stream (each on a distinct GPU); returns the ops in the streams' order.
  // Not for kAllToAllV (throws std::invalid_argument): that one needs its transfers.
  std::vector<OpId> add_collective(CollectiveKind kind, double bytes,
                                   const std::vector<StreamId>& streams, std::string_view label);
  // An all-to-all whose volume differs per (source, destination) pair: one op on each stream (each
  // on a distinct GPU), transfers in rank indices of `streams`, all concurrent in one phase. A
  // relay (s -> r, then r -> d) is listed as two transfers; r's kernel sends the forwarded bytes.
  // A transfer from a rank to itself is a local copy: on the kernel's SMs and its GPU's HBM only.
  // Transfers are canonicalised by normalize_transfers (zero bytes dropped, repeated pairs summed).
  // `paced_bytes`: Collective::paced_bytes. Throws std::invalid_argument, leaving the graph
  // unchanged, for an invalid transfer, two streams on one GPU, or paced_bytes negative or not finite.
  std::vector<OpId> add_all_to_all_v(const std::vector<StreamId>& streams, std::vector<Transfer> transfers,
                                     std::string_view label, double paced_bytes = 0);
  // A one-sided put: the source stream's kernel writes `bytes` into dst_gpu's memory; by the copy
  // engine, no kernel: the stream only orders it, and its partition's SMs stay free.
  // `images`: the transfer's image set (add_images), or none.
  OpId add_send(StreamId src, int dst_gpu, double bytes, std::string_view label, Mover mover = Mover::kSms,
                uint32_t images = kNoImages);
  // A one-sided put to several GPUs at once: the source stream's kernel writes bytes[i] into
  // dst_gpus[i]'s memory, all concurrently (a ring collective's steps pipelined into one bulk
  // transfer per ring, where only the source is simulated). Repeated destinations are summed.
  // `paced_bytes`: Collective::paced_bytes of the source's kernel. `images`: none, or one image set
  // per destination (add_images; a repeated destination's sets are joined). Throws
  // std::invalid_argument, leaving the graph unchanged, for dst == src, sizes that differ, bytes (or
  // paced_bytes) negative or not finite, or an image set unknown or without its own transfer.
  OpId add_put(StreamId src, const std::vector<int>& dst_gpus, const std::vector<double>& bytes, std::string_view label,
               double paced_bytes = 0, const std::vector<uint32_t>& images = {});
  // Where a run simulates some GPUs on behalf of others (folded and mirrored fidelity), a put's or
  // send's transfer stands for the transfers in the same role that the GPUs its source stands in
  // for make, itself among them: its images. The executor loads the switch links they cross
  // (sim::Routing::image_links), which one stand-in's own flow alone would leave light. Stores
  // the set once (sorted, repeats dropped) and returns its id.
  static constexpr uint32_t kNoImages = UINT32_MAX;
  uint32_t add_images(std::vector<GpuPair> images);
  // The image set of the transfer to rank `dst_rank` (1 on) of a put or send; kNoImages if none.
  uint32_t image_set(const Collective& c, uint32_t dst_rank) const {
    return c.image_list == UINT32_MAX || !one_sided(c) ? kNoImages : image_lists_.get(c.image_list)[dst_rank - 1];
  }
  // A collective among simulated GPUs (every rank runs an op) stands for the same collective among
  // the GPUs they stand in for: each relabeling names, per rank, the GPU holding that rank in one
  // of those (the collective's own GPUs left out). The images of its transfer s -> d are then the
  // transfer itself and (relabeling[s], relabeling[d]) for each relabeling. Throws
  // std::invalid_argument for an op that is no such collective's or a relabeling of another length.
  void set_image_relabelings(OpId op, const std::vector<std::vector<int>>& relabelings);
  // A collective's relabelings, one after another (each gpus.size() long); empty when it has none.
  std::span<const int> image_relabelings(const Collective& c) const {
    return c.image_list == UINT32_MAX || one_sided(c) ? std::span<const int>()
                                                      : relabelings_.get(c.image_list).subspan(c.gpus.size());
  }
  size_t relabeling_sets() const { return relabelings_.sets(); }
  // A put or a send: one op, its source's, and the destinations' GPUs run none.
  static bool one_sided(const Collective& c) { return c.ops.size() < c.gpus.size(); }
  std::span<const GpuPair> images(uint32_t set) const { return image_sets_.get(set); }
  size_t image_sets() const { return image_sets_.sets(); }
  // The collective of communication op `op` launches its kernels on at most `sms` SMs
  // (Collective::grid_sms). Throws std::invalid_argument for an op that is no collective's or sms < 0.
  void set_grid_sms(OpId op, int sms);
  // Gives back what the lists reserved beyond their contents, once the graph is built: they grow
  // by doubling, and DeepSeek-V3's step at every GPU (81.8 M ops) would keep room for 134 M.
  void shrink_to_fit();
  // `later` starts only after `earlier` has finished.
  void add_dep(OpId later, OpId earlier) { deps_.push_back({later.v, earlier.v}); }
  // Every dependency, in the order added: one edge list rather than a list per op, since most of
  // a step's ops have none (DeepSeek-V3's folded step at 32 micro-batches: 1.6 M over 10.9 M ops).
  const std::vector<DepEdge>& deps() const { return deps_; }
  // Per op, the ops it waits for (besides its stream predecessor), in the order added.
  OpLists deps_of_each() const;
  // Per op, the ops that wait for it, ascending (an op waiting twice on it is listed twice).
  OpLists dependents_of_each() const;

  const std::vector<Stream>& streams() const { return streams_; }
  const std::vector<Op>& ops() const { return ops_; }
  // The distinct GEMM shapes and generic kernels; an op's payload indexes its kind's list.
  const std::vector<GemmShape>& gemms() const { return gemms_; }
  const std::vector<GenericCompute>& computes() const { return computes_; }
  const std::vector<Collective>& collectives() const { return collectives_; }
  const std::string& label(const Op& op) const { return labels_[op.label]; }
  // A send by the copy engine: no kernel, so it holds no SM of its stream's partition.
  bool by_copy_engine(const Op& op) const {
    return op.kind == OpKind::kComm && collectives_[op.payload].mover == Mover::kCopyEngine;
  }
  // A kAllToAllV collective's transfers (empty for other kinds).
  std::span<const Transfer> transfers(const Collective& c) const {
    if (c.transfer_set == UINT32_MAX) return {};
    return transfer_pool_.get(c.transfer_set);
  }
  const TransferPool& transfer_pool() const { return transfer_pool_; }

 private:
  uint32_t add_op(StreamId s, OpKind kind, uint32_t payload, std::string_view label);
  uint32_t intern(std::string_view label);

  std::vector<Stream> streams_;
  std::vector<Op> ops_;
  std::vector<DepEdge> deps_;
  // Each distinct GEMM shape and generic kernel once (ops hold indices): DeepSeek-V3's folded step
  // repeats 42 shapes and 46 kernels over its 41 M ops.
  std::vector<GemmShape> gemms_;
  std::vector<GenericCompute> computes_;
  struct PayloadHash {
    size_t operator()(const GemmShape& g) const;
    size_t operator()(const GenericCompute& c) const;
  };
  struct PayloadSame {  // equal bit for bit (0.0 and -0.0 stay apart)
    bool operator()(const GemmShape& a, const GemmShape& b) const;
    bool operator()(const GenericCompute& a, const GenericCompute& b) const;
  };
  std::unordered_map<GemmShape, uint32_t, PayloadHash, PayloadSame> gemm_index_;
  std::unordered_map<GenericCompute, uint32_t, PayloadHash, PayloadSame> compute_index_;
  std::vector<Collective> collectives_;
  TransferPool transfer_pool_;
  SetPool<GpuPair> image_sets_;
  SetPool<uint32_t> image_lists_;  // per put or send, an image set id per destination rank
  SetPool<int> relabelings_;       // per collective among simulated GPUs: its GPUs, then its relabelings
  // The image list of a collective over `gpus` (source first) whose destinations dst_gpus[i] have
  // image sets images[i]; UINT32_MAX for none. Throws as add_put says.
  uint32_t image_list(const std::vector<int>& gpus, const std::vector<int>& dst_gpus,
                      const std::vector<uint32_t>& images);
  // Each distinct label once: a pipeline step repeats a few thousand labels over 580K ops.
  struct LabelHash {
    using is_transparent = void;  // look up by string_view without building a string
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> labels_;
  std::unordered_map<std::string, uint32_t, LabelHash, std::equal_to<>> label_index_;
};

}  // namespace cs::sim
