// The bundled overlap scenario under other SM splits: the makespan must move the way physics says.
#include <catch2/catch.hpp>

#include "models/scenario_loader.h"
#include "models/scenario_runner.h"
#include "test_support.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

namespace {

struct Split {
  double makespan_ms, gemm_ms, a2a_ms;
};

Split run_with_comm_sms(int comm) {
  auto sc = cs::models::load_scenario_file(cs::test::source_dir() + "/scenarios/gemm-a2a-overlap-h800.yaml");
  REQUIRE(sc.cluster.partitions.size() == 2);
  sc.cluster.partitions[0].sms = 132 - comm;  // compute
  sc.cluster.partitions[1].sms = comm;        // comm
  const auto r = cs::models::run_scenario(sc);
  return {r.makespan.to_ms(), r.streams[0].end_max.to_ms(), r.streams[1].end_max.to_ms()};
}

}  // namespace

TEST_CASE("more comm SMs speed the all-to-alls and slow the GEMMs", "[sm_split]") {
  const Split s8 = run_with_comm_sms(8), s20 = run_with_comm_sms(20), s32 = run_with_comm_sms(32),
              s48 = run_with_comm_sms(48);
  // All-to-all time falls as its copy rate (7.65 GB/s per SM) grows, until NVLink (200 GB/s per
  // direction on H800) caps it: 26.2 SMs saturate the link.
  CHECK(s8.a2a_ms > s20.a2a_ms);
  CHECK(s20.a2a_ms > s32.a2a_ms);
  CHECK(s32.a2a_ms == Approx(s48.a2a_ms).epsilon(1e-9));  // link-bound at both
  // GEMM time grows as compute SMs shrink (wave quantisation: 2048 tiles over 124, 112, 100, 84).
  CHECK(s8.gemm_ms < s20.gemm_ms);
  CHECK(s20.gemm_ms < s32.gemm_ms);
  CHECK(s32.gemm_ms < s48.gemm_ms);
}

TEST_CASE("the makespan has its minimum between starved communication and starved compute", "[sm_split]") {
  // 8 comm SMs: all-to-all-bound (12 x 134 MB at 61 GB/s = 26 ms: the kernel copies its own eighth
  // too, and the copy rate is busy from the start, so no latency term). 20: GEMM-bound (11.9 ms, the
  // all-to-alls hide under it). 48: GEMM-bound on 84 SMs (25 waves: 15.7 ms).
  const Split s8 = run_with_comm_sms(8), s20 = run_with_comm_sms(20), s48 = run_with_comm_sms(48);
  CHECK(s8.makespan_ms == Approx(s8.a2a_ms));
  CHECK(s20.makespan_ms == Approx(s20.gemm_ms));
  CHECK(s48.makespan_ms == Approx(s48.gemm_ms));
  CHECK(s8.makespan_ms > s20.makespan_ms);
  CHECK(s48.makespan_ms > s20.makespan_ms);
  // Closed forms for the two regimes.
  const double a2a_bytes = 128.0 * (1 << 20);
  CHECK(s8.a2a_ms == Approx(12 * a2a_bytes / (8 * 7.65e9) * 1e3).epsilon(1e-6));
  const double tile_s = 2.0 * 128 * 128 * 7168 / (1979e12 / 132);
  CHECK(s20.gemm_ms == Approx(40 * 19 * tile_s * 1e3).epsilon(1e-6));  // ceil(2048 / 112) = 19 waves
  CHECK(s48.gemm_ms == Approx(40 * 25 * tile_s * 1e3).epsilon(1e-6));  // ceil(2048 / 84) = 25 waves
}

}  // namespace CS_TEST_FILE
