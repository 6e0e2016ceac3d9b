// cs_fp8_gemm: FP8 (E4M3) GEMMs through cuBLASLt with DeepSeek's fine-grained scaling (1x128
// activation tiles, 128x128 weight blocks; one scale per tensor where cuBLASLt has no block
// scaling), BF16 output, on the DeepGEMM and DeepSeek-V3 shapes (fp8_gemm/shapes.h), each on a
// limited number of SMs: a green context of that many SMs, cuBLASLt's SM-count target on the whole
// device, or both. Every case is checked against a reference before it is timed (cold L2, CUDA
// events, median and p10/p90 of the runs). DeepGEMM-style lines go to stdout, progress to stderr,
// and with --json PATH one JSON object (schema_version 1, provenance, one record per case).
//
// Exit codes: 0 done; 1 error (CUDA or cuBLASLt failure, bad arguments, output not written);
// 2 no usable GPU or driver; 3 a result disagreed with the reference (nothing on stdout then).
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "common/args.h"
#include "common/check.h"
#include "common/clock_sampler.h"
#include "common/json_writer.h"
#include "common/provenance.h"
#include "fp8_gemm/device_buffer.h"
#include "fp8_gemm/lt_algos.h"
#include "fp8_gemm/lt_matmul.h"
#include "fp8_gemm/operands.h"
#include "fp8_gemm/report.h"
#include "fp8_gemm/shapes.h"
#include "fp8_gemm/sm_partition.h"
#include "fp8_gemm/timing.h"

namespace {

namespace fg = cs::kernels::fp8_gemm;
using cs::kernels::JsonWriter;

constexpr int kSchemaVersion = 1;
constexpr const char* kProgram = "cs_fp8_gemm";
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // cuBLASLt's advice for Hopper
constexpr int kHeuristicCandidates = 32;                        // --algos all: the heuristic's ranked results taken

struct Options {
  std::string json_path;
  std::string shapes = "all";
  std::vector<int> sms = {132, 112, 96, 80, 64, 48, 32, 16};
  std::vector<fg::Method> methods = {fg::Method::kGreen, fg::Method::kSmTarget, fg::Method::kGreenSmTarget};
  int runs = 30;
  int warmup = 3;
  int flush_mib = 256;
  std::string scaling = "auto";
  bool sample_clocks = false;  // --sample-clocks
  bool probe_clocks = false;   // --probe-clocks
  bool compact = false;
  bool all_algos = false;  // --algos all
};

void print_usage() {
  std::printf(
      "usage: %s [options]\n"
      "FP8 E4M3 GEMMs through cuBLASLt (BF16 out) on DeepGEMM and DeepSeek-V3 shapes, each on a limited\n"
      "number of SMs; every case is checked against a reference before it is timed.\n"
      "  --json PATH        also write the results as JSON (schema_version %d) to PATH\n"
      "  --shapes SET       all (default), deepgemm, grouped, v3, quick\n"
      "  --sms LIST         SM limits, default 132,112,96,80,64,48,32,16\n"
      "  --methods LIST     green,sm_target,green_sm_target (default: all three)\n"
      "  --scaling MODE     auto (block scaling where cuBLASLt has it, else per tensor), block, per_tensor\n"
      "  --runs N           timed runs per case, at least 20 (default 30)\n"
      "  --warmup N         untimed runs first (default 3)\n"
      "  --flush-mib N      buffer written before each run to make L2 cold (default 256)\n"
      "  --sample-clocks    poll the SM clock, power and power-cap state (NVML, every ms) over each case's timed runs\n"
      "  --probe-clocks     read the SM clock on the SMs right after each timed run (clock64 over the global timer)\n"
      "  --algos WHICH      heuristic (default: the heuristic's first choice) or all (every configuration\n"
      "                     cuBLASLt can run the case in: its ranked heuristic list, then every tile of every\n"
      "                     algorithm id; each checked, then timed)\n"
      "  --compact          JSON on one line\n"
      "Exit codes: 0 done, 1 error, 2 no usable GPU or driver, 3 a result disagreed with the reference.\n",
      kProgram, kSchemaVersion);
}

using cs::kernels::parse_int;
using cs::kernels::split_commas;

// Returns an error message, empty when the arguments are good.
std::string parse_args(int argc, char** argv, Options& o, bool& help) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      help = true;
      return "";
    }
    if (a == "--compact") {
      o.compact = true;
      continue;
    }
    if (a == "--sample-clocks") {
      o.sample_clocks = true;
      continue;
    }
    if (a == "--probe-clocks") {
      o.probe_clocks = true;
      continue;
    }
    const char* v = next();
    if (v == nullptr) return "'" + a + "' needs a value (try --help)";
    if (a == "--json") {
      o.json_path = v;
    } else if (a == "--shapes") {
      if (fg::shape_set(v).empty()) return std::string("unknown shape set '") + v + "'";
      o.shapes = v;
    } else if (a == "--sms") {
      o.sms.clear();
      for (const auto& t : split_commas(v)) {
        int n = 0;
        if (!parse_int(t.c_str(), 1, 4096, n)) return "bad SM count '" + t + "' in --sms";
        o.sms.push_back(n);
      }
    } else if (a == "--methods") {
      o.methods.clear();
      for (const auto& t : split_commas(v)) {
        if (t == "green") o.methods.push_back(fg::Method::kGreen);
        else if (t == "sm_target") o.methods.push_back(fg::Method::kSmTarget);
        else if (t == "green_sm_target") o.methods.push_back(fg::Method::kGreenSmTarget);
        else return "unknown method '" + t + "' in --methods";
      }
    } else if (a == "--scaling") {
      o.scaling = v;
      if (o.scaling != "auto" && o.scaling != "block" && o.scaling != "per_tensor") {
        return "unknown scaling '" + o.scaling + "'";
      }
    } else if (a == "--algos") {
      const std::string which = v;
      if (which != "heuristic" && which != "all") return "unknown --algos '" + which + "' (heuristic or all)";
      o.all_algos = which == "all";
    } else if (a == "--runs") {
      if (!parse_int(v, 20, 100000, o.runs)) return std::string("--runs wants an integer >= 20, got '") + v + "'";
    } else if (a == "--warmup") {
      if (!parse_int(v, 0, 1000, o.warmup)) return std::string("bad --warmup '") + v + "'";
    } else if (a == "--flush-mib") {
      if (!parse_int(v, 1, 65536, o.flush_mib)) return std::string("bad --flush-mib '") + v + "'";
    } else {
      return "unknown argument '" + a + "' (try --help)";
    }
  }
  return "";
}

