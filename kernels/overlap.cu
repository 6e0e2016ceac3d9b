// cs_overlap: on every GPU of the host, FP8 GEMMs (cuBLASLt, DeepSeek's 1x128 / 128x128 block
// scaling, as cs_fp8_gemm runs them) on a green context of 132 - k SMs while our all-to-all
// (cs_all_to_all's tiled kernel, k CTAs) runs on a green context of the other k SMs, both from one
// split of the device so that they never share an SM. For each k: each alone, then together.
//
// A window: every stream first waits on a gate (a kernel spinning on a host-mapped flag) so that
// the host can queue the whole window before anything starts; then the GEMM stream runs N GEMMs
// and the all-to-all stream M all-to-alls back to back (no L2 flush: what training does), a
// one-thread kernel stamping %globaltimer before the first and after each operation. N and M are
// chosen so that each stream alone would take about --window-ms. From the stamps: each operation's
// time alone (median over the alone windows), its time together (median over the operations that
// began and ended while the other stream was busy too), and the makespan of N GEMMs + M
// all-to-alls against the serial sum and the perfect overlap.
//
// Checked before timing (exit 3 on a mismatch): every GEMM partition's result against the FP64
// reference of cs_fp8_gemm (fp8_gemm/operands.h), every all-to-all partition's payload word by
// word; and again after the last together window (D and the receive buffers poisoned before it).
//
// With one GPU the all-to-all is its local chunk alone: a copy within HBM, no NVLink traffic.
//
// Exit codes: 0 done; 1 error; 2 no usable GPU or driver; 3 a check failed.
#include <cublasLt.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/args.h"
#include "common/check.h"
#include "common/clock_sampler.h"
#include "common/json_writer.h"
#include "common/provenance.h"
#include "fp8_gemm/device_buffer.h"
#include "fp8_gemm/lt_matmul.h"
#include "fp8_gemm/operands.h"
#include "fp8_gemm/shapes.h"
#include "fp8_gemm/sm_partition.h"
#include "fp8_gemm/timing.h"
#include "overlap/device_work.h"
#include "overlap/green_pair.h"
#include "overlap/cases.h"
#include "overlap/options.h"
#include "overlap/report.h"
#include "overlap/stats.h"

