// The SM split as a sweep axis (comm_sms, models/sweep_spec.h): the scenario with another size of
// its communication partition, the SMs taken from (or given back to) its compute partition, so
// every point has the same GPU.
#pragma once

#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "models/scenario.h"

namespace cs::models {

// The scenario with `comm_sms` SMs in its communication partition and the rest of the pair's SMs
// in its compute partition. 0 SMs: the streams of the communication partition run on the compute
// partition and share its SMs with the compute kernels, as NCCL's kernels do without a reserved
// partition; the emptied partition stays, with 0 SMs and nothing on it.
// UserError (at the scenario's cluster) for sizes the pair cannot give.
Scenario with_comm_sms(const Scenario& sc, int comm_index, int compute_index, int comm_sms);

// The indices of the communication and compute partitions an SM split moves SMs between: those
// named, else the model workload's own, else the partitions named "comm" and "compute". UserError
// for a name the cluster lacks or for the same partition twice.
std::pair<int, int> sm_split_partitions(const Scenario& sc, const std::string& comm_name,
                                        const std::string& compute_name);

// "0:48:4" (from, to inclusive, step) or "0,8,20" into sizes; UserError naming `what` otherwise.
std::vector<int> parse_int_range(const std::string& text, const std::string& what);

}  // namespace cs::models
