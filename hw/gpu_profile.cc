#include "hw/gpu_profile.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "hw/embedded_catalog.h"
#include "hw/gpu_catalog.h"

namespace cs::hw {

const char* GemmBf16Model::param_name(int i) {
  static constexpr const char* kNames[kParams] = {"sm_tflops", "chip_tflops"};
  return kNames[i];
}

const char* GemmFp8TilesModel::param_name(int i) {
  static constexpr const char* kNames[kParams] = {"mma_slowdown"};
  return kNames[i];
}

const char* CommModel::param_name(int i) {
  static constexpr const char* kNames[kParams] = {"launch_us", "sm_copy_GBps", "nvlink_GBps"};
  return kNames[i];
}

const char* DeepEpModel::param_name(int i) {
  static constexpr const char* kNames[kParams] = {"internode_channel_GBps"};
  return kNames[i];
}

const char* KernelModel::param_name(int i) {
  static const std::array<std::string, kParams> kNames = [] {
    std::array<std::string, kParams> n{"attn_fwd_us", "attn_fwd_tflops", "attn_bwd_us", "attn_bwd_tflops",
                                       "elementwise_GBps", "launch_gap_us"};
    for (int f = 1; f < sim::kMemoryForms; ++f)
      n[form_param(static_cast<sim::MemoryForm>(f))] = std::string(sim::memory_form_name(static_cast<sim::MemoryForm>(f))) + "_GBps";
    return n;
  }();
  return kNames[i].c_str();
}

const char* AttentionFa2Model::param_name(int i) {
  static const std::array<std::string, kParams> kNames = [] {
    std::array<std::string, kParams> n;
    for (size_t k = 0; k < kHeadDims.size(); ++k)
      for (int j = 0; j < 4; ++j)
        n[4 * k + j] = "d" + std::to_string(kHeadDims[k]) + (j < 2 ? "_fwd" : "_bwd") + (j % 2 ? "_tflops" : "_us");
    n[kFitMHz] = "fit_MHz";
    return n;
  }();
  return kNames[i].c_str();
}

bool AttentionFa2Model::present() const {
  return std::any_of(kernels.begin(), kernels.end(), [](const Rates& r) { return r.present(); });
}

int AttentionFa2Model::kernel_of(int head_dim) {
  for (size_t k = 0; k < kHeadDims.size(); ++k)
    if (head_dim <= kHeadDims[k]) return static_cast<int>(k);
  return static_cast<int>(kHeadDims.size()) - 1;
}

int AttentionFa2Model::run_head_dim(int qk, int v) {
  const int d = std::max(qk, v);
  return d > 0 ? d : kHeadDims.back();
}

int AttentionFa2Model::measured_kernel_for(int head_dim) const {
  const int own = kernel_of(head_dim);
  int best = -1;
  for (int k = 0; k < static_cast<int>(kHeadDims.size()); ++k) {
    if (!kernels[k].present()) continue;
    const int gap = std::abs(kHeadDims[k] - kHeadDims[own]);
    if (best < 0 || gap <= std::abs(kHeadDims[best] - kHeadDims[own])) best = k;  // ascending: a tie goes to the larger
  }
  if (best < 0) throw std::logic_error("measured_kernel_for on a FlashAttention-2 model with no kernel measured");
  return best;
}

const char* KernelClockModel::param_name(int i) {
  static const std::array<std::string, kParams> kNames = [] {
    std::array<std::string, kParams> n{"memory_fit_MHz", "attention_fit_MHz", "attention_fwd", "attention_bwd"};
    for (int f = 0; f < sim::kMemoryForms; ++f) n[form_param(static_cast<sim::MemoryForm>(f))] = sim::memory_form_name(static_cast<sim::MemoryForm>(f));
    return n;
  }();
  return kNames[i].c_str();
}

double KernelClockModel::share(const sim::GenericCompute& c) const {
  switch (c.kind) {
    case sim::ComputeKind::kAttentionForward: return attention_fwd;
    case sim::ComputeKind::kAttentionBackward: return attention_bwd;
    case sim::ComputeKind::kMemoryBound: {
      const double s = form[static_cast<size_t>(c.form)];
      return s >= 0 ? s : form[static_cast<size_t>(sim::MemoryForm::kAny)];
    }
    case sim::ComputeKind::kGeneric: break;
  }
  return 0;
}

double KernelClockModel::reference_MHz(const sim::GenericCompute& c) const {
  const bool attention = c.kind == sim::ComputeKind::kAttentionForward || c.kind == sim::ComputeKind::kAttentionBackward;
  return attention ? attention_fit_MHz : memory_fit_MHz;
}

const char* ClockModel::param_name(int i) {
  static constexpr const char* kNames[kParams] = {"gemm_fit_MHz", "comm_fit_MHz", "sustained_MHz"};
  return kNames[i];
}

const char* MemoryModel::param_name(int i) {
  static constexpr const char* kNames[kParams] = {"hbm_GBps", "saturation_exponent", "l2_reuse_share",
                                                  "gemm_swizzle_n_blocks", "l2_wave_skew",
                                                  "l2_skew_max_tile_us", "copy_slowdown_beside_gemms"};
  return kNames[i];
}

namespace {

// A value above 0 (or, `positive` false, at least 0) and at most `max`.
ProfileParam parse_param(const YamlNode& n, double max = 1e9, bool positive = true) {
  const YamlMap m(n, {"value", "origin", "source"});
  ProfileParam p;
  p.value = m.required("value").as_double(0, max, positive);
  p.origin = m.required("origin").as_enum({"measured", "carried", "published", "datasheet", "unconstrained"});
  p.source = m.required("source").as_string();
  if (p.source.empty()) m.required("source").fail("'" + n.path() + ".source' must say where the value came from");
  return p;
}

std::map<std::string, ProfileRange> parse_ranges(const YamlNode& n, const std::vector<std::string>& keys) {
  const YamlMap m(n, keys);
  std::map<std::string, ProfileRange> out;
  for (const std::string& k : keys) {
    const YamlNode r = m.required(k);
    const auto items = r.items();
    if (items.size() != 2) r.fail("'" + r.path() + "' must be [low, high]");
    ProfileRange pr{items[0].as_double(0, 1e15), items[1].as_double(0, 1e15)};
    if (pr.lo > pr.hi) r.fail("'" + r.path() + "' must run upwards");
    out[k] = pr;
  }
  return out;
}

// name -> parameter for every name of the model present; writes the values into `values`. The
// first `required` names must be there (all by default); a later one absent keeps its value. Every
// value must be above 0, except where `zero_ok(i)` says 0 is a fitted value too.
template <int N>
std::map<std::string, ProfileParam> parse_params(const YamlNode& n, const char* (*name)(int), double* values,
                                                 int required = N, bool (*zero_ok)(int) = nullptr) {
  std::vector<std::string> keys;
  for (int i = 0; i < N; ++i) keys.emplace_back(name(i));
  const YamlMap m(n, keys);
  std::map<std::string, ProfileParam> out;
  for (int i = 0; i < N; ++i) {
    const std::optional<YamlNode> v = i < required ? std::optional<YamlNode>(m.required(keys[i])) : m.optional(keys[i]);
    if (!v) continue;
    out[keys[i]] = parse_param(*v, 1e9, !(zero_ok && zero_ok(i)));
    values[i] = out[keys[i]].value;
  }
  return out;
}

// An attention fit's fixed time per call: least squares may put it at 0 (calibrate clamps a
// negative intercept there), and a profile that says so must read back.
bool kernel_fixed_time(int i) { return i == 0 || i == 2; }                           // attn_fwd_us, attn_bwd_us
bool fa2_fixed_time(int i) { return i < AttentionFa2Model::kFitMHz && i % 2 == 0; }  // d<dim>_{fwd,bwd}_us

}  // namespace

GemmModel with_bf16_rates(const GemmModel& fp8, const GemmBf16Model& bf16) {
  GemmModel m = fp8;
  m.tiling = GemmTiling::kCublasLt;  // the BF16 rates are cuBLASLt's
  m.sm_tflops = bf16.sm_tflops;
  m.chip_tflops = bf16.chip_tflops;
  return m;
}

GpuProfile parse_profile(const YamlNode& root) {
  const YamlMap m(root, {"schema_version", "gpu", "note", "fitted_from", "gemm", "gemm_tiles", "gemm_bf16",
                         "gemm_fp8_tiles", "gemm_range", "comm", "comm_range", "deepep", "kernels", "attention_fa2",
                         "clocks", "memory", "power", "kernel_clock"});
  m.required("schema_version").as_int(1, 1);
  GpuProfile p;
  p.file = root.file();
  p.gpu = m.required("gpu").as_string();
  if (!find_gpu(p.gpu)) m.required("gpu").fail("unknown GPU '" + p.gpu + "'");
  if (auto n = m.optional("note")) p.note = n->as_string();
  for (const YamlNode& f : m.required("fitted_from").items()) p.fitted_from.push_back(f.as_string());
  std::array<double, GemmModel::kParams> g{};
  const YamlNode gemm = m.required("gemm");
  p.gemm_params = parse_params<GemmModel::kParams>(gemm, &GemmModel::param_name, g.data(), GemmModel::kRequiredParams);
  p.gemm = GemmModel::from_array(g);
  // The fit searches 1 (the times add) upwards; below 1 the sum of the two would be exceeded.
  if (p.gemm_params.count("hbm_overlap_exponent") && p.gemm.hbm_overlap_exponent < 1) {
    std::vector<std::string> keys;
    for (int i = 0; i < GemmModel::kParams; ++i) keys.emplace_back(GemmModel::param_name(i));
    YamlMap(YamlMap(gemm, keys).required("hbm_overlap_exponent"), {"value", "origin", "source"})
        .required("value")
        .fail("'gemm.hbm_overlap_exponent' must be at least 1 (1: the tiled and HBM times add; larger: nearer their max)");
  }
  if (const auto k = m.optional("gemm_tiles")) {
    const YamlMap t(*k, {"kernel", "source"});
    const YamlNode kernel = t.required("kernel");
    const std::string name = kernel.as_string();
    if (name == "deepgemm")
      p.gemm.tiling = GemmTiling::kDeepGemm;
    else if (name != "cublaslt")
      kernel.fail("'gemm_tiles.kernel' must be cublaslt or deepgemm, found '" + name + "'");
    p.gemm_tiles_source = t.required("source").as_string();
  }
  if (const auto k = m.optional("gemm_bf16")) {
    double v[GemmBf16Model::kParams];
    p.gemm_bf16_params = parse_params<GemmBf16Model::kParams>(*k, &GemmBf16Model::param_name, v);
    p.gemm_bf16 = GemmBf16Model{v[0], v[1]};  // parse_param refuses values not above 0
  }
  if (const auto k = m.optional("gemm_fp8_tiles")) {
    double v[GemmFp8TilesModel::kParams] = {};
    p.gemm_fp8_tiles_params = parse_params<GemmFp8TilesModel::kParams>(*k, &GemmFp8TilesModel::param_name, v);
    p.gemm_fp8_tiles = GemmFp8TilesModel{v[0]};
    // The fit searches [1, 4]: below 1 would make the weight gradients faster than the blocks' GEMMs.
    if (p.gemm_fp8_tiles.mma_slowdown < 1)
      YamlMap(YamlMap(*k, {"mma_slowdown"}).required("mma_slowdown"), {"value", "origin", "source"})
          .required("value")
          .fail("'gemm_fp8_tiles.mma_slowdown' must be at least 1 (1: 1x128 tiles on both operands cost nothing extra)");
  }
  double c[CommModel::kParams];
  p.comm_params = parse_params<CommModel::kParams>(m.required("comm"), &CommModel::param_name, c);
  p.comm = CommModel{c[0], c[1], c[2]};
  if (const auto k = m.optional("deepep")) {
    double v[DeepEpModel::kParams];
    p.deepep_params = parse_params<DeepEpModel::kParams>(*k, &DeepEpModel::param_name, v);
    p.deepep = DeepEpModel{v[0]};  // parse_param refuses values not above 0
  }
  if (const auto k = m.optional("kernels")) {
    double v[KernelModel::kParams] = {};
    p.kernel_params = parse_params<KernelModel::kParams>(*k, &KernelModel::param_name, v, KernelModel::kRequiredParams,
                                                         &kernel_fixed_time);
    p.kernels = KernelModel{v[0], v[1], v[2], v[3], v[4], v[KernelModel::kLaunchGap], {}};
    for (int f = 1; f < sim::kMemoryForms; ++f) p.kernels.form_GBps[f] = v[KernelModel::form_param(static_cast<sim::MemoryForm>(f))];
    if (!p.kernels.present() || v[3] <= 0 || v[4] <= 0) k->fail("'kernels' rates must be positive");
  }
  if (const auto k = m.optional("attention_fa2")) {
    if (!p.kernels.present())
      k->fail("'attention_fa2' needs the 'kernels' section (the memory-bound kernels around it)");
    double v[AttentionFa2Model::kParams] = {};
    p.attention_fa2_params =
        parse_params<AttentionFa2Model::kParams>(*k, &AttentionFa2Model::param_name, v, 0, &fa2_fixed_time);
    for (size_t d = 0; d < AttentionFa2Model::kHeadDims.size(); ++d) {
      const double* r = v + 4 * d;
      int given = 0;
      for (int j = 0; j < 4; ++j) given += p.attention_fa2_params.count(AttentionFa2Model::param_name(4 * d + j)) > 0;
      const std::string dim = "d" + std::to_string(AttentionFa2Model::kHeadDims[d]);
      if (given != 0 && given != 4)
        k->fail("'attention_fa2' gives part of the " + dim + " kernel: give " + dim + "_fwd_us, " + dim +
                "_fwd_tflops, " + dim + "_bwd_us and " + dim + "_bwd_tflops, or none");
      p.attention_fa2.kernels[d] = {r[0], r[1], r[2], r[3]};
    }
    if (!p.attention_fa2.present())
      k->fail("'attention_fa2' gives no kernel (d128_fwd_us, ... for each head dim measured)");
    p.attention_fa2.fit_MHz = v[AttentionFa2Model::kFitMHz];
  }
  if (const auto k = m.optional("clocks")) {
    double v[ClockModel::kParams];
    p.clock_params = parse_params<ClockModel::kParams>(*k, &ClockModel::param_name, v);
    p.clocks = ClockModel{v[0], v[1], v[2]};
    if (v[0] <= 0 || v[1] <= 0 || v[2] <= 0) k->fail("'clocks' must be positive");
  }
  if (const auto k = m.optional("memory")) {
    double v[MemoryModel::kParams] = {};
    p.memory_params = parse_params<MemoryModel::kParams>(*k, &MemoryModel::param_name, v, 1);
    p.memory = MemoryModel{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    const YamlMap mm(*k, {"hbm_GBps", "saturation_exponent", "l2_reuse_share", "gemm_swizzle_n_blocks", "l2_wave_skew",
                          "l2_skew_max_tile_us", "copy_slowdown_beside_gemms"});
    const auto value = [&](const char* key) { return YamlMap(mm.required(key), {"value", "origin", "source"}).required("value"); };
    if (v[0] <= 0) value("hbm_GBps").fail("'memory.hbm_GBps' must be positive");
    // The fit searches 0.5 to 64; beyond that the queue is a hard ceiling in all but name.
    if (mm.has("saturation_exponent") && (v[1] < 0.5 || v[1] > 64))
      value("saturation_exponent").fail("'memory.saturation_exponent' must be between 0.5 and 64");
    if (mm.has("l2_reuse_share") != mm.has("gemm_swizzle_n_blocks"))
      (mm.has("l2_reuse_share") ? value("l2_reuse_share") : value("gemm_swizzle_n_blocks"))
          .fail("'memory.l2_reuse_share' and 'memory.gemm_swizzle_n_blocks' go together: give both or neither");
    if (mm.has("l2_reuse_share") && v[2] > 1)
      value("l2_reuse_share").fail("'memory.l2_reuse_share' is a share of the L2: at most 1");
    if (mm.has("gemm_swizzle_n_blocks") && (v[3] != static_cast<int>(v[3]) || v[3] > 4096))
      value("gemm_swizzle_n_blocks").fail("'memory.gemm_swizzle_n_blocks' must be a whole number of n-tiles, at most 4096");
    if (mm.has("l2_wave_skew") && !mm.has("l2_reuse_share"))
      value("l2_wave_skew").fail("'memory.l2_wave_skew' needs the L2 traffic model: give 'l2_reuse_share' and 'gemm_swizzle_n_blocks' too");
    // The fit searches up to 8 tile times; a spread past that is not a wave's any more.
    if (mm.has("l2_wave_skew") && v[4] > 8)
      value("l2_wave_skew").fail("'memory.l2_wave_skew' is a spread in tile times: at most 8");
    if (mm.has("l2_wave_skew") != mm.has("l2_skew_max_tile_us"))
      (mm.has("l2_wave_skew") ? value("l2_wave_skew") : value("l2_skew_max_tile_us"))
          .fail("'memory.l2_wave_skew' and 'memory.l2_skew_max_tile_us' go together: give both or neither");
    // The fit searches up to 2: a copy at a third of its rate beside GEMMs on every SM.
    if (mm.has("copy_slowdown_beside_gemms") && v[6] > 2)
      value("copy_slowdown_beside_gemms").fail("'memory.copy_slowdown_beside_gemms' must be at most 2");
  }
  if (const auto k = m.optional("power")) {
    double v[PowerModel::kParams];
    p.power_params = parse_params<PowerModel::kParams>(*k, &PowerModel::param_name, v);
    p.power = PowerModel{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
    if (!p.clocks.present()) k->fail("'power' needs the 'clocks' section: GEMM times are at its gemm_fit_MHz");
    if (v[1] >= v[0]) k->fail("'power.static_W' must be below 'power.limit_W'");
    if (v[3] >= v[2]) k->fail("'power.clock_step_MHz' must be below 'power.max_MHz'");
    // The driver steps in MHz, and the controller's window is tens of milliseconds: below a
    // millisecond its ticks would outnumber every other event of a run.
    if (v[3] < 1) k->fail("'power.clock_step_MHz' must be at least 1");
    if (v[9] < 1) k->fail("'power.window_ms' must be at least 1");
    if (v[8] > 1) k->fail("'power.clock_stretch' is a share of a GEMM's time: at most 1");
  }
  if (const auto k = m.optional("kernel_clock")) {
    if (!p.power.present()) k->fail("'kernel_clock' needs the 'power' section: the clock it follows is the power limit's");
    std::vector<std::string> keys;
    for (int i = 0; i < KernelClockModel::kParams; ++i) keys.emplace_back(KernelClockModel::param_name(i));
    const YamlMap km(*k, keys);
    KernelClockModel& kc = p.kernel_clock;
    kc.form.fill(-1);
    for (int i = 0; i < KernelClockModel::kParams; ++i) {
      const std::optional<YamlNode> n = i < KernelClockModel::kRequiredParams ? std::optional<YamlNode>(km.required(keys[i])) : km.optional(keys[i]);
      if (!n) continue;
      // A share is 0 to 1 (0: a kernel on HBM alone).
      const bool clock = i == KernelClockModel::kMemoryFitMHz || i == KernelClockModel::kAttentionFitMHz;
      const ProfileParam par = clock ? parse_param(*n) : parse_param(*n, 1, false);
      p.kernel_clock_params[keys[i]] = par;
      if (i == KernelClockModel::kMemoryFitMHz) kc.memory_fit_MHz = par.value;
      else if (i == KernelClockModel::kAttentionFitMHz) kc.attention_fit_MHz = par.value;
      else if (i == KernelClockModel::kAttentionFwd) kc.attention_fwd = par.value;
      else if (i == KernelClockModel::kAttentionBwd) kc.attention_bwd = par.value;
      else kc.form[static_cast<size_t>(i - KernelClockModel::kForms)] = par.value;
    }
  }
  p.gemm_range = parse_ranges(m.required("gemm_range"), {"sms", "m", "n", "k"});
  p.comm_range = parse_ranges(m.required("comm_range"), {"ctas", "size_bytes"});
  return p;
}

namespace {

constexpr std::string_view kDir = "hw/profiles/", kExt = ".yaml";

const std::map<std::string, GpuProfile>& bundled_profiles() {
  static const auto profiles = [] {
    auto v = std::make_unique<std::map<std::string, GpuProfile>>();
    for (const auto& f : embedded_catalog_files()) {
      if (!std::string_view(f.path).starts_with(kDir) || !std::string_view(f.path).ends_with(kExt)) continue;
      GpuProfile p = parse_profile(parse_yaml(f.text, std::string(f.path)));
      // By file name: hw/profiles/h800.yaml is "h800", the profile a cluster of H800s takes by
      // default; a variant of it (h800-deepgemm.yaml) is chosen by name.
      const std::string_view path = f.path;
      const std::string name(path.substr(kDir.size(), path.size() - kDir.size() - kExt.size()));
      (*v)[name] = std::move(p);
    }
    return v;
  }();
  return *profiles;
}

}  // namespace

const GpuProfile* find_profile(const std::string& gpu) {
  const auto& profiles = bundled_profiles();
  const auto it = profiles.find(gpu);
  return it == profiles.end() ? nullptr : &it->second;
}

std::string bundled_profile_names() {
  std::string out;
  for (const auto& [name, p] : bundled_profiles()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

bool is_profile_path(const std::string& name_or_path) {
  return name_or_path.find('/') != std::string::npos || (name_or_path.size() > 5 && name_or_path.ends_with(".yaml"));
}

GpuProfile load_profile(const std::string& name_or_path, const YamlNode* where) {
  if (is_profile_path(name_or_path)) return parse_profile(load_yaml_file(name_or_path));
  if (const GpuProfile* p = find_profile(name_or_path)) return *p;
  const std::string msg = "no calibrated profile '" + name_or_path + "' (bundled: " + bundled_profile_names() + "; or give a file path)";
  if (where) where->fail(msg);
  throw UserError(name_or_path, 0, 0, msg);
}

}  // namespace cs::hw
