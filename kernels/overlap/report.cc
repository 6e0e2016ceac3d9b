#include "overlap/report.h"

namespace cs::kernels::overlap {

void write_case(JsonWriter& w, const Case& c, double a2a_bytes, double busbw_factor) {
  w.begin_object();
  w.field("shape", c.shape);
  w.field("origin", c.gs->origin);
  w.field("m", c.gs->m);
  w.field("n", c.gs->n);
  w.field("k_dim", c.gs->k);
  w.field("groups", c.gs->groups);
  w.field("k", c.k);
  w.field("comm_sms", c.comm_sms);
  w.field("compute_sms", c.compute_sms);
  w.field("sm_count_target", c.sm_count_target);
  w.field("gemm_count", c.n_gemm);
  w.field("a2a_count", c.m_a2a);
  w.field("reps", c.reps);
  w.field("gemm_alone_us", c.gemm_alone_us);
  w.field("gemm_alone_tflops", c.gs->flops() / (c.gemm_alone_us * 1e6));
  if (c.k > 0) {
    w.field("gemm_together_us", c.gemm_together_us);
    w.field("gemm_together_tflops", c.gs->flops() / (c.gemm_together_us * 1e6));
    w.field("gemm_slowdown", c.gemm_together_us / c.gemm_alone_us);
    w.field("a2a_alone_us", c.a2a_alone_us);
    w.field("a2a_alone_busbw_gbps", a2a_bytes / (c.a2a_alone_us * 1e3) * busbw_factor);
    w.field("a2a_together_us", c.a2a_together_us);
    w.field("a2a_together_busbw_gbps", a2a_bytes / (c.a2a_together_us * 1e3) * busbw_factor);
    w.field("a2a_slowdown", c.a2a_together_us / c.a2a_alone_us);
    w.field("makespan_us", c.makespan_us);
    w.field("serial_us", c.serial_us);
    w.field("ideal_overlap_us", c.ideal_us);
  }
  w.field("gemm_checked", true);
  w.field("gemm_checked_after_overlap", c.k > 0);
  w.field("a2a_checked", c.a2a_checked);
  w.field("a2a_checked_after_overlap", c.a2a_checked_after);
  w.key("algo").begin_object(true);
  w.field("algo_id", c.algo.algo_id);
  w.field("tile_id", c.algo.tile_id);
  w.field("stages_id", c.algo.stages_id);
  w.field("split_k", c.algo.split_k);
  w.field("cluster_shape_id", c.algo.cluster_shape_id);
  w.field("waves", c.algo.waves);
  w.end_object();
  if (c.clocks_gemm_alone) {
    w.key("clocks").begin_object();
    w.key("gemm_alone");
    cs::kernels::write_clock_summary(w, *c.clocks_gemm_alone);
    if (c.clocks_a2a_alone) {
      w.key("a2a_alone");
      cs::kernels::write_clock_summary(w, *c.clocks_a2a_alone);
      w.key("together");
      cs::kernels::write_clock_summary(w, *c.clocks_together);
    }
    w.end_object();
  }
  w.key("per_gpu").begin_array();
  for (std::size_t d = 0; d < c.gpu.size(); ++d) {
    const PerGpu& p = c.gpu[d];
    w.begin_object(true);
    w.field("gpu", static_cast<int>(d));
    w.field("gemm_alone_us", p.gemm_alone_us);
    if (c.k > 0) {
      w.field("gemm_together_us", p.gemm_together_us);
      w.field("a2a_alone_us", p.a2a_alone_us);
      w.field("a2a_together_us", p.a2a_together_us);
      w.field("makespan_us", p.makespan_us);
      w.field("gemm_span_us", p.gemm_span_us);
      w.field("a2a_span_us", p.a2a_span_us);
      w.field("gemm_ops_inside", p.gemm_ops_inside);
      w.field("a2a_ops_inside", p.a2a_ops_inside);
      w.field("check_after_rel_l2", p.check_after.rel_l2);
    }
    w.field("check_rel_l2", p.check.rel_l2);
    w.field("check_worst_ratio", p.check.worst_ratio);
    w.field("check_samples", p.check.samples);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace cs::kernels::overlap
