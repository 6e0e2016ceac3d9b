#include "calibrate/measurements.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "calibrate/json_file.h"
#include "hw/user_error.h"

namespace cs::calibrate {

using nlohmann::json;

bool measured_on(const Provenance& p, const std::string& catalog_name) {
  std::string gpu = p.gpu;
  for (char& c : gpu) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return !catalog_name.empty() && gpu.find(catalog_name) != std::string::npos;
}

std::string GemmCase::key() const {
  std::string k = name;
  for (int64_t v : {shape.m, shape.n, shape.k, static_cast<int64_t>(shape.groups)}) k.append(" ").append(std::to_string(v));
  if (shape.dtype == sim::DType::kFp8 && shape.scaling == sim::Fp8Scaling::kTiles) k.append(" 1x128x1x128");
  return k;
}

namespace {

const json& field(const json& j, const char* name, const std::string& file, const std::string& where) {
  if (!j.is_object() || !j.contains(name))
    throw hw::UserError(file, 0, 0, where + " has no '" + name + "': not a kernel result of this version");
  return j.at(name);
}

double num(const json& j, const char* name, const std::string& file, const std::string& where) {
  const json& v = field(j, name, file, where);
  if (!v.is_number()) throw hw::UserError(file, 0, 0, where + "." + name + " must be a number");
  return v.get<double>();
}

// A GEMM's m, n, k (under `k_key`) and groups, FP8 unless the caller sets another type.
sim::GemmShape gemm_shape(const json& c, const char* k_key, const std::string& file, const std::string& where) {
  return sim::GemmShape{static_cast<int64_t>(num(c, "m", file, where)), static_cast<int64_t>(num(c, "n", file, where)),
                        static_cast<int64_t>(num(c, k_key, file, where)), sim::DType::kFp8,
                        static_cast<int>(num(c, "groups", file, where))};
}

void read_gemms(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& bench = field(d, "bench", file, "the file");
  const int sm_total = static_cast<int>(num(bench, "sm_total", file, "bench"));
  int used = 0, other_scaling = 0, other_method = 0, unchecked = 0, clocked = 0, probed = 0;
  const json& cases = field(d, "cases", file, "the file");
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string where = "cases[" + std::to_string(i) + "]";
    // DeepSeek's block scaling (1x128 activations, 128x128 weights) is what training runs; a
    // per-tensor-scaled GEMM is a different kernel and would blur the fit.
    if (field(c, "scaling", file, where).get<std::string>() != "block_1x128_128x128") { ++other_scaling; continue; }
    // A partition as DeepGEMM uses one: the kernel told its SM count and confined to it (green
    // context). cuBLASLt's SM target alone or the green context alone are kept out.
    const std::string method = field(c, "method", file, where).get<std::string>();
    const int sms = static_cast<int>(num(c, "sm_obtained", file, where));
    if (!(method == "green_sm_target" || (method == "green" && sms == sm_total))) { ++other_method; continue; }
    if (!field(c, "checked", file, where).get<bool>()) { ++unchecked; continue; }
    GemmCase g;
    g.name = field(c, "name", file, where).get<std::string>();
    g.shape = gemm_shape(c, "k", file, where);
    g.sms = sms;
    g.time_us = num(c, "median_us", file, where);
    g.p10_us = num(c, "p10_us", file, where);
    g.p90_us = num(c, "p90_us", file, where);
    // The clock read on the SMs right after each run where probed (--probe-clocks), else NVML's
    // median sample: NVML lags a short case (kernels/fp8_gemm/clock_probe.h).
    if (c.contains("sm_clock_probed") && num(c["sm_clock_probed"], "probes", file, where + ".sm_clock_probed") > 0) {
      g.clock_MHz = num(c["sm_clock_probed"], "mhz_median", file, where + ".sm_clock_probed");
      ++probed;
    } else if (c.contains("clocks") && num(c["clocks"], "samples", file, where + ".clocks") > 0) {
      g.clock_MHz = num(c["clocks"], "sm_mhz_median", file, where + ".clocks");
    }
    clocked += g.clock_MHz > 0;
    g.index = static_cast<int>(i);
    g.source = source;
    set.gemms.push_back(g);
    ++used;
  }
  std::ostringstream note;
  note << file << ": " << used << " FP8 GEMM cases (block scaling, SM partitions)";
  if (clocked)
    note << ", " << clocked << " with their SM clock " << (probed == clocked ? "probed on the SMs" : probed > 0 ? "probed or sampled" : "sampled by NVML")
         << " (fit and validate take them at it where the profile has clocks)";
  if (other_scaling) note << "; " << other_scaling << " with other scaling left out";
  if (other_method) note << "; " << other_method << " with SM target or green context alone left out";
  if (unchecked) note << "; " << unchecked << " unchecked left out";
  set.notes.push_back(note.str());
}

void read_all_to_alls(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& bench = field(d, "bench", file, "the file");
  const int gpus = static_cast<int>(num(bench, "gpus", file, "bench"));
  const json& records = field(d, "records", file, "the file");
  int used = 0, failed = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const json& r = records[i];
    const std::string where = "records[" + std::to_string(i) + "]";
    if (!field(r, "check_passed", file, where).get<bool>()) { ++failed; continue; }
    AllToAllCase a;
    a.impl = field(r, "impl", file, where).get<std::string>();
    a.mode = field(r, "mode", file, where).get<std::string>();
    a.gpus = gpus;
    a.ctas = static_cast<int>(num(r, "k", file, where));
    a.size_bytes = num(r, "size_bytes", file, where);
    a.time_us = num(r, "time_us", file, where);
    a.index = static_cast<int>(i);
    a.source = source;
    set.all_to_alls.push_back(a);
    ++used;
  }
  set.notes.push_back(file + ": " + std::to_string(used) + " all-to-all cases on " + std::to_string(gpus) + " GPUs" +
                      (failed ? "; " + std::to_string(failed) + " that failed their check left out" : ""));
}

