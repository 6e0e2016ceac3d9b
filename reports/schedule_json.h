// A pipeline schedule as data (`clustersim schedule show --json`), for programs that run the same
// schedule on real GPUs (kernels/torch/pipeline_step.py): each rank's tasks in execution order,
// the passes each task needs and provides (models::task_needs / task_provides), and the stages each
// rank holds. The runner then needs no schedule logic of its own, so the measured run and the
// simulated one execute one order.
#pragma once

#include <nlohmann/json.hpp>

#include "models/pipeline_schedule.h"

namespace cs::reports {

// {"schema_version", "kind", "stages", "micro_batches", "virtual_stages", "ranks", "model_stages",
//  "directions", "micro_batches_per_direction",
//  "rank_stages": [[{"stage", "direction"}, ...] per rank],
//  "tasks": [[{"token", "kind", "chunk": {"micro_batch", "stage", "direction"}, "bwd" (kind
//             "forward_backward" only), "needs": [{"pass", "micro_batch", "stage", "direction"}],
//             "provides": [...]}, ...] per rank],
//  "batches": [[{"before_task", "sends": [...], "recvs": [...]}, ...] per rank]}
// kind: forward | backward | backward_input | backward_weight | forward_backward;
// pass: forward | input_grad | weight_grad.
// "batches" are the point-to-point batches the schedule's source posts (PipelineSchedule::commits:
// one dist.batch_isend_irecv or p2p call each, waited for before the task at index "before_task",
// or after the rank's last task when it equals the task count), in order; every rank's list is
// empty for schedules that record none (ZB1P).
nlohmann::json schedule_json(const models::PipelineSchedule& s);

}  // namespace cs::reports
