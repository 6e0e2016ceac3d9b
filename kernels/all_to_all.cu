// cs_all_to_all: intranode all-to-all between all visible GPUs, driven by one process with peer
// access. Ours (all_to_all/copy_kernels.cuh): on each GPU a kernel of k CTAs (one per SM) writes
// its per-peer chunks directly into the peers' receive buffers over NVLink with 16-byte stores,
// the local chunk copied alongside (by CTAs of its own once k is large enough to fill NVLink); a
// receiver's kernel ends only when all n*k CTAs of the launch have arrived. NCCL (when built with nccl.h): grouped ncclSend/ncclRecv, one communicator
// set per CTA limit k (ncclConfig_t minCTAs = maxCTAs = k, ncclCommInitRankConfig per rank inside
// one ncclGroupStart/End).
//
// Payloads: FP8 dispatch (bytes, tokens x 7168 x top-k routed copies) and BF16 combine (16-bit
// elements, tokens x 7168 x 2 bytes), balanced routing: each GPU sends size/n bytes to every GPU
// (itself included, as nccl-tests does). Every (impl, mode, k, size) is checked before it is timed:
// the receive buffers are poisoned, one all-to-all runs, and every word is compared with the
// pattern the sender wrote (exit 3 on a mismatch, nothing on stdout).
//
// Timing: CUDA events on each GPU around `iters` back-to-back all-to-alls; the time of one is the
// slowest GPU's elapsed / iters. algbw = size / time, busbw = algbw * (n-1)/n (nccl-tests).
//
// Exit codes: 0 done; 1 error; 2 fewer than 2 usable GPUs or no driver; 3 a payload mismatch.
#include <cuda_runtime.h>
#ifdef CS_HAVE_NCCL
#include <nccl.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "all_to_all/copy_kernels.cuh"
#include "all_to_all/options.h"
#include "common/check.h"
#include "common/peer_access.h"
#include "common/json_writer.h"
#include "common/provenance.h"

using cs::kernels::a2a::check_recv;
using cs::kernels::a2a::elem_bytes;
using cs::kernels::a2a::fill_send;
using cs::kernels::a2a::Kernel;
using cs::kernels::a2a::kernel_name;
using cs::kernels::a2a::kMaxGpus;
using cs::kernels::a2a::Launch;
using cs::kernels::a2a::Mode;
using cs::kernels::a2a::mode_name;
using cs::kernels::a2a::Only;
using cs::kernels::a2a::Options;
using cs::kernels::a2a::parse_args;
using cs::kernels::a2a::Peers;
using cs::kernels::a2a::print_usage;