void read_overlaps(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& bench = field(d, "bench", file, "the file");
  const int gpus = static_cast<int>(num(bench, "gpus", file, "bench"));
  const double bytes = num(bench, "a2a_bytes_per_gpu", file, "bench");
  const bool local = bench.value("a2a_scope", "") == "local_copy_only";
  const json& cases = field(d, "cases", file, "the file");
  int used = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string where = "cases[" + std::to_string(i) + "]";
    if (num(c, "k", file, where) == 0) continue;  // the GEMM alone on the whole GPU: no overlap
    OverlapCase o;
    o.shape_name = field(c, "shape", file, where).get<std::string>();
    o.shape = gemm_shape(c, "k_dim", file, where);  // cs_overlap's "k" is the CTA count
    o.ctas = static_cast<int>(num(c, "k", file, where));
    o.comm_sms = static_cast<int>(num(c, "comm_sms", file, where));
    o.compute_sms = static_cast<int>(num(c, "compute_sms", file, where));
    o.a2a_bytes = bytes;
    o.gemm_alone_us = num(c, "gemm_alone_us", file, where);
    o.gemm_together_us = num(c, "gemm_together_us", file, where);
    o.a2a_alone_us = num(c, "a2a_alone_us", file, where);
    o.a2a_together_us = num(c, "a2a_together_us", file, where);
    o.gemm_count = static_cast<int>(num(c, "gemm_count", file, where));
    o.a2a_count = static_cast<int>(num(c, "a2a_count", file, where));
    o.makespan_us = num(c, "makespan_us", file, where);
    o.gpus = gpus;
    o.local_copy_only = local;
    o.index = static_cast<int>(i);
    o.source = source;
    set.overlaps.push_back(o);
    ++used;
  }
  set.notes.push_back(file + ": " + std::to_string(used) + " overlap cases on " + std::to_string(gpus) + " GPU(s)" +
                      (local ? ", all-to-all as a local copy" : ""));
}