namespace {

namespace fg = cs::kernels::fp8_gemm;
namespace ov = cs::kernels::overlap;
using cs::kernels::JsonWriter;

using cs::kernels::overlap::kProgram;
using cs::kernels::overlap::kSchemaVersion;
using cs::kernels::overlap::make_shape;
using cs::kernels::overlap::Options;
using cs::kernels::overlap::parse_args;
using cs::kernels::overlap::print_usage;
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
using cs::kernels::overlap::Case;
using cs::kernels::overlap::Gpu;
using cs::kernels::overlap::kMaxOps;
using cs::kernels::overlap::median;
using cs::kernels::overlap::PerGpu;
using cs::kernels::overlap::table_line;
using cs::kernels::overlap::WindowStamps;
constexpr uint32_t kSeed = 0x0e71a9u;

int run(int argc, char** argv) {
  Options opt;
  bool help = false;
  const std::string err = parse_args(argc, argv, opt, help);
  if (help) { print_usage(); return cs::kernels::kExitOk; }
  if (!err.empty()) { std::fprintf(stderr, "%s: %s\n", kProgram, err.c_str()); return cs::kernels::kExitError; }
  const cs::kernels::GpuAvailability availability = cs::kernels::probe_gpus();
  if (availability.count == 0) return cs::kernels::report_no_gpu(kProgram, availability);
  if (availability.count < 2) {
    std::fprintf(stderr, "%s: one GPU: the all-to-all is its local chunk alone, a copy in HBM (no NVLink)\n",
                 kProgram);
  }
  const int n = std::min(availability.count, 8);
  const cs::kernels::Provenance prov = cs::kernels::collect_provenance(argc, argv);
  for (int d = 0; d < n; ++d) {
    if (prov.gpus.at(static_cast<std::size_t>(d)).cc_major != 9) {
      std::fprintf(stderr, "%s: GPU %d is not Hopper; built for sm_90a only\n", kProgram, d);
      return cs::kernels::kExitCheckFailed;
    }
  }
  std::vector<fg::GemmShape> shapes;
  for (const auto& s : opt.shapes) shapes.push_back(make_shape(s));

  const unsigned long long a2a_bytes = (static_cast<unsigned long long>(opt.a2a_mib) << 20) / (16ull * n) * 16ull * n;
  ov::AllToAll a2a(n, a2a_bytes);  // peer access in the primary contexts, buffers
  std::vector<Gpu> gpus(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    Gpu& g = gpus[static_cast<std::size_t>(d)];
    g.dev = d;
    CS_CUDA_CHECK(cudaSetDevice(d));
    CS_CUDA_CHECK(cudaFree(nullptr));
    g.parts = std::make_unique<fg::SmPartitions>(d, std::vector<int>{}, 1);
    if (cublasLtCreate(&g.lt) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasLtCreate failed");
    g.workspace = std::make_unique<fg::DeviceBuffer>(kWorkspaceBytes);
    g.stamps = std::make_unique<fg::DeviceBuffer>(2 * (kMaxOps + 1) * sizeof(unsigned long long));
    for (std::size_t si = 0; si < shapes.size(); ++si) {
      g.ops.push_back(std::make_unique<fg::Operands>(shapes[si]));
      g.ops.back()->fill(0x1234567ull + 7919ull * si + 104729ull * d, false, g.parts->primary().stream);
    }
    ov::AllToAll::configure_current();
  }
  const fg::SmResourceInfo& sm_info = gpus[0].parts->info();
  std::fprintf(stderr, "%s: %d GPUs, %d SMs each, green-context granularity %d (minimum %d); all-to-all %llu B per GPU\n",
               kProgram, n, sm_info.sm_count, sm_info.coscheduled_alignment, sm_info.min_partition_size, a2a_bytes);
  ov::Gate gate;
  std::unique_ptr<cs::kernels::ClockSampler> sampler;
  if (opt.sample_clocks) {
    std::string why;
    sampler = cs::kernels::ClockSampler::open(prov.gpus.at(0).pci_bus_id, std::chrono::milliseconds(1), why);
    if (!sampler) {
      std::fprintf(stderr, "%s: --sample-clocks: %s\n", kProgram, why.c_str());
      return cs::kernels::kExitNoGpu;
    }
  }

  std::vector<Case> cases;
  for (int k : opt.ks) {
    // The partitions of this k on every GPU (k = 0: the GEMM on the whole device, no all-to-all).
    std::vector<std::unique_ptr<ov::GreenPair>> pairs;
    std::vector<fg::Partition*> comp(static_cast<std::size_t>(n)), comm(static_cast<std::size_t>(n), nullptr);
    for (int d = 0; d < n; ++d) {
      Gpu& g = gpus[static_cast<std::size_t>(d)];
      g.parts->make_current(g.parts->primary());
      if (k == 0) {
        comp[static_cast<std::size_t>(d)] = &g.parts->primary();
        continue;
      }
      pairs.push_back(std::make_unique<ov::GreenPair>(d, k));
      comp[static_cast<std::size_t>(d)] = &pairs.back()->compute();
      comm[static_cast<std::size_t>(d)] = &pairs.back()->comm();
      ov::make_current(*comm[static_cast<std::size_t>(d)]);
      ov::AllToAll::configure_current();
      // Peer mappings are the device's (green contexts share the primary context's memory); asking
      // again from the green context is harmless and covers a driver that keeps them per context.
      for (int p = 0; p < n; ++p) {
        if (p == d) continue;
        const cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
        if (e != cudaSuccess) (void)cudaGetLastError();
      }
    }
    const int comm_sms = k == 0 ? 0 : comm[0]->sm_obtained;
    const int compute_sms = comp[0]->sm_obtained;
    if (k > comm_sms && k > 0) throw std::runtime_error("the all-to-all's partition is smaller than k");
    std::fprintf(stderr, "k=%d: all-to-all on %d SMs (%d CTAs), GEMMs on %d SMs\n", k, comm_sms, k, compute_sms);
    std::vector<cudaStream_t> comm_streams(static_cast<std::size_t>(n));
    for (int d = 0; d < n && k > 0; ++d) comm_streams[static_cast<std::size_t>(d)] = comm[static_cast<std::size_t>(d)]->stream;
    auto comm_current = [&](int d) { ov::make_current(*comm[static_cast<std::size_t>(d)]); };

    // The all-to-all on this partition: checked once per k (it does not depend on the shape).
    const uint32_t seed = kSeed + static_cast<uint32_t>(k);
    bool a2a_checked = false;
    if (k > 0) {
      a2a.fill(seed);
      a2a.poison();
      a2a.launch(comm_streams, k, comm_current);
      for (int d = 0; d < n; ++d) { comm_current(d); CS_CUDA_CHECK(cudaStreamSynchronize(comm_streams[static_cast<std::size_t>(d)])); }
      const std::string why = a2a.check(seed);
      if (!why.empty()) {
        std::fprintf(stderr, "%s: all-to-all check failed at k=%d: %s\n", kProgram, k, why.c_str());
        return cs::kernels::kExitCheckFailed;
      }
      a2a_checked = true;
    }

    for (std::size_t si = 0; si < shapes.size(); ++si) {
      const fg::GemmShape& shape = shapes[si];
      Case c;
      c.shape = shape.name;
      c.gs = &shape;
      c.k = k;
      c.comm_sms = comm_sms;
      c.compute_sms = compute_sms;
      c.sm_count_target = compute_sms < sm_info.sm_count ? compute_sms : 0;
      c.reps = opt.reps;
      c.gpu.resize(static_cast<std::size_t>(n));
      c.a2a_checked = a2a_checked;
      std::vector<std::unique_ptr<fg::LtGemm>> gemm;
      for (int d = 0; d < n; ++d) {
        Gpu& g = gpus[static_cast<std::size_t>(d)];
        fg::Partition& p = *comp[static_cast<std::size_t>(d)];
        g.parts->make_current(p);
        gemm.push_back(std::make_unique<fg::LtGemm>(g.lt, *g.ops[si], fg::Scaling::kBlock,
                                                    fg::Orientation::kWeightsAsA, c.sm_count_target,
                                                    g.workspace->get(), kWorkspaceBytes));
        if (!gemm.back()->supported()) throw std::runtime_error("cuBLASLt: " + gemm.back()->why_not());
        fg::poison_output(*g.ops[si], p.stream);
        if (gemm.back()->enqueue(p.stream) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasLtMatmul failed");
        c.gpu[static_cast<std::size_t>(d)].check = fg::check_output(*g.ops[si], gemm.back()->output_layout(), p.stream);
        if (!c.gpu[static_cast<std::size_t>(d)].check.passed) {
          std::fprintf(stderr, "%s: GEMM check failed: %s k=%d GPU %d: %s\n", kProgram, shape.name.c_str(), k, d,
                       c.gpu[static_cast<std::size_t>(d)].check.describe().c_str());
          return cs::kernels::kExitCheckFailed;
        }
      }
      c.algo = gemm[0]->algo_info();

      // One window: N GEMMs and M all-to-alls per GPU, every stream gated and stamped.
      auto window = [&](int n_gemm, int m_a2a) {
        for (int d = 0; d < n; ++d) {
          const Gpu& g = gpus[static_cast<std::size_t>(d)];
          if (n_gemm > 0) {
            g.parts->make_current(*comp[static_cast<std::size_t>(d)]);
            gate.hold(comp[static_cast<std::size_t>(d)]->stream);
            ov::stamp(comp[static_cast<std::size_t>(d)]->stream, g.gemm_slots());
          }
          if (m_a2a > 0) {
            comm_current(d);
            gate.hold(comm_streams[static_cast<std::size_t>(d)]);
            ov::stamp(comm_streams[static_cast<std::size_t>(d)], g.a2a_slots());
          }
        }
        for (int i = 0; i < std::max(n_gemm, m_a2a); ++i) {
          for (int d = 0; d < n && i < n_gemm; ++d) {
            const Gpu& g = gpus[static_cast<std::size_t>(d)];
            cudaStream_t s = comp[static_cast<std::size_t>(d)]->stream;
            g.parts->make_current(*comp[static_cast<std::size_t>(d)]);
            if (gemm[static_cast<std::size_t>(d)]->enqueue(s) != CUBLAS_STATUS_SUCCESS)
              throw std::runtime_error("cublasLtMatmul failed");
            ov::stamp(s, g.gemm_slots() + i + 1);
          }
          if (i < m_a2a) {
            a2a.launch(comm_streams, k, comm_current);
            for (int d = 0; d < n; ++d) {
              comm_current(d);
              ov::stamp(comm_streams[static_cast<std::size_t>(d)], gpus[static_cast<std::size_t>(d)].a2a_slots() + i + 1);
            }
          }
        }
        if (sampler) sampler->start();
        gate.open();
        WindowStamps w;
        for (int d = 0; d < n; ++d) {
          const Gpu& g = gpus[static_cast<std::size_t>(d)];
          if (m_a2a > 0) {
            comm_current(d);
            CS_CUDA_CHECK(cudaStreamSynchronize(comm_streams[static_cast<std::size_t>(d)]));
          }
          g.parts->make_current(*comp[static_cast<std::size_t>(d)]);
          CS_CUDA_CHECK(cudaStreamSynchronize(comp[static_cast<std::size_t>(d)]->stream));
          g.parts->make_current(g.parts->primary());
          std::vector<unsigned long long> h(2 * (kMaxOps + 1));
          CS_CUDA_CHECK(cudaMemcpy(h.data(), g.stamps->get(), h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
          w.gemm.emplace_back(n_gemm > 0 ? ov::Stamps(h.begin(), h.begin() + n_gemm + 1) : ov::Stamps{});
          w.a2a.emplace_back(m_a2a > 0 ? ov::Stamps(h.begin() + kMaxOps + 1, h.begin() + kMaxOps + 2 + m_a2a)
                                       : ov::Stamps{});
        }
        if (sampler) w.clocks = sampler->stop();
        if (gate.timed_out()) throw std::runtime_error("a gate timed out: the host did not queue a window in 10 s");
        return w;
      };

      // Sizing: a short window of each alone.
      auto slowest = [&](const std::vector<ov::Stamps>& per_gpu) {
        double t = 0;
        for (const auto& s : per_gpu) t = std::max(t, median(ov::op_us(s)));
        return t;
      };
      const double g1 = slowest(window(3, 0).gemm);
      c.n_gemm = std::clamp(static_cast<int>(std::lround(opt.window_ms * 1e3 / g1)), 3, kMaxOps);
      if (k > 0) {
        const double a1 = slowest(window(0, 3).a2a);
        c.m_a2a = std::clamp(static_cast<int>(std::lround(opt.window_ms * 1e3 / a1)), 3, kMaxOps);
        (void)window(c.n_gemm, c.m_a2a);  // warm-up of the together window
      }

      std::vector<std::vector<double>> ga(static_cast<std::size_t>(n)), gt(static_cast<std::size_t>(n)),
          aa(static_cast<std::size_t>(n)), at(static_cast<std::size_t>(n)), ms(static_cast<std::size_t>(n)),
          gspan(static_cast<std::size_t>(n)), aspan(static_cast<std::size_t>(n));
      // Clocks drift with power and temperature (H200: 1575-1980 MHz within one run), and a window
      // starts at the clock the one before it left: the reps rotate the three windows (GEMMs alone,
      // all-to-alls alone, together; then all-to-alls, together, GEMMs; then together, GEMMs,
      // all-to-alls), so that each kind follows each other kind. Under --profile-ranges the first
      // rep's three windows are profiler ranges, in that first order (a window ends synchronised,
      // so a range holds exactly its window's work).
      auto ranged = [&](bool on, int n_gemm, int m_a2a) {
        if (on) CS_CUDA_CHECK(cudaProfilerStart());
        WindowStamps w = window(n_gemm, m_a2a);
        if (on) CS_CUDA_CHECK(cudaProfilerStop());
        return w;
      };
      std::vector<cs::kernels::ClockSummary> clk_gemm, clk_a2a, clk_together;
      auto gemm_alone = [&](bool profile) {
        const WindowStamps wg = ranged(profile, c.n_gemm, 0);
        clk_gemm.push_back(wg.clocks);
        for (int d = 0; d < n; ++d) {
          const auto v = ov::op_us(wg.gemm[static_cast<std::size_t>(d)]);
          ga[static_cast<std::size_t>(d)].insert(ga[static_cast<std::size_t>(d)].end(), v.begin(), v.end());
        }
      };
      auto a2a_alone = [&](bool profile) {
        const WindowStamps wa = ranged(profile, 0, c.m_a2a);
        clk_a2a.push_back(wa.clocks);
        for (int d = 0; d < n; ++d) {
          const auto v = ov::op_us(wa.a2a[static_cast<std::size_t>(d)]);
          aa[static_cast<std::size_t>(d)].insert(aa[static_cast<std::size_t>(d)].end(), v.begin(), v.end());
        }
      };
      // The together window; the last one's results are checked too. Returns an exit code.
      auto together = [&](bool profile, bool last) {
        if (last) {
          for (int d = 0; d < n; ++d) {
            gpus[static_cast<std::size_t>(d)].parts->make_current(*comp[static_cast<std::size_t>(d)]);
            fg::poison_output(*gpus[static_cast<std::size_t>(d)].ops[si], comp[static_cast<std::size_t>(d)]->stream);
            CS_CUDA_CHECK(cudaStreamSynchronize(comp[static_cast<std::size_t>(d)]->stream));
          }
          a2a.poison();
        }
        const WindowStamps wt = ranged(profile, c.n_gemm, c.m_a2a);
        clk_together.push_back(wt.clocks);
        for (int d = 0; d < n; ++d) {
          const auto ud = static_cast<std::size_t>(d);
          auto v = ov::op_us(wt.gemm[ud], wt.a2a[ud]);
          c.gpu[ud].gemm_ops_inside += static_cast<int>(v.size());
          gt[ud].insert(gt[ud].end(), v.begin(), v.end());
          v = ov::op_us(wt.a2a[ud], wt.gemm[ud]);
          c.gpu[ud].a2a_ops_inside += static_cast<int>(v.size());
          at[ud].insert(at[ud].end(), v.begin(), v.end());
          ms[ud].push_back(ov::makespan_us(wt.gemm[ud], wt.a2a[ud]));
          gspan[ud].push_back(ov::span_us(wt.gemm[ud]));
          aspan[ud].push_back(ov::span_us(wt.a2a[ud]));
        }
        if (!last) return cs::kernels::kExitOk;
        for (int d = 0; d < n; ++d) {
          const auto ud = static_cast<std::size_t>(d);
          gpus[ud].parts->make_current(*comp[ud]);
          c.gpu[ud].check_after = fg::check_output(*gpus[ud].ops[si], gemm[ud]->output_layout(), comp[ud]->stream);
          if (!c.gpu[ud].check_after.passed) {
            std::fprintf(stderr, "%s: GEMM check after overlap failed: %s k=%d GPU %d: %s\n", kProgram,
                         shape.name.c_str(), k, d, c.gpu[ud].check_after.describe().c_str());
            return cs::kernels::kExitCheckFailed;
          }
        }
        const std::string why = a2a.check(seed);
        if (!why.empty()) {
          std::fprintf(stderr, "%s: all-to-all check after overlap failed at k=%d: %s\n", kProgram, k, why.c_str());
          return cs::kernels::kExitCheckFailed;
        }
        c.a2a_checked_after = true;
        return cs::kernels::kExitOk;
      };
      for (int r = 0; r < opt.reps; ++r) {
        if (k == 0) {
          gemm_alone(false);
          continue;
        }
        const bool profile = opt.profile_ranges && r == 0;
        for (int w = 0; w < 3; ++w) {
          switch ((r + w) % 3) {
            case 0: gemm_alone(profile); break;
            case 1: a2a_alone(profile); break;
            default:
              if (const int rc = together(profile, r + 1 == opt.reps); rc != cs::kernels::kExitOk) return rc;
          }
        }
      }
      for (int d = 0; d < n; ++d) {
        const auto ud = static_cast<std::size_t>(d);
        PerGpu& p = c.gpu[ud];
        p.gemm_alone_us = median(ga[ud]);
        c.gemm_alone_us = std::max(c.gemm_alone_us, p.gemm_alone_us);
        if (k == 0) continue;
        p.a2a_alone_us = median(aa[ud]);
        // Where no operation fell wholly inside the overlap, the stream's mean stands in.
        p.gemm_together_us = gt[ud].empty() ? median(gspan[ud]) / c.n_gemm : median(gt[ud]);
        p.a2a_together_us = at[ud].empty() ? median(aspan[ud]) / c.m_a2a : median(at[ud]);
        p.makespan_us = median(ms[ud]);
        p.gemm_span_us = median(gspan[ud]);
        p.a2a_span_us = median(aspan[ud]);
        c.a2a_alone_us = std::max(c.a2a_alone_us, p.a2a_alone_us);
        c.gemm_together_us = std::max(c.gemm_together_us, p.gemm_together_us);
        c.a2a_together_us = std::max(c.a2a_together_us, p.a2a_together_us);
        c.makespan_us = std::max(c.makespan_us, p.makespan_us);
      }
      if (sampler) {
        c.clocks_gemm_alone = cs::kernels::combine(clk_gemm);
        if (k > 0) {
          c.clocks_a2a_alone = cs::kernels::combine(clk_a2a);
          c.clocks_together = cs::kernels::combine(clk_together);
        }
      }
      if (k > 0) {
        c.serial_us = c.n_gemm * c.gemm_alone_us + c.m_a2a * c.a2a_alone_us;
        c.ideal_us = std::max(c.n_gemm * c.gemm_alone_us, c.m_a2a * c.a2a_alone_us);
      }
      std::fprintf(stderr, "  %s\n", table_line(c, static_cast<double>(a2a_bytes), n).c_str());
      cases.push_back(std::move(c));
      for (int d = 0; d < n; ++d) gpus[static_cast<std::size_t>(d)].parts->make_current(gpus[static_cast<std::size_t>(d)].parts->primary());
    }
    pairs.clear();  // every case above ended with the primary contexts current
  }

  // JSON.
  const double busbw_factor = n > 1 ? static_cast<double>(n - 1) / n : 1.0;
  std::string out;
  JsonWriter w(out, opt.compact ? 0 : 2);
  cs::kernels::begin_bench_json(w, kSchemaVersion, prov);
  w.field("cublaslt_version", fg::cublaslt_version_string());
  w.field("gpus", n);
  w.field("sm_count", sm_info.sm_count);
  w.field("green_ctx_granularity", sm_info.coscheduled_alignment);
  w.field("green_ctx_min_sms", sm_info.min_partition_size);
  w.field("a2a_bytes_per_gpu", a2a_bytes);
  w.field("a2a_kernel", "cs_all_to_all tiled (all_to_all/copy_kernels.cuh), k CTAs x 512 threads, one per SM");
  w.field("a2a_payload", "balanced: bytes/n to every GPU, itself included (FP8 dispatch-like)");
  w.field("gemm", "cuBLASLt FP8 E4M3, block scaling 1x128 (X) / 128x128 (W), W as A, BF16 out; SM count target = "
                  "the GEMM partition's SMs (0: whole device)");
  w.field("window_ms", opt.window_ms);
  w.field("reps", opt.reps);
  w.field("timing",
          "%globaltimer stamps from one-thread kernels before the first and after each operation of a stream (each "
          "op's time includes one stamp launch); every stream gated on a host flag until the window is queued; no L2 "
          "flush between operations; alone: median op time over the alone windows; together: median over the ops "
          "that began and ended while both streams were busy; values per case are the slowest GPU's");
  w.field("busbw_formula", n > 1 ? "a2a_bytes_per_gpu / time x (n-1)/n"
                                   : "one GPU: a2a_bytes_per_gpu / time (the local copy's bytes read, = written)");
  w.field("a2a_scope", n > 1 ? "nvlink_all_to_all" : "local_copy_only");
  w.end_object();
  w.key("cases").begin_array();
  for (const Case& c : cases) write_case(w, c, static_cast<double>(a2a_bytes), busbw_factor);
  w.end_array();
  w.end_object();
  out += "\n";
  if (!opt.json_path.empty() && !cs::kernels::write_file_atomically(opt.json_path, out)) {
    std::fprintf(stderr, "%s: cannot write %s\n", kProgram, opt.json_path.c_str());
    return cs::kernels::kExitError;
  }
  std::string lines = "# " + std::to_string(n) + " GPUs; all-to-all " + std::to_string(a2a_bytes) +
                      " B per GPU; times in us per operation (slowest GPU); slow = together / alone\n";
  lines += "# shape                      k  comm/gemm SMs  gemm_alone gemm_tog  slow TFLOPS  a2a_alone  a2a_tog   slow "
           "busbw   N   M  makespan    serial     ideal\n";
  for (const Case& c : cases) lines += table_line(c, static_cast<double>(a2a_bytes), n) + "\n";
  if (!cs::kernels::write_stdout(kProgram, lines)) return cs::kernels::kExitError;
  for (auto& g : gpus) cublasLtDestroy(g.lt);
  return cs::kernels::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return cs::kernels::guarded_main(kProgram, [&] { return run(argc, argv); });
}