struct Candidate {
  fg::Scaling scaling;
  fg::Orientation orientation;
};

// Block scaling with W in cuBLASLt's A slot (D row-major, as DeepGEMM writes it), then with X
// there, then one scale per tensor: the first that cuBLASLt's heuristic accepts on the full device.
std::vector<Candidate> candidates(const std::string& scaling) {
  std::vector<Candidate> out;
  if (scaling != "per_tensor") {
    out.push_back({fg::Scaling::kBlock, fg::Orientation::kWeightsAsA});
    out.push_back({fg::Scaling::kBlock, fg::Orientation::kActivationsAsA});
  }
  if (scaling != "block") out.push_back({fg::Scaling::kPerTensor, fg::Orientation::kWeightsAsA});
  return out;
}

struct Skipped {
  std::string what;
  std::string why;
};

// After a failed check with block scaling: which other reading of the scales would have matched
// cuBLASLt's result (a layout misunderstanding shows up here rather than as noise).
void diagnose_scale_reading(const fg::Operands& ops, const fg::LtGemm& gemm, cudaStream_t stream) {
  for (unsigned r = 1; r < fg::kScaleReadings; ++r) {
    const fg::CheckResult c = fg::check_output(ops, gemm.output_layout(), stream, r);
    std::fprintf(stderr, "%s:   reading the scales as%s%s%s: %s\n", kProgram,
                 (r & fg::kSxKBlocksFastest) ? " [sx k-blocks fastest]" : "",
                 (r & fg::kSwNBlocksFastest) ? " [sw n-blocks fastest]" : "",
                 (r & fg::kScalesInverted) ? " [inverted]" : "", c.describe().c_str());
  }
}