// kernels/torch/attention_bench.py: the backends that failed are left out. A padded-v case keeps
// the head dim v ran at (FlashAttention-2 takes one for q, k and v).
void read_attention(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& cases = field(d, "cases", file, "the file");
  int used = 0, skipped = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string where = "cases[" + std::to_string(i) + "]";
    if (c.contains("error")) {
      ++skipped;
      continue;
    }
    const json pad = c.value("v_padded_to", json());
    for (const char* pass : {"fwd", "bwd"}) {
      AttentionCase a;
      a.name = field(c, "name", file, where).get<std::string>();
      a.backend = field(c, "backend", file, where).get<std::string>();
      a.backward = std::string(pass) == "bwd";
      a.batch = static_cast<int64_t>(num(c, "batch", file, where));
      a.heads = static_cast<int64_t>(num(c, "heads", file, where));
      a.seq = static_cast<int64_t>(num(c, "seq", file, where));
      a.d_qk = static_cast<int64_t>(num(c, "d_qk", file, where));
      a.d_v = static_cast<int64_t>(num(c, "d_v", file, where));
      a.d_v_run = pad.is_null() ? a.d_v : static_cast<int64_t>(num(c, "v_padded_to", file, where));
      // FlashAttention-2 takes one head dim: v runs padded to q/k's, as the engine pads it.
      if (!pad.is_null() && a.d_v_run != a.d_qk)
        throw hw::UserError(file, 0, 0,
                            where + ".v_padded_to must be d_qk (" + std::to_string(a.d_qk) + "), found " +
                                std::to_string(a.d_v_run) + ": v is padded to q/k's head dim");
      a.time_us = num(field(c, pass, file, where), "median_ms", file, where + "." + pass) * 1e3;
      a.index = static_cast<int>(i);
      a.source = source;
      set.attentions.push_back(a);
      ++used;
    }
  }
  set.notes.push_back(file + ": " + std::to_string(used) + " attention calls" +
                      (skipped ? "; " + std::to_string(skipped) + " failed cases left out" : ""));
}

// kernels/torch/memory_bound.py.
void read_memory_bound(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& cases = field(d, "cases", file, "the file");
  size_t used = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string where = "cases[" + std::to_string(i) + "]";
    if (c.contains("error")) continue;  // a kernel that failed its check or did not run
    ++used;
    MemoryBoundCase m;
    m.op = field(c, "op", file, where).get<std::string>();
    m.variant = field(c, "variant", file, where).get<std::string>();
    m.bytes = num(c, "bytes", file, where);
    // CUDA events around one call also time its launch, which a kernel under ~100 us does not
    // hide; the files measured since 2026-11-26 carry the kernels' own device time too.
    m.time_us = c.contains("kernel_us_per_call") ? num(c, "kernel_us_per_call", file, where)
                                                 : num(c, "median_ms", file, where) * 1e3;
    m.index = static_cast<int>(i);
    m.source = source;
    set.memory_bound.push_back(m);
  }
  set.notes.push_back(file + ": " + std::to_string(used) + " memory-bound kernels");
}

