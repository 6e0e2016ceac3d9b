#include "fp8_gemm/report.h"

#include <cstdio>

#include "fp8_gemm/lt_algos.h"

namespace cs::kernels::fp8_gemm {

const char* method_name(Method m) {
  switch (m) {
    case Method::kGreen: return "green";
    case Method::kSmTarget: return "sm_target";
    case Method::kGreenSmTarget: return "green_sm_target";
  }
  return "unknown";
}

std::string deepgemm_line(const CaseRecord& c) {
  char groups[32] = "";
  if (c.shape.groups > 1) std::snprintf(groups, sizeof groups, "groups=%d ", c.shape.groups);
  char sms[48];
  if (c.method == Method::kSmTarget) {
    std::snprintf(sms, sizeof sms, "sms=%d (sm_target)", c.sm_limit);
  } else {
    std::snprintf(sms, sizeof sms, "sms=%d (%s)", c.sm_obtained, c.method == Method::kGreen ? "green" : "green+target");
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "%sm=%d n=%d k=%d %s scale=%s : %.1f us [p10 %.1f, p90 %.1f] | %.0f TFLOPS | %.0f GB/s", groups,
                c.shape.m, c.shape.n, c.shape.k, sms, scaling_label(c.scaling), c.timing.median_us, c.timing.p10_us,
                c.timing.p90_us, c.tflops(), c.gbps());
  std::string out = line;
  if (c.algo.forced) out += " | tile " + lt_tile_name(c.algo.tile_id) + " algo " + std::to_string(c.algo.algo_id);
  if (c.clocks && c.clocks->samples > 0) {
    std::snprintf(line, sizeof line, " | %.0f MHz median (%.0f-%.0f)", c.clocks->sm_mhz_median, c.clocks->sm_mhz_min,
                  c.clocks->sm_mhz_max);
    out += line;
    if (c.clocks->power_capped_share) {
      std::snprintf(line, sizeof line, ", power-capped %.0f%%", 100 * *c.clocks->power_capped_share);
      out += line;
    }
  }
  return out;
}

void write_case(JsonWriter& w, const CaseRecord& c) {
  w.begin_object();
  w.field("name", c.shape.name);
  w.field("origin", c.shape.origin);
  w.field("m", c.shape.m);
  w.field("n", c.shape.n);
  w.field("k", c.shape.k);
  w.field("groups", c.shape.groups);
  w.field("sm_limit", c.sm_limit);
  w.field("sm_obtained", c.sm_obtained);
  w.field("method", method_name(c.method));
  w.field("sm_count_target", c.sm_count_target);
  w.field("scaling", scaling_name(c.scaling));
  w.field("orientation", orientation_name(c.orientation));
  w.field("median_us", c.timing.median_us);
  w.field("p10_us", c.timing.p10_us);
  w.field("p90_us", c.timing.p90_us);
  w.field("min_us", c.timing.min_us);
  w.field("max_us", c.timing.max_us);
  w.field("runs", c.timing.runs);
  w.field("tflops", c.tflops());
  w.field("gbps", c.gbps());
  w.field("checked", c.check.passed);
  w.key("check")
      .begin_object(true)
      .field("samples", c.check.samples)
      .field("rel_l2_error", c.check.rel_l2)
      .field("worst_error_over_tolerance", c.check.worst_ratio)
      .end_object();
  w.key("algo")
      .begin_object(true)
      .field("id", c.algo.algo_id)
      .field("tile_id", c.algo.tile_id)
      .field("tile", lt_tile_name(c.algo.tile_id))
      .field("forced", c.algo.forced)
      .field("stages_id", c.algo.stages_id)
      .field("split_k", c.algo.split_k)
      .field("cluster_shape_id", c.algo.cluster_shape_id)
      .field("waves", c.algo.waves)
      .end_object();
  if (c.clocks) {
    w.key("clocks");
    write_clock_summary(w, *c.clocks);
  }
  if (c.timing.probes > 0) {
    w.key("sm_clock_probed")
        .begin_object(true)
        .field("probes", c.timing.probes)
        .field("mhz_median", c.timing.probe_MHz_median)
        .field("mhz_p10", c.timing.probe_MHz_p10)
        .field("mhz_p90", c.timing.probe_MHz_p90)
        .end_object();
  }
  w.end_object();
}

}  // namespace cs::kernels::fp8_gemm
