// How cs_overlap writes one measured case: a JSON record (kernels/README.md, "cs_overlap").
#pragma once

#include "common/json_writer.h"
#include "overlap/cases.h"

namespace cs::kernels::overlap {

// Writes `c` as one JSON object (the next value of `w`). a2a_bytes: each GPU's all-to-all bytes;
// busbw_factor: (n-1)/n over n > 1 GPUs, else 1 (the local copy's own bandwidth).
void write_case(JsonWriter& w, const Case& c, double a2a_bytes, double busbw_factor);

}  // namespace cs::kernels::overlap