// kernels/torch/memory_bound_forms.py: each case's op names its form by prefix. The bench's
// embedding backward (a dense BF16 table zeroed, then sorted rows summed in) is not the model's
// (rows added into an FP32 gradient), so it gives no rate; failed cases are left out.
void read_memory_forms(const json& d, int source, const std::string& file, MeasurementSet& set) {
  using F = sim::MemoryForm;
  static const std::pair<const char*, F> kPrefixes[] = {
      {"swiglu_chunked_fwd", F::kActivation}, {"swiglu_chunked_bwd", F::kActivationBackward},
      {"rope_fwd", F::kRope},                 {"rope_bwd", F::kRopeBackward},
      {"layout_copy", F::kLayoutCopy},        {"split_cat", F::kConcat},
      {"residual_add", F::kResidualAdd},      {"rmsnorm_fwd", F::kNorm},
      {"rmsnorm_bwd", F::kNormBackward},      {"embedding_fwd", F::kEmbedding},
      {"loss_fwd", F::kLoss},                 {"loss_bwd", F::kLossBackward}};
  const json& cases = field(d, "cases", file, "the file");
  size_t used = 0, gaps = 0;
  std::string skipped;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string where = "cases[" + std::to_string(i) + "]";
    if (c.contains("error")) continue;
    const std::string op = field(c, "op", file, where).get<std::string>();
    if (op == "launch_gap") {
      const double g = num(c, "gap_us_median", file, where);
      // A profile holds only positive figures (absent: no gap), so a gap of 0 is not one to fit.
      if (!(g > 0)) throw hw::UserError(file, 0, 0, where + ".gap_us_median must be positive");
      set.launch_gaps_us.push_back(g);
      ++gaps;
      continue;
    }
    const auto it = std::find_if(std::begin(kPrefixes), std::end(kPrefixes),
                                 [&](const auto& pf) { return op.rfind(pf.first, 0) == 0; });
    if (it == std::end(kPrefixes)) {
      skipped += (skipped.empty() ? "" : ", ") + op;
      continue;
    }
    MemoryFormCase m;
    m.op = op;
    m.form = it->second;
    m.bytes = num(c, "bytes", file, where);
    m.device_us = num(c, "kernel_us_per_call", file, where);
    if (!(m.bytes > 0) || !(m.device_us > 0))
      throw hw::UserError(file, 0, 0, where + ": bytes and kernel_us_per_call must be positive");
    m.index = static_cast<int>(i);
    m.source = source;
    set.memory_forms.push_back(m);
    ++used;
  }
  set.notes.push_back(file + ": " + std::to_string(used) + " memory-bound kernel forms, " + std::to_string(gaps) +
                      " launch-gap measurement" + (gaps == 1 ? "" : "s") +
                      (skipped.empty() ? "" : "; no form of the model's: " + skipped));
}

// One GEMM case of a PyTorch script (bf16_gemm.py, fp8_tile_scaling.py): checked against a float
// product, on `sm_obtained` SMs, with NVML's median SM clock over its timed runs where sampled (as
// cs_fp8_gemm --sample-clocks).
GemmCase torch_gemm_case(const json& c, size_t i, int source, const std::string& file) {
  const std::string where = "cases[" + std::to_string(i) + "]";
  if (field(c, "checked", file, where) != true)
    throw hw::UserError(file, 0, 0, where + " was not checked against its float product: not a result to fit");
  GemmCase g;
  g.name = field(c, "name", file, where).get<std::string>();
  g.shape = gemm_shape(c, "k", file, where);
  g.sms = static_cast<int>(num(c, "sm_obtained", file, where));
  g.time_us = num(c, "median_us", file, where);
  if (c.contains("p10_us")) g.p10_us = num(c, "p10_us", file, where);
  if (c.contains("p90_us")) g.p90_us = num(c, "p90_us", file, where);
  if (c.contains("clocks") && c["clocks"].is_object() && num(c["clocks"], "samples", file, where + ".clocks") > 0)
    g.clock_MHz = num(c["clocks"], "sm_mhz_median", file, where + ".clocks");
  if (g.shape.m < 1 || g.shape.n < 1 || g.shape.k < 1 || g.shape.groups < 1 || g.sms < 1 || !(g.time_us > 0))
    throw hw::UserError(file, 0, 0, where + ": sizes, SMs and time must be positive");
  g.index = static_cast<int>(i);
  g.source = source;
  return g;
}

const json& nonempty_cases(const json& d, const std::string& file) {
  const json& cases = field(d, "cases", file, "the file");
  if (!cases.is_array() || cases.empty()) throw hw::UserError(file, 0, 0, "'cases' must be a non-empty array");
  return cases;
}