int run(int argc, char** argv) {
  Options opt;
  bool help = false;
  const std::string bad = parse_args(argc, argv, opt, help);
  if (help) {
    print_usage();
    return cs::kernels::kExitOk;
  }
  if (!bad.empty()) {
    std::fprintf(stderr, "%s: %s\n", kProgram, bad.c_str());
    return cs::kernels::kExitError;
  }

  const cs::kernels::GpuAvailability availability = cs::kernels::probe_gpus();
  if (availability.count == 0) return cs::kernels::report_no_gpu(kProgram, availability);
  const cs::kernels::Provenance prov = cs::kernels::collect_provenance(argc, argv);
  const cs::kernels::GpuInfo& gpu = prov.gpus.at(0);
  if (gpu.cc_major != 9) {
    std::fprintf(stderr, "%s: GPU 0 is %s (compute capability %d.%d); this program is built for sm_90a (Hopper) only\n",
                 kProgram, gpu.name.c_str(), gpu.cc_major, gpu.cc_minor);
    return cs::kernels::kExitCheckFailed;
  }
  CS_CUDA_CHECK(cudaSetDevice(0));
  CS_CUDA_CHECK(cudaFree(nullptr));  // makes the primary context current

  bool want_green = false;
  for (fg::Method m : opt.methods) want_green |= m != fg::Method::kSmTarget;
  std::vector<int> green_limits;
  if (want_green) {
    for (int s : opt.sms) {
      if (s <= gpu.sm_count) green_limits.push_back(s);
    }
  }
  fg::SmPartitions parts(0, green_limits, opt.runs);
  std::unique_ptr<cs::kernels::ClockSampler> sampler;
  if (opt.sample_clocks) {
    std::string why;
    sampler = cs::kernels::ClockSampler::open(gpu.pci_bus_id, std::chrono::milliseconds(1), why);
    if (!sampler) {
      std::fprintf(stderr, "%s: --sample-clocks: %s\n", kProgram, why.c_str());
      return cs::kernels::kExitNoGpu;
    }
  }
  std::fprintf(stderr, "%s: %s, %d SMs; green contexts: minimum partition %d SMs, granularity %d\n", kProgram,
               gpu.name.c_str(), parts.info().sm_count, parts.info().min_partition_size,
               parts.info().coscheduled_alignment);
  for (int s : green_limits) {
    const fg::Partition* p = parts.green(s);
    if (p->usable()) {
      std::fprintf(stderr, "  green context for %d SMs: %d SMs\n", s, p->sm_obtained);
    } else {
      std::fprintf(stderr, "  green context for %d SMs: not made: %s\n", s, p->error.c_str());
    }
  }

  cublasLtHandle_t handle = nullptr;
  if (cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: cublasLtCreate failed\n", kProgram);
    return cs::kernels::kExitError;
  }
  struct HandleGuard {
    cublasLtHandle_t h;
    ~HandleGuard() { cublasLtDestroy(h); }
  } handle_guard{handle};
  const fg::DeviceBuffer workspace(kWorkspaceBytes);
  const fg::DeviceBuffer flush(static_cast<std::size_t>(opt.flush_mib) << 20);
  std::unique_ptr<fg::ClockProbes> probes;
  if (opt.probe_clocks) probes = std::make_unique<fg::ClockProbes>(opt.runs);
  std::fprintf(stderr, "%s: cuBLASLt %zu; %d timed runs per case after %d warm-up runs, %d MiB written before each\n",
               kProgram, cublasLtGetVersion(), opt.runs, opt.warmup, opt.flush_mib);

  const std::vector<fg::GemmShape> shapes = fg::shape_set(opt.shapes);
  std::vector<fg::CaseRecord> cases;
  std::vector<Skipped> skipped;
  std::vector<std::string> scaling_notes;
  for (std::size_t si = 0; si < shapes.size(); ++si) {
    const fg::GemmShape& shape = shapes[si];
    parts.make_current(parts.primary());
    fg::Operands ops(shape);

    // The scaling mode and operand order, chosen once per shape on the whole device.
    const Candidate* chosen = nullptr;
    const std::vector<Candidate> cands = candidates(opt.scaling);
    std::string refused;
    for (const Candidate& c : cands) {
      const fg::LtGemm probe(handle, ops, c.scaling, c.orientation, 0, workspace.get(), kWorkspaceBytes);
      if (probe.supported()) {
        chosen = &c;
        break;
      }
      refused += std::string(refused.empty() ? "" : "; ") + fg::scaling_name(c.scaling) + "/" +
                 fg::orientation_name(c.orientation) + ": " + probe.why_not();
    }
    char head[160];
    std::snprintf(head, sizeof head, "%s groups=%d m=%d n=%d k=%d", shape.name.c_str(), shape.groups, shape.m, shape.n,
                  shape.k);
    if (chosen == nullptr) {
      std::fprintf(stderr, "%s: %s: cuBLASLt refused every scaling mode: %s\n", kProgram, head, refused.c_str());
      return cs::kernels::kExitError;
    }
    std::fprintf(stderr, "[%zu/%zu] %s: scaling %s, %s%s%s\n", si + 1, shapes.size(), head,
                 fg::scaling_name(chosen->scaling), fg::orientation_name(chosen->orientation),
                 refused.empty() ? "" : " (refused: ", refused.empty() ? "" : (refused + ")").c_str());
    if (!refused.empty()) scaling_notes.push_back(std::string(head) + ": refused " + refused);
    ops.fill(0x1234567ull + 7919ull * si, chosen->scaling == fg::Scaling::kPerTensor, parts.primary().stream);

    for (int sm : opt.sms) {
      for (fg::Method method : opt.methods) {
        fg::Partition* p = nullptr;
        int target = 0;
        if (method == fg::Method::kSmTarget) {
          if (sm > gpu.sm_count) continue;
          p = &parts.primary();
          target = sm < gpu.sm_count ? sm : 0;  // the full count is cuBLASLt's default
        } else {
          p = parts.green(sm);
          if (p == nullptr) continue;
          if (!p->usable()) {
            skipped.push_back({std::string(head) + " sms=" + std::to_string(sm) + " " + fg::method_name(method),
                               "green context not made: " + p->error});
            continue;
          }
          if (method == fg::Method::kGreenSmTarget) {
            if (p->sm_obtained >= gpu.sm_count) continue;  // the same as plain green
            target = p->sm_obtained;
          }
        }
        parts.make_current(*p);
        const std::string what = std::string(head) + " sms=" + std::to_string(sm) + " " + fg::method_name(method);
        const fg::LtGemm chosen_gemm(handle, ops, chosen->scaling, chosen->orientation, target, workspace.get(),
                                     kWorkspaceBytes);
        if (!chosen_gemm.supported()) {
          skipped.push_back({what, chosen_gemm.why_not()});
          std::fprintf(stderr, "  sms=%d %s: skipped: %s\n", sm, fg::method_name(method),
                       chosen_gemm.why_not().c_str());
          continue;
        }
        // Returns false when the run must end (a check failed on the heuristic's own choice).
        auto measure = [&](const fg::LtGemm& gemm) {
          fg::CaseRecord rec;
          rec.shape = shape;
          rec.method = method;
          rec.sm_limit = sm;
          rec.sm_obtained = p->sm_obtained;
          rec.sm_count_target = target;
          rec.scaling = chosen->scaling;
          rec.orientation = chosen->orientation;
          rec.algo = gemm.algo_info();
          const std::string label = what + (rec.algo.forced ? " tile " + fg::lt_tile_name(rec.algo.tile_id) : "");
          if (!gemm.supported()) {
            skipped.push_back({label, gemm.why_not()});
            return true;
          }

          // Correct first: a poisoned D, one run, then the reference.
          fg::poison_output(ops, p->stream);
          const cublasStatus_t st = gemm.enqueue(p->stream);
          if (st != CUBLAS_STATUS_SUCCESS) {
            // Kept as a skipped case rather than ending the sweep: an algorithm chosen for the whole
            // device may not launch on a small partition (thread-block clusters, say).
            const cudaError_t launch = cudaGetLastError();
            std::string why = "cublasLtMatmul failed: " + fg::cublas_status_name(st);
            if (launch != cudaSuccess) why += " (" + cs::kernels::describe(launch) + ")";
            skipped.push_back({label, why});
            std::fprintf(stderr, "  %s: skipped: %s\n", label.c_str(), why.c_str());
            CS_CUDA_CHECK(cudaStreamSynchronize(p->stream));  // a sticky error ends the run here
            return true;
          }
          rec.check = fg::check_output(ops, gemm.output_layout(), p->stream);
          if (!rec.check.passed) {
            std::fprintf(stderr, "%s: check failed: %s sms=%d (%s) scaling %s %s: %s\n", kProgram, label.c_str(),
                         rec.sm_obtained, fg::method_name(method), fg::scaling_name(rec.scaling),
                         fg::orientation_name(rec.orientation), rec.check.describe().c_str());
            if (rec.algo.forced) {  // a configuration the library would not pick: recorded, not timed
              skipped.push_back({label, "check failed: " + rec.check.describe()});
              return true;
            }
            if (rec.scaling == fg::Scaling::kBlock) diagnose_scale_reading(ops, gemm, p->stream);
            return false;
          }
          rec.timing = fg::time_gemm(
              gemm, *p, flush, opt.warmup, opt.runs,
              [&] {
                if (sampler) sampler->start();
              },
              probes.get());
          if (sampler) rec.clocks = sampler->stop();
          std::fprintf(stderr, "  %s\n", fg::deepgemm_line(rec).c_str());
          cases.push_back(rec);
          return true;
        };
        if (!measure(chosen_gemm)) return cs::kernels::kExitCheckFailed;
        if (!opt.all_algos) continue;
        fg::LtSearchCounts counts;
        const std::vector<cublasLtMatmulAlgo_t> algos = chosen_gemm.candidate_algos(kHeuristicCandidates, &counts);
        std::fprintf(stderr,
                     "  %zu configurations: %d from the heuristic; %d algorithm ids listing %d tiles, %d (id, tile) "
                     "pairs tried, %d accepted\n",
                     algos.size(), counts.heuristic, counts.algo_ids, counts.tiles_listed, counts.tiles_tried,
                     counts.accepted);
        for (const cublasLtMatmulAlgo_t& algo : algos) {
          const fg::LtGemm gemm(handle, ops, chosen->scaling, chosen->orientation, target, workspace.get(),
                                kWorkspaceBytes, &algo);
          if (!measure(gemm)) return cs::kernels::kExitCheckFailed;
        }
      }
    }
    parts.make_current(parts.primary());
  }

  const cs::kernels::Provenance after = cs::kernels::collect_provenance(argc, argv);

  std::string out;
  JsonWriter w(out, opt.compact ? 0 : 2);
  cs::kernels::begin_bench_json(w, kSchemaVersion, prov);
  w.field("cublaslt_version", fg::cublaslt_version_string());
  w.field("sm_total", gpu.sm_count);
  w.field("sm_clock_mhz_after_sweep", after.gpus.at(0).sm_clock_mhz.current);
  w.key("green_context")
      .begin_object(true)
      .field("min_partition_size", parts.info().min_partition_size)
      .field("coscheduled_alignment", parts.info().coscheduled_alignment)
      .end_object();
  w.field("clock_sampling", opt.sample_clocks ? "NVML every 1 ms over each case's timed runs (the L2 flushes between "
                                                "them included), from the end of its warm-up"
                                              : "off");
  w.field("clock_probing", opt.probe_clocks ? "one thread spinning 100000 SM cycles (clock64) over the global timer's "
                                              "nanoseconds, right after each timed run, outside its events"
                                            : "off");
  w.key("partitions").begin_array();
  for (int s : green_limits) {
    const fg::Partition* p = parts.green(s);
    w.begin_object(true).field("sm_limit", s).field("sm_obtained", p->sm_obtained);
    w.key("error");
    if (p->error.empty()) w.null(); else w.value(p->error);
    w.end_object();
  }
  w.end_array();
  w.field("runs", opt.runs);
  w.field("warmup", opt.warmup);
  w.field("flush_bytes", flush.bytes());
  w.field("workspace_bytes", kWorkspaceBytes);
  w.field("scaling_requested", opt.scaling);
  w.field("algos", opt.all_algos ? "all: the heuristic's first, then its ranked list and every tile of every "
                                   "algorithm id (algo.forced)"
                                 : "heuristic");
  w.key("scaling_notes").value(scaling_notes, false);
  w.field("grouped_execution", "one cublasLtMatmul call per group, back to back in one stream, timed together");
  w.field("flops", "2 * m * n * k * groups");
  w.field("bytes", "groups * (m * k + n * k + 2 * m * n): FP8 inputs read once, BF16 output written once");
  w.key("tolerance")
      .begin_object(true)
      .field("rel", fg::kRelTol)
      .field("rms", fg::kRmsTol)
      .field("rel_l2", fg::kRelL2Tol)
      .end_object();
  w.end_object();
  w.key("cases").begin_array();
  for (const auto& c : cases) fg::write_case(w, c);
  w.end_array();
  w.key("skipped").begin_array();
  for (const auto& s : skipped) w.begin_object(true).field("case", s.what).field("why", s.why).end_object();
  w.end_array();
  w.end_object();
  out.push_back('\n');

  if (!opt.json_path.empty() && !cs::kernels::write_file_atomically(opt.json_path, out)) {
    std::fprintf(stderr, "%s: cannot write %s\n", kProgram, opt.json_path.c_str());
    return cs::kernels::kExitError;
  }
  std::string lines;
  for (const auto& c : cases) lines += fg::deepgemm_line(c) + "\n";
  if (!cs::kernels::write_stdout(kProgram, lines)) return cs::kernels::kExitError;
  std::fprintf(stderr, "%s: %zu cases measured, %zu skipped%s%s\n", kProgram, cases.size(), skipped.size(),
               opt.json_path.empty() ? "" : "; JSON in ", opt.json_path.c_str());
  return cs::kernels::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return cs::kernels::guarded_main(kProgram, [&] { return run(argc, argv); });
}
