// calibrate carry: a profile carried to another GPU of the same chip (calibrate/profile_build.h).
#include <string>

#include <fmt/format.h>

#include "calibrate/profile_build.h"

namespace cs::calibrate {

namespace {
// A datasheet figure in a carried parameter's source, as profile_yaml writes numbers (%.12g).
std::string ratio_figure(double v) { return fmt::format("{:.12g}", v); }
}  // namespace

hw::GpuProfile carry_profile(const hw::GpuProfile& from, const hw::GpuSpec& from_gpu, const hw::GpuSpec& to_gpu) {
  hw::GpuProfile p = from;
  p.gpu = to_gpu.name;
  p.file.clear();
  const double hbm = to_gpu.hbm_bw_GBps / from_gpu.hbm_bw_GBps;
  const double nvl = to_gpu.nvlink_bw_GBps_per_direction / from_gpu.nvlink_bw_GBps_per_direction;
  const std::string same = "carried over unchanged from the " + from_gpu.name +
                           " profile: the same Hopper chip (SMs, tensor cores, clocks, L2)";
  for (auto& [name, param] : p.gemm_params) {
    if (param.origin != "unconstrained") param.origin = "carried";
    param.source = same + "; there: " + param.source;
  }
  auto& hbm_param = p.gemm_params["hbm_GBps"];
  hbm_param.value *= hbm;
  hbm_param.source = "the " + from_gpu.name + " fit x HBM " + ratio_figure(to_gpu.hbm_bw_GBps) + " / " +
                     ratio_figure(from_gpu.hbm_bw_GBps) + " GB/s (datasheets)";
  for (auto* params : {&p.gemm_bf16_params, &p.gemm_fp8_tiles_params, &p.deepep_params, &p.attention_fa2_params,
                       &p.kernel_clock_params})  // SM-side figures of the same chip
    for (auto& [name, param] : *params) {
      param.origin = "carried";
      param.source = same + "; there: " + param.source;
    }
  for (auto& [name, param] : p.comm_params) {
    param.origin = "carried";
    param.source = same + "; there: " + param.source;
  }
  auto& nvl_param = p.comm_params["nvlink_GBps"];
  nvl_param.value *= nvl;
  nvl_param.source = "the " + from_gpu.name + " fit x NVLink " + ratio_figure(to_gpu.nvlink_bw_GBps_per_direction) + " / " +
                     ratio_figure(from_gpu.nvlink_bw_GBps_per_direction) + " GB/s per direction (datasheets)";
  for (auto& [name, param] : p.kernel_params) {
    param.origin = "carried";
    param.source = same + "; there: " + param.source;
  }
  if (p.kernels.present()) {
    auto& mem = p.kernel_params["elementwise_GBps"];
    mem.value *= hbm;
    mem.source = "the " + from_gpu.name + " fit x HBM " + ratio_figure(to_gpu.hbm_bw_GBps) + " / " +
                 ratio_figure(from_gpu.hbm_bw_GBps) + " GB/s (datasheets)";
    p.kernels.elementwise_GBps = mem.value;
    // A form's rate carries as the generic one does (HBM-bound); the launch gap is the chip's own.
    for (int f = 1; f < sim::kMemoryForms; ++f) {
      const char* name = hw::KernelModel::param_name(hw::KernelModel::form_param(static_cast<sim::MemoryForm>(f)));
      const auto it = p.kernel_params.find(name);
      if (it == p.kernel_params.end()) continue;
      it->second.value *= hbm;
      it->second.source = "the " + from_gpu.name + " measurement x HBM " + ratio_figure(to_gpu.hbm_bw_GBps) + " / " +
                          ratio_figure(from_gpu.hbm_bw_GBps) + " GB/s (datasheets); there: " +
                          from.kernel_params.at(name).source;
      p.kernels.form_GBps[f] = it->second.value;
    }
  }
  for (auto& [name, param] : p.clock_params) {
    param.origin = "carried";
    param.source = same + "; its sustained clock assumed the same (not measured there); there: " + param.source;
  }
  for (auto& [name, param] : p.memory_params) {
    if (name == "hbm_GBps") continue;
    param.origin = "carried";
    param.source = (name == "saturation_exponent" ? same + " and the same HBM controllers; there: "
                                                  : same + "; there: ") +
                   param.source;
  }
  if (p.memory.present()) {
    auto& m = p.memory_params["hbm_GBps"];
    m.origin = "carried";
    m.value *= hbm;
    m.source = "the " + from_gpu.name + " value x HBM " + ratio_figure(to_gpu.hbm_bw_GBps) + " / " +
               ratio_figure(from_gpu.hbm_bw_GBps) + " GB/s (datasheets); there: " + m.source;
    p.memory.hbm_GBps = m.value;
  }
  for (auto& [name, param] : p.power_params) {
    param.origin = "carried";
    param.source = same + (name == "limit_W" ? " and the same " + fmt::format("{:.0f}", p.power.limit_W) + " W board limit (SXM datasheets: 'up to 700 W')"
                           : name == "static_W" || name == "hbm_pJ_per_byte"
                               ? "; its HBM's share of this assumed the same (not measured there)"
                               : "") +
                   "; there: " + param.source;
  }
  p.gemm.hbm_GBps = hbm_param.value;
  p.comm.nvlink_GBps = nvl_param.value;
  p.note = "Carried over from the " + from_gpu.name + " profile by `clustersim calibrate carry`: " + to_gpu.model +
           " has the same compute chip; HBM and NVLink scale by the datasheet ratios.";
  return p;
}

}  // namespace cs::calibrate