// kernels/torch/fp8_tile_scaling.py: FP8 GEMMs under 1x128 x 128x128 and 1x128 x 1x128 scaling.
void read_fp8_scaling_gemms(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& cases = nonempty_cases(d, file);
  int tiles = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (field(cases[i], "dtype", file, "cases[" + std::to_string(i) + "]") != "fp8")
      throw hw::UserError(file, 0, 0, "cases[" + std::to_string(i) + "].dtype must be \"fp8\"");
    const std::string scaling = field(cases[i], "scaling", file, "cases[" + std::to_string(i) + "]").get<std::string>();
    if (scaling != "block_1x128_128x128" && scaling != "tile_1x128_1x128")
      throw hw::UserError(file, 0, 0, "cases[" + std::to_string(i) +
                                          "].scaling must be \"block_1x128_128x128\" or \"tile_1x128_1x128\"");
    GemmCase g = torch_gemm_case(cases[i], i, source, file);
    g.shape.scaling = scaling == "tile_1x128_1x128" ? sim::Fp8Scaling::kTiles : sim::Fp8Scaling::kWeightBlocks;
    tiles += g.shape.scaling == sim::Fp8Scaling::kTiles;
    set.fp8_scaling_gemms.push_back(g);
  }
  set.notes.push_back(file + ": " + std::to_string(cases.size()) + " FP8 GEMM cases, " + std::to_string(tiles) +
                      " of them with 1x128 scales on both operands");
}

// kernels/torch/kernel_clock.py: kernels timed after GEMMs and after copies, with their SM clocks.
void read_kernel_clock(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& cases = nonempty_cases(d, file);
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string where = "cases[" + std::to_string(i) + "]";
    KernelClockCase k;
    k.name = field(cases[i], "name", file, where).get<std::string>();
    const std::string cls = field(cases[i], "class", file, where).get<std::string>();
    if (cls.rfind("memory:", 0) == 0) {
      k.kind = "memory";
      const std::string form = cls.substr(7);
      const std::optional<sim::MemoryForm> f = sim::memory_form_from_name(form);
      if (!f) throw hw::UserError(file, 0, 0, where + ".class names no memory-bound form: '" + form + "'");
      k.form = *f;
    } else if (cls == "attention_fwd" || cls == "attention_bwd" || cls == "gemm_bf16") {
      k.kind = cls;
    } else {
      throw hw::UserError(file, 0, 0, where + ".class must be attention_fwd, attention_bwd, gemm_bf16 or memory:<form>");
    }
    const auto times = [&](const char* cond, double& ms, double& MHz) {
      const json& c = field(cases[i], cond, file, where);
      ms = num(c, "median_ms", file, where + "." + cond);
      MHz = num(c, "clock_MHz_median", file, where + "." + cond);
      if (!(ms > 0) || !(MHz > 0)) throw hw::UserError(file, 0, 0, where + "." + cond + ": times and clocks must be positive");
    };
    k.flops = num(cases[i], "flops", file, where);
    times("after_gemms", k.low_ms, k.low_MHz);
    times("after_copies", k.high_ms, k.high_MHz);
    if (!(k.high_MHz > k.low_MHz))
      throw hw::UserError(file, 0, 0, where + ": the clock after the copies must be above the one after the GEMMs");
    k.index = static_cast<int>(i);
    k.source = source;
    set.kernel_clock.push_back(k);
  }
  set.notes.push_back(file + ": " + std::to_string(cases.size()) + " kernels timed at two SM clocks");
}

// kernels/torch/bf16_gemm.py: BF16 GEMMs through F.linear on the whole GPU or a green context.
void read_bf16_gemms(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& cases = nonempty_cases(d, file);
  for (size_t i = 0; i < cases.size(); ++i) {
    if (field(cases[i], "dtype", file, "cases[" + std::to_string(i) + "]") != "bf16")
      throw hw::UserError(file, 0, 0, "cases[" + std::to_string(i) + "].dtype must be \"bf16\"");
    GemmCase g = torch_gemm_case(cases[i], i, source, file);
    g.shape.dtype = sim::DType::kBf16;
    set.bf16_gemms.push_back(g);
  }
  set.notes.push_back(file + ": " + std::to_string(cases.size()) + " BF16 GEMM cases");
}