namespace {

using cs::kernels::JsonWriter;

constexpr int kSchemaVersion = 1;
constexpr const char* kProgram = "cs_all_to_all";
constexpr int kHidden = 7168;
constexpr int kTopK = 8;

#ifdef CS_HAVE_NCCL
#define CS_NCCL_CHECK(expr)                                                                        \
  do {                                                                                             \
    const ncclResult_t cs_nccl_r_ = (expr);                                                        \
    if (cs_nccl_r_ != ncclSuccess) {                                                               \
      throw std::runtime_error(std::string(#expr) + " failed: " + ncclGetErrorString(cs_nccl_r_)); \
    }                                                                                              \
  } while (0)
#endif


struct Record {
  std::string impl;
  Mode mode;
  int k;
  unsigned long long bytes;
  int iters;
  double time_us;
  std::vector<double> gpu_us;
  double algbw, busbw;
};

struct Gpu {
  int dev = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  unsigned long long* flags = nullptr;  // kMaxGpus barrier slots, then the arrival counter
  unsigned long long* bad = nullptr;    // [0] count, [1] first bad word
};

class Bench {
 public:
  Bench(int n, unsigned long long max_bytes) : g_(n) {
    for (int d = 0; d < n; ++d) {
      Gpu& g = g_[d];
      g.dev = d;
      cs::kernels::enable_peer_access(d, n);
      CS_CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
      CS_CUDA_CHECK(cudaEventCreate(&g.start));
      CS_CUDA_CHECK(cudaEventCreate(&g.stop));
      CS_CUDA_CHECK(cudaMalloc(&g.send, max_bytes));
      CS_CUDA_CHECK(cudaMalloc(&g.recv, max_bytes));
      CS_CUDA_CHECK(cudaMalloc(&g.flags, (kMaxGpus + 1) * sizeof(unsigned long long)));
      CS_CUDA_CHECK(cudaMemset(g.flags, 0, (kMaxGpus + 1) * sizeof(unsigned long long)));
      CS_CUDA_CHECK(cudaMalloc(&g.bad, 2 * sizeof(unsigned long long)));
    }
    for (int d = 0; d < n; ++d) {
      peers_.recv[d] = static_cast<uint4*>(g_[d].recv);
      peers_.barrier[d] = g_[d].flags;
      peers_.arrive[d] = g_[d].flags + kMaxGpus;
    }
    sync_all();
  }
  ~Bench() {
    for (auto& g : g_) {
      cudaSetDevice(g.dev);
      cudaFree(g.send);
      cudaFree(g.recv);
      cudaFree(g.flags);
      cudaFree(g.bad);
      cudaEventDestroy(g.start);
      cudaEventDestroy(g.stop);
      cudaStreamDestroy(g.stream);
    }
  }
  int n() const { return static_cast<int>(g_.size()); }

  void sync_all() {
    for (auto& g : g_) {
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      CS_CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  void fill(unsigned long long bytes, uint32_t seed) {
    for (auto& g : g_) {
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      fill_send<<<264, 512, 0, g.stream>>>(static_cast<uint32_t*>(g.send), n(), g.dev, bytes / n() / 4, seed);
      CS_CUDA_CHECK(cudaGetLastError());
    }
    sync_all();
  }

  void poison(unsigned long long bytes) {
    for (auto& g : g_) {
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      CS_CUDA_CHECK(cudaMemsetAsync(g.recv, 0xA5, bytes, g.stream));
    }
    sync_all();
  }

  // Returns an empty string when every GPU received what every sender wrote.
  std::string check(unsigned long long bytes, uint32_t seed) {
    const unsigned long long init[2] = {0, ~0ull};
    for (auto& g : g_) {
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      CS_CUDA_CHECK(cudaMemcpyAsync(g.bad, init, sizeof init, cudaMemcpyHostToDevice, g.stream));
      check_recv<<<264, 512, 0, g.stream>>>(static_cast<const uint32_t*>(g.recv), n(), g.dev, bytes / n() / 4, seed,
                                            g.bad, g.bad + 1);
      CS_CUDA_CHECK(cudaGetLastError());
    }
    std::string why;
    for (auto& g : g_) {
      unsigned long long r[2];
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      CS_CUDA_CHECK(cudaMemcpyAsync(r, g.bad, sizeof r, cudaMemcpyDeviceToHost, g.stream));
      CS_CUDA_CHECK(cudaStreamSynchronize(g.stream));
      if (r[0] != 0) {
        const unsigned long long cw = bytes / n() / 4;
        why += "GPU " + std::to_string(g.dev) + ": " + std::to_string(r[0]) + " of " + std::to_string(cw * n()) +
               " words wrong, first at word " + std::to_string(r[1]) + " (from GPU " + std::to_string(r[1] / cw) +
               "); ";
      }
    }
    return why;
  }

  // Our kernel; dynamic shared memory above half an SM's keeps one CTA per SM.
  void configure_ours(const Options& o) {
    opt_ = o;
    for (auto& g : g_) {
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      CS_CUDA_CHECK(cudaFuncSetAttribute(ours_function(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(kOneCtaPerSmBytes)));
    }
  }

  // CTAs (of k) that copy the local chunk alone; 0: every CTA copies its slice of every chunk.
  int self_ctas(int k) const {
    if (opt_.kernel != Kernel::kTiled || opt_.self_ctas == 0) return 0;
    if (opt_.self_ctas > 0) return std::min(opt_.self_ctas, k / 2);
    const int own = (cs::kernels::a2a::kLinkCtas + n() - 2) / (n() - 1);
    return k >= 2 * cs::kernels::a2a::kLinkCtas ? own : 0;
  }

  // One all-to-all of ours on k CTAs per GPU; `only` narrows the destinations (diagnostics).
  void launch_ours(unsigned long long bytes, int k, Only only = Only::kAll) {
    ++epoch_;
    arrivals_ += static_cast<unsigned long long>(n()) * k;
    for (auto& g : g_) {
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      const unsigned all = (1u << n()) - 1, self = 1u << g.dev;
      const unsigned mask = only == Only::kAll ? all : only == Only::kSelf ? self : all & ~self;
      const unsigned long long granule16 = opt_.granule_kib == 0 ? 1 : opt_.granule_kib * 64ull;
      Launch a{static_cast<const uint4*>(g.send), n(), g.dev, bytes / n() / 16, epoch_, arrivals_, mask, granule16,
               self_ctas(k)};
      void* args[] = {&a, &peers_};
      CS_CUDA_CHECK(cudaLaunchKernel(ours_function(), dim3(k), dim3(512), args, kOneCtaPerSmBytes, g.stream));
    }
  }

#ifdef CS_HAVE_NCCL
  void launch_nccl(unsigned long long bytes, const std::vector<ncclComm_t>& comms) {
    const size_t chunk = bytes / n();
    CS_NCCL_CHECK(ncclGroupStart());
    for (auto& g : g_) {
      for (int p = 0; p < n(); ++p) {
        CS_NCCL_CHECK(ncclSend(static_cast<const char*>(g.send) + p * chunk, chunk, ncclUint8, p, comms[g.dev], g.stream));
        CS_NCCL_CHECK(ncclRecv(static_cast<char*>(g.recv) + p * chunk, chunk, ncclUint8, p, comms[g.dev], g.stream));
      }
    }
    CS_NCCL_CHECK(ncclGroupEnd());
  }
#endif

  // Times `iters` launches; returns per-GPU microseconds per all-to-all.
  template <class Fn>
  std::vector<double> time(int warmup, int iters, Fn launch) {
    for (int i = 0; i < warmup; ++i) launch();
    sync_all();
    for (auto& g : g_) {
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      CS_CUDA_CHECK(cudaEventRecord(g.start, g.stream));
    }
    for (int i = 0; i < iters; ++i) launch();
    for (auto& g : g_) {
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      CS_CUDA_CHECK(cudaEventRecord(g.stop, g.stream));
    }
    std::vector<double> us;
    for (auto& g : g_) {
      CS_CUDA_CHECK(cudaSetDevice(g.dev));
      CS_CUDA_CHECK(cudaEventSynchronize(g.stop));
      float ms = 0;
      CS_CUDA_CHECK(cudaEventElapsedTime(&ms, g.start, g.stop));
      us.push_back(1e3 * ms / iters);
    }
    return us;
  }

 private:
  static constexpr size_t kOneCtaPerSmBytes = 120 * 1024;

  const void* ours_function() const {
    return opt_.kernel == Kernel::kTiled ? reinterpret_cast<const void*>(&cs::kernels::a2a::a2a_tiled)
                                         : reinterpret_cast<const void*>(&cs::kernels::a2a::a2a_simple);
  }

  std::vector<Gpu> g_;
  Options opt_;
  Peers peers_{};
  unsigned long long epoch_ = 0;
  unsigned long long arrivals_ = 0;
};

std::string table_line(const Record& r, int n) {
  char buf[256];
  const unsigned long long count = r.bytes / elem_bytes(r.mode);
  std::snprintf(buf, sizeof buf, "%6s %13s %3d %12llu %12llu %5s %10.1f %8.2f %8.2f", r.impl.c_str(), mode_name(r.mode),
                r.k, r.bytes, count, r.mode == Mode::kDispatchFp8 ? "fp8" : "bf16", r.time_us, r.algbw, r.busbw);
  (void)n;
  return buf;
}

std::string ours_description(const Options& o) {
  if (o.kernel == Kernel::kSimple)
    return "simple: k CTAs x 512 threads per GPU, 4 16-byte loads then stores per thread, k equal slices; peers in "
           "rotated order, local copy last; flag barrier at start, per-CTA fence + arrival counter at every receiver, "
           "receiver's kernel ends when all arrived; one CTA per SM";
  return "tiled: k CTAs x 512 threads per GPU (one per SM), 8 16-byte non-caching loads in flight per thread, then "
         "16-byte stores into the destination's recv (peer over NVLink); each CTA's slice of a chunk is whole granules. "
         "Below self_ctas_from_k every CTA copies its slice of every chunk, visiting the destinations tile by tile "
         "(64 KiB) from (self + 1 + b) mod n; from there self_ctas CTAs copy the local chunk alone and the others the "
         "peers' chunks. Flag barrier at start, per-CTA system fence + arrival counter at every receiver, receiver's "
         "kernel ends when all n*k arrived";
}

int run(int argc, char** argv) {
  Options opt;
  bool help = false;
  const std::string err = parse_args(argc, argv, opt, help);
  if (help) { print_usage(kProgram, kSchemaVersion); return cs::kernels::kExitOk; }
  if (!err.empty()) {
    std::fprintf(stderr, "%s: %s\n", kProgram, err.c_str());
    return cs::kernels::kExitError;
  }
  const cs::kernels::GpuAvailability availability = cs::kernels::probe_gpus();
  if (availability.count == 0) return cs::kernels::report_no_gpu(kProgram, availability);
  if (availability.count < 2) {
    std::fprintf(stderr, "%s: needs at least 2 GPUs, %d visible\n", kProgram, availability.count);
    return cs::kernels::kExitNoGpu;
  }
  const int n = std::min(availability.count, kMaxGpus);
  const cs::kernels::Provenance prov = cs::kernels::collect_provenance(argc, argv);
#ifndef CS_HAVE_NCCL
  if (opt.nccl) std::fprintf(stderr, "%s: built without NCCL: NCCL rows are left out\n", kProgram);
  opt.nccl = false;
#endif
  // Sizes divisible into n chunks of whole 16-byte vectors.
  std::vector<unsigned long long> sizes;
  for (unsigned long long s = opt.min_bytes; s <= opt.max_bytes; s *= opt.size_factor) {
    sizes.push_back(s / (16ull * n) * 16ull * n);
  }
  Bench bench(n, sizes.back());

  std::vector<Record> records;
  std::string nccl_version;
  // `launch` runs the checked all-to-all, `timed` what is timed (the same, except in diagnostics).
  auto measure = [&](const std::string& impl, Mode mode, int k, unsigned long long bytes, auto launch, auto timed) -> int {
    const uint32_t seed = 0x1234u + 977u * static_cast<uint32_t>(mode == Mode::kCombineBf16) + static_cast<uint32_t>(bytes >> 20);
    bench.fill(bytes, seed);
    bench.poison(bytes);
    launch();
    bench.sync_all();
    const std::string why = bench.check(bytes, seed);
    if (!why.empty()) {
      std::fprintf(stderr, "%s: check failed: %s %s k=%d size=%llu: %s\n", kProgram, impl.c_str(), mode_name(mode), k,
                   bytes, why.c_str());
      return cs::kernels::kExitCheckFailed;
    }
    // A first estimate from one run sizes the timed loop.
    const std::vector<double> est = bench.time(0, 1, timed);
    const double one = *std::max_element(est.begin(), est.end());
    const int iters = std::clamp(static_cast<int>(opt.target_ms * 1e3 / std::max(one, 1.0)), 3, 200);
    Record r{impl, mode, k, bytes, iters, 0, bench.time(opt.warmup, iters, timed), 0, 0};
    r.time_us = *std::max_element(r.gpu_us.begin(), r.gpu_us.end());
    r.algbw = static_cast<double>(bytes) / (r.time_us * 1e3);
    r.busbw = r.algbw * (n - 1) / n;
    std::fprintf(stderr, "  %s\n", table_line(r, n).c_str());
    records.push_back(r);
    return 0;
  };

  if (opt.ours) {
    bench.configure_ours(opt);
    const std::string impl = opt.only == Only::kAll ? "ours" : opt.only == Only::kPeers ? "ours-peers" : "ours-self";
    for (int k : opt.ks) {
      for (Mode mode : opt.modes) {
        for (unsigned long long bytes : sizes) {
          const int rc = measure(impl, mode, k, bytes, [&] { bench.launch_ours(bytes, k); },
                                 [&] { bench.launch_ours(bytes, k, opt.only); });
          if (rc != 0) return rc;
        }
      }
    }
  }
#ifdef CS_HAVE_NCCL
  if (opt.nccl) {
    int v = 0;
    CS_NCCL_CHECK(ncclGetVersion(&v));
    nccl_version = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
    for (int k : opt.ks) {
      ncclUniqueId id;
      CS_NCCL_CHECK(ncclGetUniqueId(&id));
      std::vector<ncclComm_t> comms(n);
      CS_NCCL_CHECK(ncclGroupStart());
      for (int d = 0; d < n; ++d) {
        CS_CUDA_CHECK(cudaSetDevice(d));
        ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
        cfg.minCTAs = k;
        cfg.maxCTAs = k;
        CS_NCCL_CHECK(ncclCommInitRankConfig(&comms[d], n, id, d, &cfg));
      }
      CS_NCCL_CHECK(ncclGroupEnd());
      for (Mode mode : opt.modes) {
        for (unsigned long long bytes : sizes) {
          auto nccl = [&] { bench.launch_nccl(bytes, comms); };
          const int rc = measure("nccl", mode, k, bytes, nccl, nccl);
          if (rc != 0) return rc;
        }
      }
      bench.sync_all();
      for (auto c : comms) CS_NCCL_CHECK(ncclCommDestroy(c));
    }
  }
#endif

  std::string out;
  JsonWriter w(out, opt.compact ? 0 : 2);
  cs::kernels::begin_bench_json(w, kSchemaVersion, prov);
  w.field("gpus", n);
  w.key("nccl_version");
  if (nccl_version.empty()) w.null(); else w.value(nccl_version);
  w.field("nccl_cta_limit", "ncclConfig_t minCTAs = maxCTAs = k, ncclCommInitRankConfig per rank in one group");
  w.field("nccl_all_to_all", "grouped ncclSend/ncclRecv of size/n bytes (ncclUint8) to and from every rank, self included");
  w.field("ours", ours_description(opt));
  w.key("ours_config").begin_object();
  w.field("kernel", kernel_name(opt.kernel)).field("threads", 512).field("ctas_per_sm", 1);
  w.field("vectors_per_thread", opt.kernel == Kernel::kTiled ? cs::kernels::a2a::kUnroll : 4);
  if (opt.kernel == Kernel::kTiled) {
    w.field("granule_bytes", opt.granule_kib == 0 ? 16 : opt.granule_kib * 1024);
    if (opt.self_ctas < 0) {
      w.field("self_ctas", (cs::kernels::a2a::kLinkCtas + n - 2) / (n - 1));
      w.field("self_ctas_from_k", 2 * cs::kernels::a2a::kLinkCtas);
    } else {
      w.field("self_ctas", opt.self_ctas).field("self_ctas_from_k", opt.self_ctas > 0 ? 2 : 0);
    }
  }
  w.end_object();
  w.field("timing", "CUDA events per GPU around iters back-to-back all-to-alls; time = slowest GPU / iters");
  w.field("routing", "balanced: size/n bytes to every GPU, self included");
  w.field("hidden", kHidden);
  w.field("topk", kTopK);
  w.field("algbw", "size / time (GB/s = 1e9 B/s)");
  w.field("busbw", "algbw * (n-1)/n");
  w.field("check", "receive buffers poisoned, one all-to-all, every 32-bit word compared with the sender's pattern");
  w.field("warmup", opt.warmup);
  w.field("target_ms", opt.target_ms);
  w.end_object();
  w.key("records").begin_array();
  for (const auto& r : records) {
    const double row_bytes = static_cast<double>(kHidden) * elem_bytes(r.mode);
    w.begin_object(true)
        .field("impl", r.impl)
        .field("mode", mode_name(r.mode))
        .field("dtype", r.mode == Mode::kDispatchFp8 ? "fp8_e4m3" : "bf16")
        .field("k", r.k)
        .field("size_bytes", r.bytes)
        .field("count", r.bytes / elem_bytes(r.mode))
        .field("routed_rows", static_cast<double>(r.bytes) / row_bytes)
        .field("tokens_equiv", r.mode == Mode::kDispatchFp8 ? static_cast<double>(r.bytes) / (row_bytes * kTopK)
                                                             : static_cast<double>(r.bytes) / row_bytes)
        .field("iters", r.iters)
        .field("time_us", r.time_us)
        .field("algbw_gbps", r.algbw)
        .field("busbw_gbps", r.busbw)
        .field("check_passed", true);
    w.key("gpu_time_us").value(r.gpu_us);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out.push_back('\n');
  if (!opt.json_path.empty() && !cs::kernels::write_file_atomically(opt.json_path, out)) {
    std::fprintf(stderr, "%s: cannot write %s\n", kProgram, opt.json_path.c_str());
    return cs::kernels::kExitError;
  }
  std::string lines = "# " + std::to_string(n) + " GPUs; busbw = algbw * (n-1)/n" +
                      (nccl_version.empty() ? std::string() : "; NCCL " + nccl_version) + "\n";
  lines += "#  impl          mode   k   size(B)        count  type   time(us)  algbw    busbw\n";
  for (const auto& r : records) lines += table_line(r, n) + "\n";
  if (!cs::kernels::write_stdout(kProgram, lines)) return cs::kernels::kExitError;
  return cs::kernels::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return cs::kernels::guarded_main(kProgram, [&] { return run(argc, argv); });
}
