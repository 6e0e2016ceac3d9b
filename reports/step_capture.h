// What the HTML report reads from one run op by op, taken through RunOptions::inspect: where each
// rank's time went (computing, communication not hidden behind computation by kind, optimizer,
// bubble, idle), a coarse timeline of a few ranks for the Gantt chart, and the collectives in
// nccl-tests terms. Times are integer nanoseconds, so the JSON form is exact and stable.
#pragma once

#include <nlohmann/json.hpp>

#include "models/op_workload.h"
#include "sim/executor.h"

namespace cs::reports {

// The capture as JSON (the `capture` part of the report object; reports/report_data.h):
//   role_kind        "pipeline rank" or "GPU"
//   roles[]          {label, gpu, compute_ns, optimizer_ns (its kernels, gradient communication
//                     included), bubble_ns, idle_ns, exposed_ns{kind: ns}, overlapped_ns{kind: ns}};
//                     the parts sum to step_ns
//   timeline         {end_ns, categories[], rows[{label, bars[[start_ns, end_ns, category, ops]]}]}
//   collectives[]    {kind, ranks, bytes, count, time_ns (mean per rank), exposed_ns, overlapped_ns
//                     (summed over the ranks' kernels, per rank)}, busiest first; collectives_omitted
// A role is a pipeline rank (its first GPU) for whole-step pipeline runs, else a GPU (at most 16,
// spread evenly). Bubble is time with nothing running before the GPU's last pipeline (non-optimizer)
// op ends; idle is the time with nothing running after it.
nlohmann::json capture_step(const models::OpWorkload& work, const sim::ExecResult& ex);

}  // namespace cs::reports