// calibrate/scripts/ncu_dram_bytes.py's summary of an Nsight Compute run of cs_fp8_gemm.
void read_gemm_traffic(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& cases = field(d, "cases", file, "the file");
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string where = "cases[" + std::to_string(i) + "]";
    GemmTrafficCase t;
    t.name = field(c, "name", file, where).get<std::string>();
    t.shape = gemm_shape(c, "k", file, where);
    t.sms = static_cast<int>(num(c, "sms", file, where));
    t.read_bytes = num(c, "dram_read_bytes", file, where);
    t.write_bytes = num(c, "dram_write_bytes", file, where);
    if (!(t.read_bytes > 0) || t.write_bytes < 0 || t.sms <= 0 || t.shape.m <= 0 || t.shape.n <= 0 || t.shape.k <= 0 ||
        t.shape.groups <= 0)
      throw hw::UserError(file, 0, 0, where + ": a GEMM needs positive m, n, k, groups, SMs and bytes read");
    t.index = static_cast<int>(i);
    t.source = source;
    set.gemm_traffic.push_back(t);
  }
  set.notes.push_back(file + ": DRAM bytes of " + std::to_string(cases.size()) + " FP8 GEMMs under Nsight Compute");
}

// calibrate/scripts/ncu_overlap_ranges.py's summary of the overlap bench under Nsight Compute.
void read_overlap_traffic(const json& d, int source, const std::string& file, MeasurementSet& set) {
  const json& cases = field(d, "cases", file, "the file");
  if (!cases.is_array() || cases.empty()) throw hw::UserError(file, 0, 0, "'cases' must be a non-empty list");
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string where = "cases[" + std::to_string(i) + "]";
    OverlapTrafficCase t;
    t.shape = field(c, "shape", file, where).get<std::string>();
    t.gemm = gemm_shape(c, "k_dim", file, where);
    // SM counts are whole and at most a GPU's (checked before the cast to int).
    const auto sms = [&](const char* key) {
      const double v = num(c, key, file, where);
      if (!(v >= 1 && v <= 4096) || v != std::floor(v))
        throw hw::UserError(file, 0, 0, where + ": '" + key + "' must be a whole number of SMs from 1 to 4096");
      return static_cast<int>(v);
    };
    t.compute_sms = sms("compute_sms");
    t.copy_sms = sms("k");
    t.gemm_alone_us = num(c, "gemm_alone_us", file, where);
    t.gemm_alone_bytes = num(c, "gemm_alone_dram_bytes", file, where);
    t.gemm_together_bytes = num(c, "gemm_together_dram_bytes", file, where);
    t.copy_bytes = num(c, "copy_alone_dram_bytes", file, where);
    t.copy_together_us = num(c, "a2a_together_us", file, where);
    t.copy_alone_us = num(c, "a2a_alone_us", file, where);
    t.copy_payload_bytes = num(c, "a2a_bytes", file, where);
    if (t.gemm.m <= 0 || t.gemm.n <= 0 || t.gemm.k <= 0 || t.gemm.groups <= 0 || !(t.gemm_alone_us > 0) ||
        !(t.gemm_alone_bytes > 0) || !(t.gemm_together_bytes > 0) || !(t.copy_bytes > 0) || !(t.copy_together_us > 0) ||
        !(t.copy_alone_us > 0) || !(t.copy_payload_bytes > 0))
      throw hw::UserError(file, 0, 0, where + ": a case needs positive m, n, k_dim, groups, times and bytes");
    t.index = static_cast<int>(i);
    t.source = source;
    set.overlap_traffic.push_back(t);
  }
  set.notes.push_back(file + ": DRAM bytes of " + std::to_string(cases.size()) +
                      " overlap cases (GEMMs alone and beside the copy) under Nsight Compute");
}

}  // namespace

void read_measurements(const std::string& path, MeasurementSet& set) {
  const json d = read_json_file(path);
  try {
    const json& prov = field(d, "provenance", path, "the file");
    Provenance p;
    p.file = path;
    p.program = field(prov, "program", path, "provenance").get<std::string>();
    // A bench run in one of its modes names them after its own name ("attention_bench.py --long").
    if (const size_t space = p.program.find(' '); space != std::string::npos) {
      p.arguments = p.program.substr(space + 1);
      p.program.resize(space);
    }
    // The kernels' C++ provenance lists every GPU; the PyTorch scripts name the one they used.
    if (prov.contains("gpu") && prov["gpu"].is_object()) p.gpu = prov["gpu"].value("name", "");
    else if (const json& gpus = field(prov, "gpus", path, "provenance"); gpus.is_array() && !gpus.empty())
    {
      p.gpu = gpus[0].value("name", "");
      if (gpus[0].contains("sm_clock_mhz") && gpus[0]["sm_clock_mhz"].is_object())
        p.sm_clock_max_MHz = gpus[0]["sm_clock_mhz"].value("max", 0.0);
    }
    p.date_utc = prov.value("date_utc", "");
    p.git_commit = prov.value("git_commit", "");
    const int source = static_cast<int>(set.sources.size());
    if (p.program == "cs_fp8_gemm") read_gemms(d, source, path, set);
    else if (p.program == "cs_all_to_all") read_all_to_alls(d, source, path, set);
    else if (p.program == "cs_overlap") read_overlaps(d, source, path, set);
    else if (p.program == "kernels/torch/attention_bench.py") read_attention(d, source, path, set);
    else if (p.program == "kernels/torch/memory_bound.py") read_memory_bound(d, source, path, set);
    else if (p.program == "kernels/torch/memory_bound_forms.py") read_memory_forms(d, source, path, set);
    else if (p.program == "ncu_dram_bytes") read_gemm_traffic(d, source, path, set);
    else if (p.program == "kernels/torch/bf16_gemm.py") read_bf16_gemms(d, source, path, set);
    else if (p.program == "kernels/torch/fp8_tile_scaling.py") read_fp8_scaling_gemms(d, source, path, set);
    else if (p.program == "kernels/torch/kernel_clock.py") read_kernel_clock(d, source, path, set);
    else if (p.program == "ncu_overlap_ranges") read_overlap_traffic(d, source, path, set);
    else if (p.program == "kernels/torch/pipeline_step.py") {
      std::vector<PipelineCase> steps = read_pipeline_cases(d, path, source);
      set.notes.push_back(path + ": " + std::to_string(steps.size()) + " pipeline-parallel steps (schedules as generated)");
      for (PipelineCase& c : steps) set.pipelines.push_back(std::move(c));
    }
    else if (p.program == "kernels/torch/power_response.py") {
      set.power.push_back(read_power_response(d, path));
      set.notes.push_back(path + ": " + std::to_string(set.power.back().phases.size()) + " load phases with the SM clock and power");
    }
    else throw hw::UserError(path, 0, 0, "program '" + p.program + "' is not one calibrate reads (cs_fp8_gemm, cs_all_to_all, "
                                         "cs_overlap, kernels/torch/attention_bench.py, kernels/torch/memory_bound.py, "
                                         "kernels/torch/memory_bound_forms.py, "
                                         "kernels/torch/bf16_gemm.py, kernels/torch/fp8_tile_scaling.py, kernels/torch/pipeline_step.py, "
                                         "kernels/torch/power_response.py, "
                                         "ncu_dram_bytes, ncu_overlap_ranges)");
    set.sources.push_back(p);
  } catch (const json::exception& e) {
    throw hw::UserError(path, 0, 0, std::string("unexpected JSON content: ") + e.what());
  }
}

}  // namespace cs::calibrate
